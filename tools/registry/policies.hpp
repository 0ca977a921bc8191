#pragma once
/// \file policies.hpp
/// The losses and penalties the tools know, as compile-time lists, and the bridge from their
/// command-line names to types: `dispatch(losses, penalties, "logistic", "l1", f)` calls
/// `f.template operator()<Logistic, L1>()`. Used by the solver registry and by sparsemc-eval.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <sparsemc/loss/crammer_singer.hpp>
#include <sparsemc/loss/huber_hinge.hpp>
#include <sparsemc/loss/least_squares.hpp>
#include <sparsemc/loss/logistic.hpp>
#include <sparsemc/loss/ovr_squared_hinge.hpp>
#include <sparsemc/loss/squared_hinge.hpp>
#include <sparsemc/penalty/l1.hpp>
#include <sparsemc/penalty/l1l2.hpp>
#include <sparsemc/penalty/l1linf.hpp>
#include <sparsemc/penalty/none.hpp>

namespace sparsemc::tools {

/// A compile-time list of policy types.
template <class... Types>
struct TypeList {};

/// Every loss and penalty the tools know (each default-constructed), in the order --help lists
/// them. A loss added here is registered with every solver family whose concept it meets
/// (registry.hpp), in sparsemc-train, sparsemc-eval and the Python package.
using AllLosses = TypeList<SquaredHinge, HuberHinge, OvrSquaredHinge, CrammerSinger, Logistic, LeastSquares>;
using AllPenalties = TypeList<L1L2, L1, L1Linf, NoPenalty>;

/// The tool names of a type list's policies (their `name` members).
template <class... Types>
std::vector<std::string> names_of(TypeList<Types...>) {
  return {std::string(Types::name)...};
}

/// "a|b|c".
inline std::string join(const std::vector<std::string>& items, std::string_view separator = "|") {
  std::string s;
  for (const auto& x : items) {
    if (!s.empty()) s += separator;
    s += x;
  }
  return s;
}

/// Calls `f.template operator()<Loss, Penalty>()` for the pair of `Losses` × `Penalties` whose
/// names are `loss` and `penalty`; returns false (calling nothing) if there is none.
template <class... Losses, class... Penalties, class F>
bool dispatch(TypeList<Losses...>, TypeList<Penalties...>, std::string_view loss, std::string_view penalty, F&& f) {
  bool found = false;
  auto try_loss = [&]<class Loss>() {
    auto try_penalty = [&]<class Penalty>() {
      if (!found && Loss::name == loss && Penalty::name == penalty) {
        found = true;
        f.template operator()<Loss, Penalty>();
      }
    };
    (try_penalty.template operator()<Penalties>(), ...);
  };
  (try_loss.template operator()<Losses>(), ...);
  return found;
}

/// Whether the loss called `loss` is defined for multilabel class sets.
inline bool loss_supports_multilabel(std::string_view loss) {
  bool supported = false;
  [&]<class... Losses>(TypeList<Losses...>) {
    ((supported = supported || (Losses::name == loss && Losses::supports_multilabel)), ...);
  }(AllLosses{});
  return supported;
}

/// Whether the loss called `loss` is smooth (a SmoothLoss: gradient and curvature).
inline bool loss_is_smooth(std::string_view loss) {
  bool smooth = false;
  [&]<class... Losses>(TypeList<Losses...>) {
    ((smooth = smooth || (Losses::name == loss && SmoothLoss<Losses, double>)), ...);
  }(AllLosses{});
  return smooth;
}

/// The names of the losses defined for multilabel data.
inline std::vector<std::string> multilabel_losses() {
  std::vector<std::string> out;
  for (const auto& name : names_of(AllLosses{}))
    if (loss_supports_multilabel(name)) out.push_back(name);
  return out;
}

}  // namespace sparsemc::tools

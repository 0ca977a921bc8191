// Builds against an installed sparsemc through find_package(sparsemc) and checks that the
// umbrella header compiles and works: a tiny problem, its CSC view, a model, a prediction.
#include <sparsemc/sparsemc.hpp>

#include <cstdio>
#include <vector>

int main() {
  // Three samples, two features, two classes: class = which feature is on.
  Eigen::SparseMatrix<double, Eigen::RowMajor, int> X(3, 2);
  X.insert(0, 0) = 1.0;
  X.insert(1, 1) = 1.0;
  X.insert(2, 0) = 2.0;
  X.makeCompressed();
  const sparsemc::CsrView<double, int> view(X);

  sparsemc::LinearModel<double>::RowMatrix W(2, 2);
  W << 1, -1,
      -1, 1;
  const sparsemc::LinearModel<double> model(W, {}, {10, 20});
  const std::vector<sparsemc::Label> predicted = model.predict(view);
  const bool ok = predicted == std::vector<sparsemc::Label>{10, 20, 10};
  std::printf("downstream: sparsemc %s, predictions %s\n", SPARSEMC_VERSION_STRING, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}

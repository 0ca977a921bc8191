#pragma once
// Generated LIBSVM text and the comparison of two reads, for the tests of the readers that
// cut a file into pieces (test_parallel.cpp: threads; test_mpi.cpp: ranks).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include <sparsemc/data/dataset.hpp>

namespace sparsemc_test {

/// LIBSVM text of `lines` lines: samples of up to 12 features with values of every form the
/// grammar allows, and here and there a blank line, a comment line, a comment after a
/// sample, a qid, CRLF. Multilabel lines have 0 to 3 labels.
inline std::string libsvm_text(int lines, bool multilabel, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> label(1, 9), gap(1, 40), count(0, 12), kind(0, 40);
  std::uniform_real_distribution<double> value(-3, 3);
  std::string text;
  char number[32];
  for (int i = 0; i < lines; ++i) {
    const int k = kind(rng);
    if (k == 0) {
      text += "\n";
      continue;
    }
    if (k == 1) {
      text += "# a comment: 1:2\n";
      continue;
    }
    if (multilabel) {
      for (int l = 0, m = label(rng) % 4; l < m; ++l) text += (l ? "," : "") + std::to_string(label(rng));
    } else {
      text += std::to_string(label(rng));
    }
    if (k == 2) text += " qid:7";
    for (int j = 0, index = 0, m = count(rng); j < m; ++j) {
      index += gap(rng);
      std::snprintf(number, sizeof number, " %d:%.*g", index, 1 + j % 17, value(rng));
      text += number;
    }
    text += k == 3 ? " # note\n" : k == 4 ? "\r\n" : "\n";
  }
  return text;
}

/// X, the labels and the label table of two reads are the same bit for bit.
inline void require_same_data(const sparsemc::Dataset<double>& a, const sparsemc::Dataset<double>& b) {
  REQUIRE(a.n_samples() == b.n_samples());
  REQUIRE(a.n_features() == b.n_features());
  REQUIRE(a.nnz() == b.nnz());
  const auto x = a.csr(), y = b.csr();
  CHECK(std::ranges::equal(x.outer_ptr(), y.outer_ptr()));
  CHECK(std::ranges::equal(x.inner_indices(), y.inner_indices()));
  CHECK(std::ranges::equal(x.values(), y.values()));
  CHECK(a.encoder().labels() == b.encoder().labels());
  REQUIRE(a.labels().size() == b.labels().size());
  bool same_labels = true;
  for (std::size_t i = 0; i < a.labels().size(); ++i)
    same_labels &= std::ranges::equal(a.labels().view()[i], b.labels().view()[i]);
  CHECK(same_labels);
}

}  // namespace sparsemc_test

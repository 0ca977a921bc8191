#!/usr/bin/python3
"""Writes a generated wide multiclass set (d >> n, the sector shape) in LIBSVM format.

Samples have --nnz nonzero features drawn from a Zipf-like law over --d features (a few common
features, a long tail of rare ones, as in text), values |N(0, 1)| scaled to unit row norm. The
labels come from a planted sparse W (on the --support most common features, K columns) plus 10 % label noise,
so the optimum of an l1 fit is sparse but not trivial. Deterministic for a given --seed.

  bench/make_wide.py --out /tmp/wide.svm                    # 2000 x 100000, K = 20
  bench/make_wide.py --out /tmp/wide.t.svm --seed 2         # a test set of the same law
"""
import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the LIBSVM file written")
    ap.add_argument("--n", type=int, default=2000, help="samples (default 2000)")
    ap.add_argument("--d", type=int, default=100000, help="features (default 100000)")
    ap.add_argument("--classes", type=int, default=20, help="classes K (default 20)")
    ap.add_argument("--nnz", type=int, default=60, help="nonzero features per sample (default 60)")
    ap.add_argument("--support", type=int, default=2000, help="nonzero rows of the planted W (default 2000)")
    ap.add_argument("--seed", type=int, default=1, help="the sample seed (default 1; W uses seed 0 always)")
    a = ap.parse_args()

    planted = np.random.default_rng(0)
    order = planted.permutation(a.d)  # which feature is how common: the same for every seed
    popularity = 1.0 / np.arange(1, a.d + 1) ** 1.1
    popularity /= popularity.sum()
    W = np.zeros((a.d, a.classes))  # planted on the most common features, so that every sample sees it
    rows = order[:min(a.support, a.d)]
    W[rows] = planted.standard_normal((rows.size, a.classes))

    rng = np.random.default_rng(a.seed)
    with open(a.out, "w") as f:
        for _ in range(a.n):
            features = np.unique(order[rng.choice(a.d, size=a.nnz, p=popularity)])
            values = np.abs(rng.standard_normal(features.size))
            values /= np.linalg.norm(values)
            scores = values @ W[features]
            label = int(np.argmax(scores)) if rng.random() >= 0.1 else int(rng.integers(a.classes))
            f.write(f"{label + 1} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in zip(features, values)) + "\n")


if __name__ == "__main__":
    main()

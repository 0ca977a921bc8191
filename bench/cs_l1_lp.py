#!/usr/bin/python3
"""The exact optimum of Crammer–Singer + ℓ1, objective (1) of sparsemc's ARCHITECTURE.md,

    F(W) = (1/n) Σ_i c_i max(0, 1 + max_{r≠y_i} s_ir − s_iy_i) + λ Σ_jr |w_jr|,   s_i = Wᵀx_i,

as a linear program (W = P − M with P, M ≥ 0; one slack ξ_i per sample with ξ_i ≥ 0 and
ξ_i ≥ 1 + s_ir − s_iy_i for every r ≠ y_i), solved by HiGHS through scipy.optimize.linprog.
With --multilabel the loss is its multilabel form, the separation ranking loss
(1 + max_{r∉y_i} s_ir − min_{p∈y_i} s_ip)_+ (0 when y_i or its complement is empty): one
constraint per pair of a positive p and a negative r. A reference for the SCD/RDA and FBPD
tests and benchmarks (unit sample weights, no intercept).

    bench/cs_l1_lp.py DATA LAMBDA [--multilabel]   prints the optimal value of (1) (repr)
"""
import sys

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.datasets import load_svmlight_file


def cs_l1_optimum(X, positives, K, lam):
    """positives[i]: the class indices of sample i (one for multiclass), in 0..K−1."""
    X = sp.csr_matrix(X)
    n, d = X.shape
    # Variables: P (d×K), M (d×K), ξ (n). Column of w_jr = j*K + r.
    rows, cols, vals = [], [], []
    b = []
    row = 0
    Xc = X.tocoo()
    per_sample = [[] for _ in range(n)]
    for i, j, v in zip(Xc.row, Xc.col, Xc.data):
        per_sample[i].append((j, v))
    for i in range(n):
        for p in positives[i]:
            for r in range(K):
                if r in positives[i]:
                    continue
                # s_ir − s_ip − ξ_i ≤ −1
                for j, v in per_sample[i]:
                    for k, sign in ((r, 1.0), (p, -1.0)):
                        c = j * K + k
                        rows += [row, row]
                        cols += [c, d * K + c]
                        vals += [sign * v, -sign * v]
                rows.append(row)
                cols.append(2 * d * K + i)
                vals.append(-1.0)
                b.append(-1.0)
                row += 1
    A = sp.csr_matrix((vals, (rows, cols)), shape=(row, 2 * d * K + n))
    cost = np.concatenate([np.full(2 * d * K, lam), np.full(n, 1.0 / n)])
    res = linprog(cost, A_ub=A, b_ub=np.array(b), bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(res.message)
    return res.fun


def main():
    multilabel = "--multilabel" in sys.argv[3:]
    X, y = load_svmlight_file(sys.argv[1], multilabel=multilabel)
    if multilabel:
        classes = sorted({int(c) for labels in y for c in labels})
        positives = [{classes.index(int(c)) for c in labels} for labels in y]
    else:
        classes = np.unique(y)
        positives = [{int(k)} for k in np.searchsorted(classes, y)]
    print(repr(cs_l1_optimum(X, positives, len(classes), float(sys.argv[2]))))


if __name__ == "__main__":
    main()

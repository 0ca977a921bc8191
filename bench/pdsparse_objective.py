#!/usr/bin/env python3
"""F of (1) for a PD-Sparse model file on a multilabel LIBSVM file (separation-ranking hinge)."""
import sys
import numpy as np
from scipy.sparse import csr_matrix

data, model, lam, mu = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
with open(model) as f:
    K = int(f.readline().split()[1])
    labels = [int(t) for t in f.readline().split()[1:]]
    d = int(f.readline().split()[1])
    W = np.zeros((d, K))
    for j in range(d):
        parts = f.readline().split()
        for t in parts[1:]:
            k, v = t.split(":")
            W[j, int(k)] = float(v)
col = {lab: i for i, lab in enumerate(labels)}
rows, cols, vals, Y = [], [], [], []
with open(data) as f:
    for i, line in enumerate(f):
        parts = line.split()
        Y.append([col[int(t)] for t in parts[0].split(",")])
        for t in parts[1:]:
            j, v = t.split(":")
            rows.append(i); cols.append(int(j)); vals.append(float(v))
X = csr_matrix((vals, (rows, cols)), shape=(len(Y), d))
Z = X @ W
loss = 0.0
for i, y in enumerate(Y):
    z = Z[i].copy()
    low = z[y].min()
    z[y] = -np.inf
    loss += max(0.0, 1.0 + z.max() - low)
F = loss / len(Y) + lam * np.abs(W).sum() + 0.5 * mu * (W * W).sum()
print(f"F={F:.10f} nnz={np.count_nonzero(W)}")

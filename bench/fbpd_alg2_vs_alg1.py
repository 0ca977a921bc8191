#!/usr/bin/python3
"""Algorithm 2 vs Algorithm 1 of Chierchia et al. (2015) on mnist10k subsets: distance to the
solution, ||W_t - W*|| / ||W*||, against time (the paper's Fig. 3 b, d, f).

Runs `bench_fbpd --distance-trace` (ℓ1,∞ rows, λ = --lambda; W* = Algorithm 1's solution at a
relative duality gap of --reference-gap, cached in --cache so that a rerun only races the two
algorithms), then prints the time of each algorithm to a distance of 1e-5 and draws the curves
into --plot. With --lp-check, each mnist W* is compared with the solution of the same problem
written as a linear program and solved by HiGHS (scipy.optimize.linprog, interior point with
crossover, 1e-10 tolerances): the distance between the two bounds the reference's own error when the solution
is unique, and shows it is not when the objectives agree but the points do not.

  /usr/bin/python3 bench/fbpd_alg2_vs_alg1.py --bench build/release/bench/bench_fbpd \\
      --cache /tmp/fbpd-ref --plot docs/fbpd-alg2-vs-alg1.png [--sizes dna 3000 5000 10000] \\
      [--lambda 1e-3] [--reference-gap 1e-9] [--time-limit 300] [--steps adaptive,fixed,plain] [--lp-check]

Exits 0 with "SKIPPED: ..." when the shared data folder (../shared/data) is absent.
"""
import argparse
import csv
import os
import subprocess
import sys
from collections import defaultdict


def mnist_subset(path, L):
    """The first L/10 samples of each digit (as bench_fbpd's subsets): CSR X (1-based indices), labels."""
    import bz2
    import numpy as np
    import scipy.sparse as sp
    seen, data, indices, indptr, labels = defaultdict(int), [], [], [0], []
    with bz2.open(path, "rt") as f:
        for line in f:
            fields = line.split()
            if seen[fields[0]] >= L // 10:
                continue
            seen[fields[0]] += 1
            labels.append(int(fields[0]))
            for item in fields[1:]:
                j, v = item.split(":")
                indices.append(int(j) - 1)
                data.append(float(v))
            indptr.append(len(indices))
    n_features = max(indices) + 1
    return sp.csr_matrix((data, indices, indptr), shape=(len(labels), n_features)), np.array(labels)


def lp_check(shared, L, lam, ref_path):
    """Solves min (1/n) Σ ξ_i + λ Σ_j t_j, ξ_i ≥ 1 + s_ik − s_iy_i (k ≠ y_i), ξ ≥ 0, s = XW,
    −t_j ≤ W_jk ≤ t_j — objective (1) with the Crammer–Singer hinge and ℓ1,∞ rows, no intercept —
    with HiGHS and prints its distance to the cached reference W*."""
    import time
    import numpy as np
    import scipy.sparse as sp
    from scipy.optimize import linprog
    X, y = mnist_subset(shared, L)
    with open(ref_path, "rb") as f:
        d, K = np.frombuffer(f.read(16), dtype=np.int64)
        eta, gap, epochs = np.frombuffer(f.read(24), dtype=np.float64)
        W_ref = np.frombuffer(f.read(), dtype=np.float64).reshape(d, K)
    X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))
    n = X.shape[0]
    classes = np.unique(y)
    yi = np.searchsorted(classes, y)
    nW, ns = d * K, n * K
    oW, ot, os_, ox = 0, nW, nW + d, nW + d + ns
    N = ox + n
    C = X.tocoo()
    k = np.tile(np.arange(K), C.nnz)
    A_eq = sp.csr_matrix((np.concatenate([-np.repeat(C.data, K), np.ones(ns)]),
                          (np.concatenate([np.repeat(C.row * K, K) + k, np.arange(ns)]),
                           np.concatenate([oW + np.repeat(C.col * K, K) + k, os_ + np.arange(ns)]))), shape=(ns, N))
    i, k = np.repeat(np.arange(n), K), np.tile(np.arange(K), n)
    i, k = i[k != yi[i]], k[k != yi[i]]
    r, jw = np.arange(len(i)), np.arange(nW)
    ones = np.ones(len(i))
    hinge = sp.csr_matrix((np.concatenate([ones, -ones, -ones]), (np.concatenate([r, r, r]),
                           np.concatenate([os_ + i * K + k, os_ + i * K + yi[i], ox + i]))), shape=(len(i), N))
    box = [sp.csr_matrix((np.concatenate([sign * np.ones(nW), -np.ones(nW)]), (np.concatenate([jw, jw]),
                          np.concatenate([oW + jw, ot + jw // K]))), shape=(nW, N)) for sign in (1.0, -1.0)]
    c = np.zeros(N)
    c[ot:ot + d] = lam
    c[ox:] = 1.0 / n
    start = time.time()
    result = linprog(c, A_ub=sp.vstack([hinge] + box).tocsr(), b_ub=np.concatenate([-ones, np.zeros(2 * nW)]), A_eq=A_eq,
                     b_eq=np.zeros(ns), bounds=[(None, None)] * nW + [(0, None)] * d + [(None, None)] * ns + [(0, None)] * n,
                     method="highs-ipm", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    W = result.x[:nW].reshape(d, K)

    def objective(V):
        S = X @ V
        margins = 1.0 + S - S[np.arange(n), yi][:, None]
        margins[np.arange(n), yi] = 0.0
        return margins.max(axis=1).mean() + lam * np.abs(V).max(axis=1).sum()

    print(f"L = {L}: HiGHS {result.message!r} in {time.time() - start:.0f} s, F = {objective(W):.12g}; "
          f"W* (gap {gap:.1e}, {epochs:.0f} iterations) F = {objective(W_ref):.12g}; "
          f"||W* - W_LP|| / ||W_LP|| = {np.linalg.norm(W_ref - W) / np.linalg.norm(W):.2e}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="the bench_fbpd executable")
    parser.add_argument("--cache", default="/tmp/fbpd-ref", help="folder of the cached reference solutions")
    parser.add_argument("--plot", default=os.path.join(here, "..", "docs", "fbpd-alg2-vs-alg1.png"))
    parser.add_argument("--sizes", nargs="*", default=["3000", "5000", "10000"],
                        help="mnist10k subset sizes L, or dna (the repository's data set)")
    parser.add_argument("--csv", help="reuse this trace instead of running the benchmark")
    parser.add_argument("--lambda", dest="lam", type=float, default=1e-3, help="λ of the ℓ1,∞ penalty")
    parser.add_argument("--reference-gap", type=float, default=1e-9, help="relative duality gap of W*")
    parser.add_argument("--time-limit", type=float, default=300, help="seconds per run of an algorithm")
    parser.add_argument("--steps", default="adaptive,fixed",
                        help="step rules, comma-separated: adaptive (defaults), fixed, plain (the paper's iteration as written)")
    parser.add_argument("--lp-check", action="store_true", help="compare each mnist W* with HiGHS's LP solution")
    args = parser.parse_args()

    shared = os.path.join(here, "..", "..", "shared", "data", "multiclass", "mnist10k_npm.bz2")
    if args.csv is None and not os.path.exists(shared):
        args.sizes = [s for s in args.sizes if s == "dna"]
        if not args.sizes:
            print("SKIPPED: mnist10k_npm.bz2 not found in ../shared/data")
            return 0
    trace = args.csv
    if trace is None:
        os.makedirs(args.cache, exist_ok=True)
        trace = os.path.join(args.cache, "trace.csv")
        subprocess.run([args.bench, "--distance-trace", trace, args.cache, "--lambda", str(args.lam), "--reference-gap",
                        str(args.reference_gap), "--time-limit", str(args.time_limit), "--steps", args.steps] + [str(s) for s in args.sizes], check=True)
    if args.lp_check:
        for L in args.sizes:
            if L.isdigit():
                lp_check(shared, int(L), args.lam, os.path.join(args.cache, f"fbpd-mnist-L{L}-lambda{args.lam:g}.ref"))

    curves = defaultdict(list)
    with open(trace) as f:
        for row in csv.DictReader(f):
            key = (row["L"], int(row["algorithm"]), row["steps"])
            curves[key].append((float(row["seconds"]), float(row["distance"])))
    sizes = sorted({k[0] for k in curves}, key=lambda L: (not L.isdigit(), int(L) if L.isdigit() else 0, L))
    print("| L | steps | Algorithm 1: iterations, s | Algorithm 2: iterations, s | time ratio Alg. 2 / Alg. 1 |")
    print("|---|---|---|---|---|")
    for L in sizes:
        for steps in ("adaptive", "fixed", "plain"):
            if not any((L, algorithm, steps) in curves for algorithm in (1, 2)):
                continue
            cells, times = [], []
            for algorithm in (1, 2):
                points = curves.get((L, algorithm, steps), [])
                reached = points and points[-1][1] <= 1e-5
                cells.append(f"{len(points)}, {points[-1][0]:.2f}" + ("" if reached else f" (distance {points[-1][1]:.1e}: not reached)")
                             if points else "-")
                times.append(points[-1][0] if reached else None)
            ratio = f"{times[1] / times[0]:.2f}" if None not in times else "-"
            print(f"| {L} | {steps} | {cells[0]} | {cells[1]} | {ratio} |")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plot")
        return 0
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 3.6), squeeze=False)
    styles = {(a, steps): (f"C{a - 1}", line) for a in (1, 2) for steps, line in (("adaptive", "-"), ("fixed", ":"), ("plain", "--"))}
    for ax, L in zip(axes[0], sizes):
        for (algorithm, steps), (color, line) in styles.items():
            points = curves.get((L, algorithm, steps))
            if points:
                ax.semilogy([p[0] for p in points], [p[1] for p in points], color=color, linestyle=line,
                            label=f"Algorithm {algorithm}, {steps} steps")
        ax.axhline(1e-5, color="grey", linewidth=0.5)
        ax.set_title(f"mnist10k, L = {L}" if L.isdigit() else L)
        ax.set_xlabel("seconds")
        ax.set_ylabel("||W_t - W*|| / ||W*||")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

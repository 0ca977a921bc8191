#!/usr/bin/env python3
"""The l1-regularised Crammer-Singer problem is a linear program: solve it with cvxopt and
compare the optimal value with the objective sparsemc-train --solver fbpd reports.

Objective (1) with the Crammer-Singer hinge and R = l1, mu = 0, unit costs:
    F(W, b) = (1/n) sum_i max(0, 1 + max_{k != y_i} s_ik - s_iy_i) + lambda ||W||_1,  s_i = W'x_i (+ b).
Its LP dual (Chierchia et al. 2015, eq. (11) with g = lambda||.||_1, whose conjugate is the
indicator of the l-infinity ball) has one variable a_ik >= 0 per sample and rival class:
    maximise   sum_ik a_ik
    subject to sum_{k != y_i} a_ik <= 1/n                      (the simplex of sample i)
               |(X'Z)_jk| <= lambda,  Z_ik = a_ik (k != y_i), Z_iy_i = -sum_k a_ik
               Z'1 = 0                                         (only with an unpenalised intercept)
so it is small (n(K-1) variables) even when d is large; by LP duality its optimum is F*.

Cases: the first rows of data/dna.scale (with and without intercept) and, when the shared data
are present, golub3.train (38 x 7129, 3 classes; scaled by 1e-3, once, in the file handed to both
sides), restricted to its first --golub-genes genes (default 300: the whole matrix needs about
10^5 iterations, minutes; --golub-genes 0 checks it all). SPARSEMC_SHARED_DATA in the environment
overrides --shared. Exit 0 when cvxopt proves every LP optimal and fbpd's objective matches it to
--rtol (default 1e-5), converged; 1 otherwise; 77 (skipped) when cvxopt, numpy or scikit-learn is
missing.

  fbpd_lp_check.py --train build/tools/sparsemc-train --data data --shared ../shared/data --work /tmp/w
"""
import argparse
import json
import os
import subprocess
import sys

try:
    import numpy as np
    from cvxopt import matrix, solvers
    from sklearn.datasets import load_svmlight_file
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIPPED: {e} (Debian packages python3-cvxopt, python3-numpy, python3-sklearn)")
    sys.exit(77)


def lp_optimum(path, lam, intercept):
    """F* of the l1 Crammer-Singer problem on the LIBSVM file `path`, by the dual LP."""
    X, y = load_svmlight_file(path)
    X = X.toarray()
    if intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    classes = np.unique(y)
    c = np.searchsorted(classes, y)
    n, d = X.shape
    K = len(classes)
    pairs = [(i, k) for i in range(n) for k in range(K) if k != c[i]]
    m = len(pairs)
    M = np.zeros((d * K, m))  # (X'Z)_{jk} at row j*K + k
    S = np.zeros((n, m))
    E = np.zeros((K, m))      # Z'1 (intercept)
    for col, (i, k) in enumerate(pairs):
        M[k::K, col] += X[i]
        M[c[i]::K, col] -= X[i]
        S[i, col] = 1.0
        E[k, col] += 1.0
        E[c[i], col] -= 1.0
    if intercept:  # the intercept row of X'Z is unconstrained by lambda: it must vanish instead
        keep = np.ones(d * K, dtype=bool)
        keep[(d - 1) * K:] = False
        M = M[keep]
    G = np.vstack([M, -M, -np.eye(m), S])
    h = np.concatenate([lam * np.ones(2 * M.shape[0]), np.zeros(m), np.full(n, 1.0 / n)])
    # 1e-9 is as tight as cvxopt proves optimal on these LPs (at 1e-12 it stops with status
    # "unknown" and a primal-dual bracket of up to 5e-4 relative); F* to 1e-9 ≪ --rtol.
    solvers.options.update(show_progress=False, abstol=1e-9, reltol=1e-9, feastol=1e-9, maxiters=200)
    args = dict(A=matrix(E[:-1]), b=matrix(np.zeros(K - 1))) if intercept else {}
    sol = solvers.lp(matrix(-np.ones(m)), matrix(G), matrix(h), **args)
    if sol["status"] != "optimal":  # a reference that is not optimal proves nothing: the case fails
        print(f"  cvxopt status {sol['status']} (gap {sol['gap']}, relative gap {sol['relative gap']})")
    return -sol["primal objective"], -sol["dual objective"], sol["status"] == "optimal"


def fbpd_objective(tool, path, lam, intercept, tol, work):
    model = os.path.join(work, "fbpd.model")
    cmd = [tool, path, model, "--solver", "fbpd", "--loss", "crammer-singer", "--penalty", "l1",
           "--lambda", repr(lam), "--tol", repr(tol), "--max-epochs", "2000000", "--json"]
    if intercept:
        cmd.append("--intercept")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", required=True, help="the sparsemc-train executable")
    ap.add_argument("--data", required=True, help="the repository's data/ directory (dna.scale)")
    ap.add_argument("--shared", default="", help="../shared/data (golub3.train); skipped when absent")
    ap.add_argument("--work", required=True, help="a directory for the files written")
    ap.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance on the objective")
    ap.add_argument("--rows", type=int, default=150, help="rows of dna.scale used")
    ap.add_argument("--golub-genes", type=int, default=300, help="first genes of golub3 used (0 = all 7129)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)

    cases = []
    dna = os.path.join(a.work, "dna_head.svm")
    with open(os.path.join(a.data, "dna.scale")) as f, open(dna, "w") as out:
        for _, line in zip(range(a.rows), f):
            out.write(line)
    cases += [("dna head", dna, 2e-3, False), ("dna head", dna, 2e-3, True), ("dna head", dna, 1e-2, False)]
    shared = os.environ.get("SPARSEMC_SHARED_DATA", a.shared)  # the tests' override (tests/skip.hpp)
    golub = os.path.join(shared, "multiclass", "golub3.train") if shared else ""
    if golub and os.path.exists(golub):
        scaled = os.path.join(a.work, "golub3_scaled.svm")
        with open(golub) as f, open(scaled, "w") as out:
            for line in f:
                label, *features = line.split()
                pairs = (feature.split(":") for feature in features)
                kept = (p for p in pairs if a.golub_genes <= 0 or int(p[0]) <= a.golub_genes)
                out.write(label + " " + " ".join(f"{j}:{float(v) * 1e-3:.6g}" for j, v in kept) + "\n")
        genes = f"{a.golub_genes} genes" if a.golub_genes > 0 else "all genes"
        cases += [(f"golub3 {genes}", scaled, 0.05, False)]
    else:
        print("SKIPPED: golub3.train (shared data not found)")

    failures = 0
    for name, path, lam, intercept in cases:
        primal, dual, optimal = lp_optimum(path, lam, intercept)
        # --tol bounds the relative duality gap (F − D)/F ≥ (F − F*)/F: half of rtol guarantees the
        # match, with the intercept as without.
        r = fbpd_objective(a.train, path, lam, intercept, 0.5 * a.rtol, a.work)
        err = abs(r["objective"] - primal) / primal
        ok = optimal and err <= a.rtol and r["status"] == "converged"
        failures += 0 if ok else 1
        print(f"{'ok  ' if ok else 'FAIL'} {name:18s} lambda {lam:<6g} intercept {int(intercept)}  LP {primal:.10g} "
              f"(dual {dual:.10g})  fbpd {r['objective']:.10g}  rel.err {err:.2e}  {r['status']} after "
              f"{r['epochs']} epochs, {r['measure_name']} {r['measure']:.2e}, {r['train_seconds']:.2f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

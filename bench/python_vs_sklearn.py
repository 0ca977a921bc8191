#!/usr/bin/env python3
"""The Python package side by side with scikit-learn, in one Python process, at equal objective.

For each row, scikit-learn fits first (its defaults, except the problem's parameters); its
model's objective (1) is computed with sparsemc.evaluate; then sparsemc fits the same problem
at tol = 1e-2, 1e-3, ... until its objective is at most scikit-learn's, and the time of that
fit is compared with scikit-learn's. Objectives are mapped as in docs/python.md: C Σ loss +
penalty = n C · [(1/n) Σ loss + penalty / (n C)], so alpha (or l2) = 1/(n C).

The last rows are the package's overhead: the wall time of fit() over the solve time
sparsemc-train reports for the same fit (its "train_seconds"; the same objective to 1e-10, or
the row fails), and the growth of the process's peak memory during fit() next to the size of X
— for SparseLinearClassifier (bcd-ls) and for GLSClassifier's staged fit (gls on --rff random
Fourier features, whose model stays in C++).

    bench/python_vs_sklearn.py --smoke            # data/dna.scale, seconds (CI)
    bench/python_vs_sklearn.py --data ../shared/data/multiclass/sector.scale.bz2
"""
import argparse
import bz2
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

import sparsemc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    if path.endswith(".bz2"):
        with bz2.open(path, "rb") as f:
            return load_svmlight_file(f)
    return load_svmlight_file(path)


def timed(fit):
    start = time.perf_counter()
    result = fit()
    return result, time.perf_counter() - start


def ours_to_objective(make, X, y, target, evaluate):
    """The first tol in 1e-2, 1e-3, ... whose fit reaches objective <= target: (seconds, F, tol)."""
    F, seconds, tol = np.inf, np.nan, 1e-2
    while tol >= 1e-9:
        clf, seconds = timed(lambda: make(tol).fit(X, y))
        F = evaluate(clf)
        if F <= target:
            break
        tol /= 10
    return seconds, F, tol


# Each row: its name, the peer at C, the problem (1) it solves (alpha, l2 as functions of n C),
# and the sparsemc estimator of that problem at a tol. No intercept on either side.
ROWS = [
    ("multinomial logistic + l1 vs LogisticRegression(penalty='l1', solver='saga')",
     lambda C: LogisticRegression(penalty="l1", solver="saga", C=C, fit_intercept=False),
     lambda nC: dict(loss="logistic", penalty="l1", alpha=1.0 / nC, l2=0.0),
     lambda p, C, tol: sparsemc.SparseLogisticRegression(penalty="l1", alpha=p["alpha"], fit_intercept=False,
                                                         tol=tol)),
    ("Crammer-Singer vs LinearSVC(multi_class='crammer_singer')",
     lambda C: LinearSVC(multi_class="crammer_singer", C=C, fit_intercept=False),
     lambda nC: dict(loss="crammer-singer", penalty="l1", alpha=0.0, l2=1.0 / nC),
     lambda p, C, tol: sparsemc.CrammerSingerSVC(C=C, tol=tol)),
    ("ridge multinomial logistic vs LogisticRegression(solver='lbfgs')",
     lambda C: LogisticRegression(solver="lbfgs", C=C, fit_intercept=False),
     lambda nC: dict(loss="logistic", penalty="none", alpha=0.0, l2=1.0 / nC),
     lambda p, C, tol: sparsemc.SparseLogisticRegression(penalty="none", l2=p["l2"], fit_intercept=False, tol=tol)),
]


def compare(X, y, C, peer, problem, ours):
    """(sparsemc seconds, peer seconds, F sparsemc, F peer, sparsemc tol) at equal objective."""
    sk, t_sk = timed(lambda: peer(C).fit(X, y))
    params = problem(X.shape[0] * C)
    objective = lambda coef: sparsemc.evaluate(X, y, coef, None, **params)["objective"]
    F_sk = objective(sk.coef_)
    t, F, tol = ours_to_objective(lambda tol: ours(params, C, tol), X, y, F_sk, lambda clf: objective(clf.coef_))
    return t, t_sk, F, F_sk, tol


def row_overhead(X, y, tool, cli_args, estimator):
    """fit() wall time over sparsemc-train's reported solve time for the same fit, and the
    growth of peak memory during fit(). The tool compacts unused feature columns (and BlockCD's
    block order follows the columns), so both sides get X without them: the tool from a file of
    those columns."""
    X = X[:, np.flatnonzero(X.getnnz(axis=0))].tocsr()
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "data")
        dump_svmlight_file(X, y, data, zero_based=False)
        out = subprocess.run([tool, "--quiet", "--json", *cli_args, data, os.path.join(work, "m")],
                             check=True, capture_output=True, text=True)
    cli = json.loads(out.stdout)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    clf, t = timed(lambda: estimator.fit(X, y))
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    if abs(clf.objective_ / cli["objective"] - 1) > 1e-10:
        raise RuntimeError(f"not the same fit: F = {clf.objective_!r} in Python, {cli['objective']!r} in the tool")
    x_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return t, cli["train_seconds"], grown, x_bytes


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=os.path.join(ROOT, "data", "dna.scale"))
    parser.add_argument("--C", type=float, default=1.0, help="the peers' C (alpha or l2 = 1/(n C))")
    parser.add_argument("--lambda", dest="lam", type=float, default=1e-4, help="lambda of the overhead row")
    parser.add_argument("--rff", type=int, default=1000, help="random Fourier features of the staged overhead row")
    parser.add_argument("--tool", default=os.path.join(ROOT, "build", "release", "tools", "sparsemc-train"))
    parser.add_argument("--smoke", action="store_true", help="dna, C = 0.1: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.C = 0.1
    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y = load(args.data)
    X = X.tocsr()
    print(f"# {os.path.basename(args.data)}: {X.shape[0]} samples, {X.shape[1]} features, "
          f"{len(np.unique(y))} classes, C = {args.C}\n")
    print("| row | sparsemc s | scikit-learn s | ratio | F sparsemc | F scikit-learn | sparsemc tol |")
    print("|---|---|---|---|---|---|---|")
    for name, peer, problem, ours in ROWS:
        t, t_sk, F, F_sk, tol = compare(X, y, args.C, peer, problem, ours)
        print(f"| {name} | {t:.3g} | {t_sk:.3g} | {t / t_sk:.2f} | {F:.8g} | {F_sk:.8g} | {tol:g} |", flush=True)
    if not os.path.exists(args.tool):
        print(f"\noverhead rows skipped: no sparsemc-train at {args.tool} (--tool)", file=sys.stderr)
        return
    overheads = [
        ("SparseLinearClassifier (bcd-ls)", ["--lambda", repr(args.lam)],
         sparsemc.SparseLinearClassifier(alpha=args.lam, fit_intercept=False)),
        (f"GLSClassifier (gls, {args.rff} random features)",
         ["--solver", "gls", "--loss", "logistic", "--penalty", "none", "--mu", "1e-4", "--features", f"rff:{args.rff}"],
         sparsemc.GLSClassifier(n_components=args.rff, l2=1e-4, fit_intercept=False)),
    ]
    print()
    for name, cli_args, estimator in overheads:
        t, t_cli, grown, x_bytes = row_overhead(X, y, args.tool, cli_args, estimator)
        print(f"{name}: fit() {t:.3g} s vs sparsemc-train's solve {t_cli:.3g} s: overhead {100 * (t / t_cli - 1):+.1f} %; "
              f"peak memory grew {grown / 2**20:.1f} MiB during fit() (X: {x_bytes / 2**20:.1f} MiB)", flush=True)

if __name__ == "__main__":
    main()

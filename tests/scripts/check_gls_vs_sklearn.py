#!/usr/bin/python3
"""sparsemc's GLS (Agarwal et al. 2014, Algorithm 1, softmax link) against scikit-learn.

Objective (1) with the logistic loss and ridge mu, no intercept,

    F(W) = (1/n) sum_i [log(sum_k exp(s_ik)) - s_iy]  +  (mu/2) ||W||_F^2,   S = XW,

equals scikit-learn's LogisticRegression(C, fit_intercept=False, multinomial) objective
(1/2 ||W||^2 + C sum_i logloss_i) divided by C n when C = 1/(mu n). Both minimise the same
strongly convex function, so the optimal values must agree.

The script runs the test helper `gls_driver` (plain and accelerated, tight tolerance), fits
scikit-learn (lbfgs, tol 1e-12), evaluates (1) with numpy for both models (an independent check
of sparsemc's reported objective) and fails if the optima differ by more than --rtol (default
1e-6) relative. Exit 77 (ctest SKIP_RETURN_CODE: a skip, never a pass) with "SKIPPED: ..." when
numpy or scikit-learn are missing.

    /usr/bin/python3 tests/scripts/check_gls_vs_sklearn.py \
        --driver build/tests/gls_driver --data data/dna.scale
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

# The exit code of a check that cannot run (ctest SKIP_RETURN_CODE).
SKIP = 77


def objective(np, X, y, W, mu):
    """(1) for the logistic loss and ridge mu, with the max shift."""
    S = X @ W
    m = S.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(S - m).sum(axis=1))
    return float(np.mean(lse - S[np.arange(S.shape[0]), y]) + 0.5 * mu * np.sum(W * W))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--driver", required=True, help="path of the gls_driver test helper")
    parser.add_argument("--data", required=True, help="LIBSVM file (e.g. data/dna.scale)")
    parser.add_argument("--mu", type=float, action="append", help="ridge weights (repeatable; default 1e-2 1e-3)")
    parser.add_argument("--rtol", type=float, default=1e-6, help="largest accepted relative difference of the optima")
    args = parser.parse_args()
    try:
        import numpy as np
        from sklearn.datasets import load_svmlight_file
        from sklearn.linear_model import LogisticRegression
    except ImportError as error:  # pragma: no cover - depends on the machine
        print(f"SKIPPED: {error}")
        return SKIP
    if not os.path.exists(args.data):
        print(f"SKIPPED: {args.data} not found")
        return SKIP

    X, labels = load_svmlight_file(args.data)
    X = X.tocsr()
    classes, y = np.unique(labels, return_inverse=True)
    n, d = X.shape
    print(f"data {args.data}: n = {n}, d = {d}, K = {len(classes)}")
    failures = 0
    for mu in args.mu or [1e-2, 1e-3]:
        C = 1.0 / (mu * n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning about multi_class in newer versions
            model = LogisticRegression(C=C, fit_intercept=False, multi_class="multinomial", solver="lbfgs",
                                       tol=1e-12, max_iter=100000)
            model.fit(X, y)
        F_sklearn = objective(np, X, y, model.coef_.T, mu)
        for variant in ([], ["--accelerated"]):
            with tempfile.TemporaryDirectory() as tmp:
                weights = os.path.join(tmp, "W.txt")
                run = subprocess.run([args.driver, "--link", "softmax", "--mu", repr(mu), "--tol", "1e-10",
                                      "--max-epochs", "100000", "--weights-out", weights, *variant, args.data],
                                     check=True, capture_output=True, text=True)
                ours = json.loads(run.stdout)
                W = np.loadtxt(weights, ndmin=2)
            if W.shape != (d, len(classes)):
                print(f"FAIL: sparsemc's W has shape {W.shape}, expected {(d, len(classes))}")
                return 1
            F_numpy = objective(np, X, y, W, mu)
            diff = abs(ours["objective"] - F_sklearn) / abs(F_sklearn)
            eval_diff = abs(ours["objective"] - F_numpy) / abs(F_numpy)
            name = "gls-accelerated" if variant else "gls"
            print(f"mu {mu:8.0e} {name:16s} F {ours['objective']:.17g} sklearn {F_sklearn:.17g} rel {diff:.2e} "
                  f"numpy-eval rel {eval_diff:.2e} epochs {ours['epochs']}")
            if ours["status"] != "converged":
                print(f"FAIL: {name} stopped with status {ours['status']}")
                failures += 1
            if diff > args.rtol:
                print(f"FAIL: optima differ by {diff:.3e} > {args.rtol:g}")
                failures += 1
            if eval_diff > 1e-12:
                print(f"FAIL: the reported objective differs from numpy's evaluation by {eval_diff:.3e}")
                failures += 1
    print("OK" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The mnist10k study of generalized least squares (docs/gls-mnist.md).

Runs `bench_gls --compare DIR --svm` (sparsemc: GLS, FISTA, Table 1, stagewise), then on the same
4000 random Fourier features: scikit-learn's LogisticRegression (lbfgs, multinomial, no intercept,
C = 1/(mu n), tol 1e-6) and LIBLINEAR (-s 4 Crammer-Singer, -s 2 L2-loss SVC primal). Prints
- the time GLS / FISTA need to reach the objective (1) that lbfgs reaches, and the ratios;
- Table 1 (test errors of linear / logistic / calibrated on raw pixels and on the features);
- stagewise test error versus time next to LIBLINEAR's (time, test error) points,
and writes DIR/results.json (and DIR/stagewise.png when matplotlib is present).

    /usr/bin/python3 bench/gls_mnist.py --bench build/bench/bench_gls --work /tmp/gls-mnist

With --objective-only (after one full run has written DIR/train.bin): only the time-to-objective
race on the features, runs interleaved — lbfgs, then `bench_gls --trace` for each of
--solvers (default gls-qn gls fista), repeated --repeats times — and the ratios to lbfgs at
relative accuracies 1e-2 ... 1e-7 and 0 (F_lbfgs itself); each trace is kept as
DIR/race-SOLVER-REPEAT.json. A solver name may carry options after '+': gls-qn+single forms
Sigma in single precision (bench_gls --single-gram), +refreshN rebuilds the preconditioner from
the curvatures every N iterations (--refresh N).
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings


def logistic_objective(np, X, y, W, mu):
    """Objective (1) for the multinomial logistic loss + ridge: mean(logsumexp(XW) - s_y) + mu/2 |W|^2."""
    S = X @ W
    m = S.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(S - m).sum(axis=1))
    return float(np.mean(lse - S[np.arange(len(y)), y]) + 0.5 * mu * np.sum(W * W))


def fit_lbfgs(LogisticRegression, X, y, mu):
    """scikit-learn's multinomial lbfgs at C = 1/(mu n), no intercept, tol 1e-6; (model, seconds)."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression(C=1.0 / (mu * len(y)), fit_intercept=False, multi_class="multinomial",
                                   solver="lbfgs", tol=1e-6, max_iter=100000).fit(X, y)
    return model, time.perf_counter() - start


def objective_race(args, np, LogisticRegression):
    """lbfgs and sparsemc solvers, alternating, on DIR/train.bin: time to lbfgs's objective."""
    y = np.fromfile(os.path.join(args.work, "train.labels"), dtype=np.int32)
    n = len(y)
    X = np.fromfile(os.path.join(args.work, "train.bin")).reshape(n, -1)

    def objective(W):
        return logistic_objective(np, X, y, W, args.mu)

    for rep in range(args.repeats):
        lbfgs, t_lbfgs = fit_lbfgs(LogisticRegression, X, y, args.mu)
        F = objective(lbfgs.coef_.T)
        print(f"[{rep}] lbfgs (tol 1e-6): F = {F:.10f} in {t_lbfgs:.1f} s ({lbfgs.n_iter_[0]} iterations)", flush=True)
        for solver in args.solvers:
            name, *options = solver.split("+")  # e.g. gls-qn+single+refresh40
            flags = []
            for o in options:
                flags += ["--single-gram"] if o == "single" else ["--refresh", o[len("refresh"):]]
            out = subprocess.run([args.bench, "--trace", args.work, "--solver", name, "--mu", repr(args.mu),
                                  "--limit", repr(args.fista_limit)] + flags, check=True, capture_output=True, text=True)
            r = json.loads(out.stdout)
            with open(os.path.join(args.work, f"race-{solver}-{rep}.json"), "w") as f:
                json.dump({"lbfgs": {"objective": F, "seconds": t_lbfgs}, **r}, f)
            tr = r["trace"]
            cells = []
            for rel in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 0.0):
                t = next((t for t, f in tr if f <= F * (1 + rel)), None)
                cells.append(f"{rel:g}: " + (f"{t:.1f} s = {t / t_lbfgs:.3f}x" if t is not None else "not reached"))
            setup = tr[0][0] if tr else float("nan")
            print(f"[{rep}] {solver:7s} ({r['epochs']} iterations, first after {setup:.1f} s, final F "
                  f"{r['objective']:.10f}): time to (1 + rel) F_lbfgs — " + "; ".join(cells), flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="path of bench_gls")
    parser.add_argument("--work", required=True, help="work directory (features are written there)")
    parser.add_argument("--mu", type=float, default=1e-4)
    parser.add_argument("--fista-limit", type=float, default=120.0, help="time budget of each sparsemc run (s)")
    parser.add_argument("--reuse", action="store_true", help="reuse DIR/bench.jsonl from a previous run")
    parser.add_argument("--objective-only", action="store_true", help="only the time-to-objective race")
    parser.add_argument("--solvers", nargs="+", default=["gls-qn", "gls", "fista"],
                        help="gls-qn, gls, gls-plain, fista; '+single' forms Sigma in single precision, "
                             "'+refreshN' rebuilds the preconditioner every N iterations")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--stagewise-only", action="store_true",
                        help="only stagewise and LIBLINEAR (test error versus time, the plot); no lbfgs, GLS, Table 1")
    args = parser.parse_args()
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    if args.objective_only:
        return objective_race(args, np, LogisticRegression)

    os.makedirs(args.work, exist_ok=True)
    lines_path = os.path.join(args.work, "bench.jsonl")
    if not args.reuse:
        with open(lines_path, "w") as out:
            subprocess.run([args.bench, "--compare", args.work, "--svm", "--mu", repr(args.mu),
                            "--fista-limit", repr(args.fista_limit)] + (["--stagewise-only"] if args.stagewise_only else []),
                           check=True, stdout=out)
    runs = [json.loads(line) for line in open(lines_path) if line.strip()]
    setup = next(r for r in runs if r["run"] == "setup")
    n, D = setup["n_train"], setup["rff"]
    X = np.fromfile(os.path.join(args.work, "train.bin")).reshape(n, D)
    y = np.fromfile(os.path.join(args.work, "train.labels"), dtype=np.int32)
    Xt = np.fromfile(os.path.join(args.work, "test.bin")).reshape(-1, D)
    yt = np.fromfile(os.path.join(args.work, "test.labels"), dtype=np.int32)

    def objective(W):
        return logistic_objective(np, X, y, W, args.mu)

    print(f"setup: n_train {n}, n_test {len(yt)}, {D} random Fourier features (sigma {setup['sigma']:.4g}), mu {args.mu:g}")
    results = {"setup": setup}
    if not args.stagewise_only:
        lbfgs, t_lbfgs = fit_lbfgs(LogisticRegression, X, y, args.mu)
        F_lbfgs = objective(lbfgs.coef_.T)
        err_lbfgs = float(np.mean(lbfgs.predict(Xt) != yt))
        print(f"sklearn lbfgs (tol 1e-6): F = {F_lbfgs:.10f} in {t_lbfgs:.2f} s ({lbfgs.n_iter_[0]} iterations), "
              f"test error {err_lbfgs:.4f}")
        results["lbfgs"] = {"objective": F_lbfgs, "seconds": t_lbfgs, "test_error": err_lbfgs}
    for r in runs:
        if r["run"] in ("gls", "gls-plain", "fista"):
            reach = next((t for t, F in r["trace"] if F <= F_lbfgs), None)
            results[r["run"]] = {"seconds_to_lbfgs_objective": reach, "final_objective": r["objective"],
                                 "epochs": r["epochs"], "status": r["status"]}
            last = r["trace"][-1][0] if r["trace"] else float("nan")
            if reach is None:
                print(f"{r['run']:10s}: did not reach lbfgs's F within {last:.1f} s (final F {r['objective']:.10f}, "
                      f"{r['epochs']} iterations)")
            else:
                print(f"{r['run']:10s}: reaches lbfgs's F after {reach:.2f} s = {reach / t_lbfgs:.3f} x lbfgs "
                      f"(final F {r['objective']:.10f}, {r['epochs']} iterations, {r['status']})")
    gls, fista = results.get("gls", {}), results.get("fista", {})
    if gls.get("seconds_to_lbfgs_objective") is not None:
        t = gls["seconds_to_lbfgs_objective"]
        f = fista.get("seconds_to_lbfgs_objective")
        fista_trace = next(r for r in runs if r["run"] == "fista")["trace"]
        bound = f if f is not None else (fista_trace[-1][0] if fista_trace else float("nan"))
        print(f"ratio gls / lbfgs = {t / t_lbfgs:.3f};  gls / fista {'=' if f is not None else '<='} {t / bound:.3f}")

    print("\nTable 1 (test error):")
    print("| features | linear | logistic | calibrated |")
    print("|---|---|---|---|")
    for r in runs:
        if r["run"] == "table1":
            print(f"| {r['features']} (d = {r['d']}) | {100 * r['linear']:.2f}% | {100 * r['logistic']:.2f}% | "
                  f"{100 * r['calibrated']:.2f}% |")
    results["table1"] = [r for r in runs if r["run"] == "table1"]

    liblinear = []
    for s in (4, 2):
        model = os.path.join(args.work, f"liblinear-s{s}.model")
        C = 1.0 / (args.mu * n)
        start = time.perf_counter()
        subprocess.run(["liblinear-train", "-q", "-s", str(s), "-c", repr(C), os.path.join(args.work, "train.svm"), model],
                       check=True)
        t = time.perf_counter() - start
        out = subprocess.run(["liblinear-predict", os.path.join(args.work, "test.svm"), model,
                              os.path.join(args.work, f"liblinear-s{s}.out")], check=True, capture_output=True, text=True)
        acc = float(out.stdout.split("=")[1].split("%")[0]) / 100
        liblinear.append({"s": s, "C": C, "seconds": t, "test_error": 1 - acc})
        print(f"\nliblinear -s {s} -c {C:g}: {t:.2f} s (file reading included), test error {1 - acc:.4f}")
    results["liblinear"] = liblinear
    print("\nstagewise (identity link, fresh random-feature blocks) test error over time:")
    for r in runs:
        if r["run"] == "stagewise":
            name = "stagewise-cal" if r["calibrate"] else "stagewise"
            print(f"  {name} (block {r['block']}): " + ", ".join(f"{t:.1f}s {100 * e:.2f}%" for t, e in r["trace"]))
    results["stagewise"] = [r for r in runs if r["run"] == "stagewise"]
    with open(os.path.join(args.work, "results.json"), "w") as out:
        json.dump(results, out, indent=1)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 4))
        for r in results["stagewise"]:
            ax.plot([t for t, _ in r["trace"]], [100 * e for _, e in r["trace"]], marker="o",
                    label="stagewise-cal" if r["calibrate"] else "stagewise")
        for l in liblinear:
            ax.scatter([l["seconds"]], [100 * l["test_error"]], marker="x", s=60, label=f"liblinear -s {l['s']}")
        ax.set_xscale("log")
        ax.set_xlabel("seconds")
        ax.set_ylabel("test error (%)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(args.work, "stagewise.png"), dpi=120)
    except ImportError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

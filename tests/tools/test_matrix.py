#!/usr/bin/python3
"""The optimality matrix: every (solver, loss, penalty) the registry accepts — listed by
`sparsemc-train --list-solvers`, the table the tool dispatches on, so a new combination is
tested without anyone remembering to — × mu = 0 / mu > 0 × intercept off/on (where accepted),
on a small generated wide problem (d >> n) and a tall one (n >> d), at DEFAULT options.

Each default fit is checked by code of its own, not by the library's:
  - objective (1) recomputed with numpy from the saved model file (common.objective) agrees
    with the reported one;
  - status converged and relative_gap <= 1e-3 (the default tol), where a certificate exists
    (no penalty with mu = 0 has none unless F* = 0: converged then requires F = 0, and a
    numerical failure, exit 3, is an accepted outcome of a problem without a minimiser);
  - against a second solver's optimum: a reference fit at --tol 1e-9 by another solver of the
    same problem (fista for smooth losses, fbpd for Crammer-Singer) gives F_ref and its
    certified lower bound F_ref - gap_ref <= F*; then the default fit's reported gap must be
    >= F - F_ref (the gap bounds F - F*) and (F - (F_ref - gap_ref)) / |F_ref| <= 1e-3.
Solvers of other problems (the table's "certifies": false — fbpd-epi, gls-cal, stagewise) are
listed as not in the matrix with what they stop on; a combination a solver refuses by a
requirement of its own (exit 1, e.g. fcbcfw's mu > 0) is listed with the tool's message.
Known shortfalls of a solver at its defaults are reported as expected failures (XFAIL, with
the reason; they do not fail the test, an unexpected pass says so): scd-rda (O(1/sqrt t), and
the Crammer-Singer subgradient dual point is not tight; its step diverged for the squared
losses, which the tools therefore do not register for it: docs/scd.md) and BlockCD's default
budget of 1000 epochs on some mu = 0 problems (docs/bcd.md). A final line counts combinations,
skips and expected failures.
"""

import math
import os
import random

from common import SKIP, Checks, objective, parse_args, read_libsvm, read_native_model, run_json, sanitizer_run

a = parse_args()
t = Checks()
if sanitizer_run():
    print("skipped: the optimality matrix runs in the Release build (hundreds of fits; no memory check in it)")
    raise SystemExit(SKIP)
try:
    import numpy  # noqa: F401  (common.objective needs numpy and scipy)
    import scipy  # noqa: F401
except ImportError:
    print("skipped: numpy/scipy missing")
    raise SystemExit(SKIP)

TOL = 1e-3            # every solver's default tol: relative duality gap of (1)
AGREE = 1e-3          # (F - F*)/F*: what a default fit promises
LAMBDA = 0.02         # penalty weight of the matrix
MU = 0.01             # ridge weight of the mu > 0 half


def write_problem(path, n, d, K, density, seed):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for i in range(n):
            feats = [(j + 1, rng.uniform(-1, 1)) for j in range(d) if rng.random() < density]
            f.write(f"{i % K + 1} " + " ".join(f"{j}:{v:.6g}" for j, v in feats) + "\n")


problems = {"wide": os.path.join(a.work, "wide.svm"), "tall": os.path.join(a.work, "tall.svm")}
write_problem(problems["wide"], 24, 160, 3, 0.15, 1)
write_problem(problems["tall"], 240, 8, 3, 0.6, 2)
data = {name: read_libsvm(path) for name, path in problems.items()}

rc, listing, err = run_json([a.train, "--list-solvers"])
if not t.check(rc == 0 and isinstance(listing, dict) and "solvers" in listing, "--list-solvers prints the table", err):
    t.done()


def fit(problem, solver, loss, penalty, mu, intercept, extra=()):
    model = os.path.join(a.work, f"{problem}-{solver}-{loss}-{penalty}-{mu}-{int(intercept)}-{len(extra)}.model")
    cmd = [a.train, "--json", "--solver", solver, "--loss", loss, "--penalty", penalty, "--lambda", LAMBDA,
           "--mu", mu, *(["--intercept"] if intercept else []), *extra, problems[problem], model]
    rc, obj, err = run_json(cmd)
    return rc, obj, err, model, " ".join(map(str, cmd))


def reference_solver(loss):
    return "fbpd" if loss == "crammer-singer" else "fista"


references = {}


def reference(problem, loss, penalty, mu, intercept, who):
    """F_ref and its certified lower bound from a tight fit by another solver (None if none)."""
    key = (problem, loss, penalty, mu, intercept)
    if key not in references:
        ref = reference_solver(loss)
        if ref == who:
            fcbcfw_fits = mu > 0 and penalty in ("l1", "none") and not intercept
            ref = "bcd-ls" if loss != "crammer-singer" else ("fcbcfw" if fcbcfw_fits else who)
        rc, obj, err, _, cmd = fit(problem, ref, loss, penalty, mu, intercept,
                                   ["--tol", "1e-8", "--max-epochs", "1000000"])
        ok = rc == 0 and obj and obj["status"] == "converged"
        references[key] = (obj["objective"], obj["objective"] - obj["duality_gap"]) if ok else None
    return references[key]


def known_shortfall(solver, mu, status):
    """Why a default fit of this solver is expected not to certify (None: it must)."""
    if solver == "scd-rda":
        return "RDA converges at O(1/sqrt t) and certifies few problems at defaults (docs/scd.md)"
    if solver in ("bcd-ls", "bcd-cst") and mu == 0.0 and status == "max_iter":
        return "BlockCD's default 1000 epochs end before the certificate on some mu = 0 problems (docs/bcd.md)"
    return None


combos = skipped = 0
not_in_matrix = []
refusals = set()
for spec in listing["solvers"]:
    name = spec["name"]
    if not spec["certifies"]:
        not_in_matrix.append(f"{name} (stops on: {spec.get('stop', '?')})")
        continue
    for loss in spec["losses"]:
        for penalty in spec["penalties"]:
            for mu in (0.0, MU):
                for intercept in ((False, True) if spec["intercept"] else (False,)):
                    for problem in ("wide", "tall"):
                        rc, obj, err, model, cmd = fit(problem, name, loss, penalty, mu, intercept)
                        if rc == 1:  # a requirement of the solver beyond loss x penalty (e.g. mu > 0)
                            skipped += 1
                            refusals.add(err.strip().splitlines()[-1] if err.strip() else cmd)
                            continue
                        combos += 1
                        where = cmd
                        no_minimiser = penalty == "none" and mu == 0.0 and rc == 3
                        if no_minimiser or not t.check(rc == 0 and obj is not None, f"{where}: exits 0 with JSON",
                                                       err[-500:]):
                            continue
                        labels, X = data[problem]
                        F_numpy = objective(read_native_model(model), labels, X, loss, penalty, LAMBDA, mu)[0]
                        t.check(abs(F_numpy - obj["objective"]) <= 1e-9 * max(1.0, abs(F_numpy)),
                                f"{where}: reported F = numpy F of the saved model", f"{obj['objective']} vs {F_numpy}")
                        certifiable = not (penalty == "none" and mu == 0.0)
                        if not certifiable:
                            t.check(obj["status"] != "converged" or abs(F_numpy) <= 1e-9,
                                    f"{where}: no certificate, 'converged' only at F = 0", f"{obj['status']} F {F_numpy}")
                            continue
                        gap, rel = obj.get("duality_gap"), obj.get("relative_gap")
                        t.check(obj.get("gap_evaluations", 0) >= 1
                                and 0 <= obj.get("gap_seconds", -1) <= obj["train_seconds"],
                                f"{where}: the certificate's evaluations counted and timed",
                                f"{obj.get('gap_evaluations')} in {obj.get('gap_seconds')} s")
                        certified = obj["status"] == "converged" and isinstance(rel, (int, float)) and rel <= TOL
                        shortfall = known_shortfall(name, mu, obj["status"])
                        if shortfall:
                            t.xfail(certified, f"{where}: converged at defaults", shortfall,
                                    f"status {obj['status']} relative_gap {rel}")
                            if not certified:
                                continue
                        else:
                            t.check(obj["status"] == "converged", f"{where}: converged at defaults",
                                    f"status {obj['status']} relative_gap {rel}")
                            if not t.check(isinstance(rel, (int, float)) and rel <= TOL,
                                           f"{where}: relative gap <= tol", str(rel)):
                                continue
                        ref = reference(problem, loss, penalty, mu, intercept, name)
                        if not t.check(ref is not None, f"{where}: the reference fit converged at tol 1e-8"):
                            continue
                        F_ref, lower = ref
                        t.check(gap >= F_numpy - F_ref - 1e-9 * abs(F_ref), f"{where}: gap bounds F - F*",
                                f"gap {gap} F {F_numpy} F_ref {F_ref}")
                        t.check((F_numpy - lower) / max(abs(F_ref), 1e-12) <= AGREE + 1e-9,
                                f"{where}: within 1e-3 of the other solver's optimum",
                                f"F {F_numpy} lower bound {lower}")

print(f"matrix: {combos} combinations fitted, {skipped} refused by a solver's own requirement")
for line in not_in_matrix:
    print(f"not in the matrix: {line}")
for line in sorted(refusals):
    print(f"refused: {line}")
t.done()

#!/usr/bin/python3
"""--json output of the three tools: one valid JSON object on stdout with every promised field,
the certificate included: duality_gap and relative_gap for every status, status converged only
with relative_gap <= tol, and a run cut short reporting how far it is from certified."""

import math
import os

from common import Checks, check_certificate, parse_args, require_files, run_json

a = parse_args()
t = Checks()
train_file = os.path.join(a.data, "dna.scale")
test_file = os.path.join(a.data, "dna.scale.t")
require_files(train_file, test_file)
model = os.path.join(a.work, "json.model")

TRAIN_FIELDS = {"solver": str, "loss": str, "penalty": str, "lambda": float, "mu": float, "status": str,
                "epochs": int, "objective": float, "duality_gap": float, "relative_gap": float, "tol": float,
                "measure_name": str, "measure": float, "nnz": int, "nnz_rows": int, "train_seconds": float,
                "gap_evaluations": int, "gap_seconds": float}
STATUSES = {"converged", "max_iter", "time_limit", "stopped_by_callback", "numerical_issue"}


def check_fields(obj, fields, where):
    if not t.check(isinstance(obj, dict), f"{where}: one JSON object", repr(obj)[:300]):
        return
    for key, kind in fields.items():
        ok = key in obj and (isinstance(obj[key], (int, float)) if kind is float else isinstance(obj[key], kind))
        t.check(ok, f"{where}: field {key} ({kind.__name__})", repr(obj.get(key)))


# train --json, with and without --test
rc, obj, err = run_json([a.train, "--json", "--loss", "logistic", "--lambda", "0.01", "--tol", "1e-4",
                         train_file, model])
t.check(rc == 0, "train --json exits 0", err)
check_fields(obj, TRAIN_FIELDS, "train --json")
if obj:
    t.check("test_accuracy" not in obj, "train --json: no test_accuracy without --test")
    # A plain l1l2 logistic fit at --tol 1e-4 must be certified, not merely stopped.
    t.check(obj["status"] == "converged", "train --json: converged at --tol 1e-4", obj["status"])
    t.check(obj["tol"] == 1e-4, "train --json: the tol in effect", str(obj["tol"]))
    check_certificate(t, obj, "train --json", 1e-4)
    t.check(obj["loss"] == "logistic" and obj["penalty"] == "l1l2" and obj["lambda"] == 0.01 and obj["mu"] == 0,
            "train --json: echoes the problem", str(obj))
    t.check(obj["measure_name"] != "" and math.isfinite(obj["measure"]), "train --json: a stopping measure")
    t.check(0 < obj["nnz_rows"] <= 180 and obj["nnz_rows"] * 3 >= obj["nnz"] >= obj["nnz_rows"],
            "train --json: nnz and nnz_rows consistent", str(obj))

rc, obj, err = run_json([a.train, "--json", "--test", test_file, "--tol", "1e-4", train_file, model])
t.check(rc == 0, "train --json --test exits 0", err)
check_fields(obj, dict(TRAIN_FIELDS, test_accuracy=float), "train --json --test")
if obj:
    t.check(0.5 < obj["test_accuracy"] <= 1.0, "train --json --test: a plausible accuracy", str(obj["test_accuracy"]))
    t.check(obj["status"] == "converged", "train --json --test: converged at --tol 1e-4",
            f"status {obj['status']} relative_gap {obj.get('relative_gap')}")
    check_certificate(t, obj, "train --json --test", 1e-4)

# Defaults (no --tol): the default tol 1e-3 is in effect and the fit is certified at it.
rc, obj, err = run_json([a.train, "--json", train_file, model])
t.check(rc == 0, "train --json at defaults exits 0", err)
if obj:
    t.check(obj["status"] == "converged" and obj["tol"] == 1e-3, "train --json: converged at the default tol 1e-3",
            f"status {obj['status']} tol {obj['tol']}")
    check_certificate(t, obj, "train --json at defaults")

# Cut short by --max-epochs 1: status max_iter with the distance to the certificate, > 0.
rc, obj, err = run_json([a.train, "--json", "--max-epochs", "1", "--tol", "1e-8", train_file, model])
t.check(rc == 0, "train --json --max-epochs 1 exits 0", err)
check_fields(obj, TRAIN_FIELDS, "train --json --max-epochs 1")
if obj:
    t.check(obj["status"] == "max_iter", "--max-epochs 1: status max_iter", obj["status"])
    rel = check_certificate(t, obj, "--max-epochs 1", 1e-8)
    t.check(rel is not None and rel > 1e-8, "--max-epochs 1: relative_gap > tol (how far from certified)", str(rel))

# No penalty and mu = 0: no useful certificate (the dual is bounded by D(0) only: relative gap
# about 1, or null with a gap_note when infinite), and never "converged".
rc, obj, err = run_json([a.train, "--json", "--loss", "logistic", "--penalty", "none", "--mu", "0",
                         "--max-epochs", "3", train_file, model])
t.check(rc == 0, "train --json --penalty none --mu 0 exits 0", err)
if obj:
    t.check(obj["status"] != "converged", "--penalty none --mu 0: never converged", obj["status"])
    t.check((obj["relative_gap"] is None and "gap_note" in obj) or obj["relative_gap"] > 0.5,
            "--penalty none --mu 0: no certificate reported", str(obj))

# The old bug (issue 15): ridge-only logistic returned W = 0 as "converged after 0 epochs".
rc, obj, err = run_json([a.train, "--json", "--loss", "logistic", "--penalty", "none", "--mu", "1e-3", train_file,
                         model])
t.check(rc == 0, "train --json logistic + ridge exits 0", err)
if obj:
    t.check(obj["nnz"] > 0 and obj["epochs"] > 0, "logistic + ridge (mu 1e-3): a nonzero model", str(obj))
    t.check(obj["status"] == "converged", "logistic + ridge (mu 1e-3): converged", str(obj))
    check_certificate(t, obj, "logistic + ridge")

# --path: per-lambda objects, decreasing lambda, warm starts, first point at lambda_max has W = 0
rc, obj, err = run_json([a.train, "--json", "--path", "4:0.05", "--tol", "1e-4", "--test", test_file,
                         train_file, model])
t.check(rc == 0, "train --json --path exits 0", err)
check_fields(obj, dict(TRAIN_FIELDS, lambda_max=float), "train --json --path")
if obj and isinstance(obj.get("path"), list):
    path = obj["path"]
    t.check(len(path) == 4, "--path 4: four points", str(len(path)))
    for p in path:
        check_fields(p, TRAIN_FIELDS, "--path point")
        t.check("test_accuracy" not in p, "--path point: not scored on --test (only the saved model is)", str(p))
        t.check(p.get("status") == "converged", f"--path point lambda {p.get('lambda')}: converged", p.get("status"))
        check_certificate(t, p, f"--path point lambda {p.get('lambda')}", 1e-4)
    lams = [p["lambda"] for p in path]
    t.check(all(x > y for x, y in zip(lams, lams[1:])), "--path: lambda decreases", str(lams))
    t.check(abs(lams[0] - obj["lambda_max"]) <= 1e-12 * obj["lambda_max"], "--path starts at lambda_max")
    t.check(abs(lams[-1] - 0.05 * obj["lambda_max"]) <= 1e-9 * obj["lambda_max"], "--path ends at lambda_max*RATIO")
    t.check(path[0]["nnz_rows"] == 0, "--path: W = 0 at lambda_max", str(path[0]))
    t.check(path[-1]["nnz_rows"] > 0, "--path: rows enter as lambda decreases")
    t.check(obj["lambda"] == lams[-1], "--path: the top-level object is the last point")
    t.check(isinstance(obj.get("test_accuracy"), float), "--path: the saved (last) model scored on --test", str(obj))
else:
    t.check(False, "train --json --path has a 'path' array", repr(obj)[:300])

# --heldout: PD-Sparse's early stop; the best epoch's model is saved and scored on the held-out set
rc, obj, err = run_json([a.train, "--json", "--solver", "fcbcfw", "--loss", "crammer-singer", "--penalty", "l1",
                         "--mu", "1e-3", "--tol", "1e-9", "--heldout", test_file, "--patience", "2", "--test", test_file,
                         train_file, model])
t.check(rc == 0, "train --json --heldout exits 0", err)
check_fields(obj, dict(TRAIN_FIELDS, heldout_accuracy=float, heldout_samples=int, test_accuracy=float),
             "train --json --heldout")
if obj:
    t.check(obj["status"] == "stopped_by_callback", "--heldout: the early stop ends the solve", obj["status"])
    rel = check_certificate(t, obj, "--heldout")
    t.check(rel is not None and rel > 1e-9, "--heldout: the early-stopped model's distance to the certificate",
            str(rel))
    t.check(obj["heldout_accuracy"] == obj["test_accuracy"] and obj["heldout_samples"] == 1186,
            "--heldout: the saved model is the one scored (held-out = test file here)", str(obj))
    rc, pred, err = run_json([a.predict, "--json", test_file, model])
    t.check(rc == 0 and pred and pred["accuracy"] == obj["heldout_accuracy"],
            "--heldout: the model file predicts with the best epoch's accuracy", str(pred))

# --lambda-grid: PD-Sparse's choice of lambda, the best held-out score (ties: fewer nonzero weights)
grid = [1e-4, 1e-3, 1e-1]
rc, obj, err = run_json([a.train, "--json", "--solver", "fcbcfw", "--loss", "crammer-singer", "--penalty", "l1",
                         "--mu", "1e-3", "--heldout", test_file, "--lambda-grid", ",".join(map(str, grid)),
                         "--test", test_file, train_file, model])
t.check(rc == 0, "train --json --lambda-grid exits 0", err)
check_fields(obj, dict(TRAIN_FIELDS, heldout_accuracy=float, heldout_samples=int, test_accuracy=float,
                       grid=list), "train --json --lambda-grid")
if obj and isinstance(obj.get("grid"), list):
    points = obj["grid"]
    t.check([p["lambda"] for p in points] == sorted(grid, reverse=True), "--lambda-grid: one point per lambda, largest first",
            str(points))
    for p in points:
        check_fields(p, dict(TRAIN_FIELDS, heldout_accuracy=float, heldout_samples=int), "--lambda-grid point")
        check_certificate(t, p, f"--lambda-grid point lambda {p.get('lambda')}")
    best = max(points, key=lambda p: (p["heldout_accuracy"], -p["nnz"]))
    t.check(obj["lambda"] == best["lambda"] and obj["nnz"] == best["nnz"] and
            obj["heldout_accuracy"] == best["heldout_accuracy"],
            "--lambda-grid: the saved model is the best held-out point", str(obj))
    rc, pred, err = run_json([a.predict, "--json", test_file, model])
    t.check(rc == 0 and pred and pred["accuracy"] == obj["heldout_accuracy"],
            "--lambda-grid: the model file predicts with the chosen point's held-out accuracy", str(pred))

# predict --json
rc, obj, err = run_json([a.predict, "--json", test_file, model])
t.check(rc == 0, "predict --json exits 0", err)
check_fields(obj, {"samples": int, "classes": int, "multilabel": bool, "top_k": int, "accuracy": float,
                   "correct": int, "top_k_accuracy": float, "predict_seconds": float}, "predict --json")
if obj:
    t.check(obj["samples"] == 1186 and obj["classes"] == 3, "predict --json: dna.scale.t shape", str(obj))
    t.check(abs(obj["accuracy"] - obj["correct"] / obj["samples"]) < 1e-15, "predict --json: accuracy = correct/n")

# eval --json
rc, obj, err = run_json([a.eval, "--json", train_file, model])
t.check(rc == 0, "eval --json exits 0", err)
check_fields(obj, {"objective": float, "loss_part": float, "penalty_part": float, "duality_gap": float,
                   "relative_gap": float, "loss": str, "penalty": str, "lambda": float, "mu": float, "samples": int,
                   "nnz": int, "nnz_rows": int}, "eval --json")
if obj:
    t.check(abs(obj["objective"] - obj["loss_part"] - obj["penalty_part"]) <= 1e-14 * obj["objective"],
            "eval --json: objective = loss part + penalty part")
    check_certificate(t, obj, "eval --json")

# eval certifies the model train certified: the same gap, from the saved file.
rc, trained, err = run_json([a.train, "--json", "--loss", "logistic", "--lambda", "0.01", "--tol", "1e-5",
                             train_file, model])
rc2, evaluated, err2 = run_json([a.eval, "--json", train_file, model])
if t.check(rc == 0 and rc2 == 0 and trained and evaluated, "train then eval --json exit 0", err + err2):
    t.check(abs(evaluated["duality_gap"] - trained["duality_gap"]) <= 1e-8 * trained["objective"]
            and evaluated["relative_gap"] <= 1e-5 * (1 + 1e-6) + 1e-12,
            "eval --json: the trained model's certificate, recomputed from the file",
            f"train {trained['duality_gap']} eval {evaluated['duality_gap']}")

t.done()

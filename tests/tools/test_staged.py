#!/usr/bin/python3
"""Staged models through the tools: gls-cal, stagewise and gls on random Fourier features.

train → predict → eval round trips on data/dna.scale(.t): the model file is a staged model;
sparsemc-predict's accuracy equals train's --test accuracy; sparsemc-eval on the saved model
equals train's reported objective; a stagewise model on sampled original features predicts
argmax Σ_t (X W_t + b_t), recomputed with numpy from the stages embedded in the file; usage
errors name the option.
"""

import os
import re
import sys

from common import require_files, SKIP, Checks, parse_args, read_libsvm, read_native_model, run, run_json

try:
    import numpy as np
except ImportError:
    print("SKIPPED: numpy is not installed")
    sys.exit(SKIP)

a = parse_args()
t = Checks()
train_file = os.path.join(a.data, "dna.scale")
test_file = os.path.join(a.data, "dna.scale.t")
require_files(train_file, test_file)
W = a.work
test_labels, X_test = read_libsvm(test_file, n_features=180)
y_test = np.array([l[0] for l in test_labels])


def rel(x, y):
    return abs(x - y) / max(abs(x), abs(y), 1e-300)


def round_trip(name, extra, min_accuracy, objective_tol=1e-9):
    """Trains with `extra`, checks the file, predict and eval; returns (model path, train JSON)."""
    model = os.path.join(W, name + ".model")
    rc, obj, err = run_json([a.train, "--json", *extra, train_file, model, "--test", test_file])
    if not t.check(rc == 0 and obj is not None, f"{name}: train " + " ".join(extra), err):
        return model, {}
    with open(model) as f:
        t.check(f.readline().startswith("sparsemc-staged-model "), f"{name}: writes a staged model")
    out = os.path.join(W, name + ".pred")
    rc, _, err = run([a.predict, test_file, model, out])
    t.check(rc == 0, f"{name}: predict", err)
    with open(out) as f:
        pred = np.array([int(line) for line in f])
    acc = float(np.mean(pred == y_test))
    t.check(abs(acc - obj.get("test_accuracy", -1)) < 1e-12, f"{name}: predict's accuracy = train --test's",
            f"{acc} vs {obj.get('test_accuracy')}")
    t.check(acc >= min_accuracy, f"{name}: test accuracy {acc:.4f} >= {min_accuracy}")
    rc, ev, err = run_json([a.eval, "--json", train_file, model])
    t.check(rc == 0 and ev is not None and rel(ev["objective"], obj.get("objective", 0)) < objective_tol,
            f"{name}: eval on the saved model = train's objective",
            f"{ev and ev.get('objective')} vs {obj.get('objective')} {err}")
    rc, pj, err = run_json([a.predict, "--json", "--top-k", "2", test_file, model])
    t.check(rc == 0 and pj is not None and pj["accuracy"] == acc and pj["top_k_accuracy"] >= acc,
            f"{name}: predict --top-k 2", str(pj) + err)
    return model, obj


def stages_of(path):
    """The embedded native models of a staged file, as common.Model objects (original features)."""
    with open(path) as f:
        lines = [ln.rstrip("\n") for ln in f]
    models, i = [], 0
    while i < len(lines):
        if lines[i].startswith("model_lines "):
            count = int(lines[i].split()[1])
            part = os.path.join(W, "stage.model")
            with open(part, "w") as g:
                g.write("\n".join(lines[i + 1:i + 1 + count]) + "\n")
            models.append(read_native_model(part))
            i += count
        i += 1
    return models


# --- calibrated least squares ---------------------------------------------------------------------
round_trip("glscal", ["--solver", "gls-cal", "--loss", "least-squares", "--penalty", "none", "--mu", "1e-3",
                      "--max-epochs", "4"], 0.9)
round_trip("glscal_rff", ["--solver", "gls-cal", "--loss", "least-squares", "--penalty", "none", "--mu", "1e-3",
                          "--max-epochs", "3", "--features", "rff:300", "--seed", "5", "--intercept"], 0.85)
round_trip("glscal_float", ["--solver", "gls-cal", "--loss", "least-squares", "--penalty", "none", "--mu", "1e-3",
                            "--max-epochs", "3", "--float"], 0.9, 1e-5)  # train sums in float

# --- gls on random Fourier features (one uncalibrated stage; eval includes the ridge) ---------------
_, g = round_trip("gls_rff", ["--solver", "gls", "--loss", "logistic", "--penalty", "none", "--mu", "1e-3",
                              "--features", "rff:200:6", "--tol", "1e-6"], 0.75)
t.check(g.get("status") == "converged", "gls on random features converges", str(g))

# --- stagewise --------------------------------------------------------------------------------------
round_trip("sw_rff", ["--solver", "stagewise", "--loss", "least-squares", "--penalty", "none", "--mu", "1e-4",
                      "--stages", "3", "--block-size", "100", "--intercept"], 0.8)
_, s = round_trip("sw_rff_d", ["--solver", "stagewise", "--loss", "least-squares", "--penalty", "none", "--mu",
                               "1e-4", "--features", "rff:200", "--block-size", "100"], 0.8)
t.check(s.get("stages") == 2 and s.get("epochs") == 2, "rff:200 with --block-size 100 makes 2 stages", str(s))
round_trip("sw_cal", ["--solver", "stagewise", "--loss", "least-squares", "--penalty", "none", "--mu", "1e-4",
                      "--stages", "2", "--block-size", "100", "--calibrate"], 0.75)
round_trip("sw_logistic", ["--solver", "stagewise", "--loss", "logistic", "--penalty", "none", "--mu", "1e-3",
                           "--features", "frequent", "--stages", "3", "--block-size", "60", "--max-epochs", "20"], 0.85)
model, obj = round_trip("sw_sample", ["--solver", "stagewise", "--loss", "least-squares", "--penalty", "none",
                                      "--mu", "1e-4", "--features", "sample", "--stages", "4", "--block-size", "45",
                                      "--seed", "7", "--intercept"], 0.85)
stages = stages_of(model)
if t.check(len(stages) == 4, "sw_sample: 4 stages in the file", str(len(stages))):
    S = sum(m.scores(X_test) for m in stages)
    numpy_pred = np.array([stages[0].labels[k] for k in np.argmax(S, axis=1)])
    with open(os.path.join(W, "sw_sample.pred")) as f:
        pred = np.array([int(line) for line in f])
    t.check(np.array_equal(pred, numpy_pred), "sw_sample: predictions = argmax of the sum of the stages (numpy)")
    supports = [set(np.flatnonzero(np.abs(m.W).sum(axis=1))) for m in stages]
    t.check(all(len(s) <= 45 for s in supports), "sw_sample: every stage uses at most --block-size features")
    t.check(len(set().union(*supports)) == 180, "sw_sample: 4 blocks of 45 sampled without replacement cover 180")


# --- usage errors name the option -------------------------------------------------------------------
def expect_usage(cmd, patterns):
    rc, out, err = run(cmd)
    ok = rc == 1 and all(re.search(p, err) for p in patterns)
    t.check(ok, "usage error: " + " ".join(cmd[1:-2]), f"rc {rc}: {err.strip()}")


m = os.path.join(W, "bad.model")
ls = ["--loss", "least-squares", "--penalty", "none"]
expect_usage([a.train, "--stages", "3", train_file, m], [r"--stages", r"stagewise"])
expect_usage([a.train, "--solver", "gls", *ls, "--block-size", "5", train_file, m], [r"--block-size", r"stagewise"])
expect_usage([a.train, "--solver", "gls", *ls, "--features", "rff:x", train_file, m], [r"--features", r"rff"])
expect_usage([a.train, "--solver", "gls", *ls, "--features", "rff", train_file, m], [r"--features rff:D"])
expect_usage([a.train, "--solver", "gls", *ls, "--features", "rff:10:-1", train_file, m], [r"--features", r"BANDWIDTH"])
expect_usage([a.train, "--solver", "gls-cal", *ls, "--features", "sample", train_file, m], [r"--features", r"original"])
expect_usage([a.train, "--solver", "stagewise", *ls, "--features", "rff:100", "--stages", "3", "--block-size", "64",
              train_file, m], [r"--stages", r"--block-size", r"D = T\*P"])
expect_usage([a.train, "--solver", "stagewise", "--loss", "logistic", "--penalty", "none", "--calibrate",
              train_file, m], [r"--calibrate", r"least-squares"])
expect_usage([a.train, "--solver", "stagewise", *ls, "--stages", "0", train_file, m], [r"--stages"])
expect_usage([a.train, "--solver", "stagewise", *ls, "--block-size", "-1", train_file, m], [r"--block-size"])
expect_usage([a.train, "--solver", "gls-cal", *ls, "--model-format", "liblinear", train_file, m], [r"--model-format"])
expect_usage([a.train, "--solver", "stagewise", *ls, "--bias", "1", train_file, m], [r"--bias", r"--intercept"])
expect_usage([a.train, "--solver", "gls-cal", "--loss", "logistic", "--penalty", "none", train_file, m],
             [r"--loss", r"least-squares"])

t.done()

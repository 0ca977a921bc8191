#!/usr/bin/python3
"""train → predict → eval round trips on data/dna.scale(.t), checked against numpy.

Predictions of sparsemc-predict are recomputed from the model file (argmax of XW + b, first
maximum on ties); train's reported objective must equal sparsemc-eval's on the saved model;
zero-based, gzip and bzip2 copies of the data must train to the same model; class weights,
--bias, --intercept, --float, --top-k and multilabel data go through the whole chain.
"""

import bz2
import gzip
import os
import random
import subprocess
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


def train(extra, model, data=train_file, test=None):
    cmd = [a.train, "--json", *extra, data, model] + (["--test", test] if test else [])
    rc, obj, err = run_json(cmd)
    t.check(rc == 0 and obj is not None, "train " + " ".join(extra), err)
    return obj or {}


def predictions(model, test=test_file, extra=()):
    out = os.path.join(W, "pred.txt")
    rc, _, err = run([a.predict, *extra, test, model, out])
    t.check(rc == 0, f"predict {' '.join(extra)} {os.path.basename(model)}", err)
    with open(out) as f:
        return [[int(x) for x in line.split()] for line in f]


def numpy_top(model_file, X, k=1):
    m = read_native_model(model_file)
    S = m.scores(X)
    order = np.argsort(-S, axis=1, kind="stable")[:, :k]  # stable: first maximum on ties
    return [[m.labels[c] for c in row] for row in order]


# --- the default solver, predict, eval -------------------------------------------------------------
model = os.path.join(W, "default.model")
obj = train(["--lambda", "0.01", "--tol", "1e-5"], model, test=test_file)
pred = predictions(model)
t.check(len(pred) == 1186 and all(len(p) == 1 for p in pred), "predict writes one label per test sample")
t.check(pred == numpy_top(model, X_test), "predictions = argmax of XW + b from the model file (numpy)")
acc = float(np.mean(np.array([p[0] for p in pred]) == y_test))
t.check(abs(acc - obj.get("test_accuracy", -1)) < 1e-12, "train --test accuracy = predict's accuracy",
        f"{acc} vs {obj.get('test_accuracy')}")
rc, ev, err = run_json([a.eval, "--json", train_file, model])
t.check(rc == 0 and ev and rel(ev["objective"], obj.get("objective", 0)) < 1e-12,
        "eval on the saved model = train's reported objective", f"{ev and ev.get('objective')} vs {obj.get('objective')}")
top2 = predictions(model, extra=["--top-k", "2"])
t.check(all(len(p) == 2 and p[0] == q[0] and p[1] != p[0] for p, q in zip(top2, pred)),
        "--top-k 2 lists two distinct labels, the first the prediction")
t.check(top2 == numpy_top(model, X_test, 2), "--top-k 2 ranking = numpy's")
rc, pj, err = run_json([a.predict, "--json", "--top-k", "2", test_file, model])
ok2 = float(np.mean([y in p for y, p in zip(y_test, top2)]))
t.check(rc == 0 and pj and abs(pj["top_k_accuracy"] - ok2) < 1e-12, "predict --json top-2 accuracy", str(pj))
rc, out, err = run([a.predict, test_file, model, "-"])
t.check(rc == 0 and [[int(x)] for x in out.split()] == pred and "accuracy" in err, "OUTPUT '-' writes to stdout")
with open(model) as f:  # the model through a pipe: read once, whatever its format
    p = subprocess.run([a.predict, test_file, "/dev/stdin", "-"], stdin=f, capture_output=True, text=True, timeout=600)
t.check(p.returncode == 0 and [[int(x)] for x in p.stdout.split()] == pred, "MODEL from a pipe (/dev/stdin)", p.stderr)

# --- same data as zero-based, gzip and bzip2 files: the same model ----------------------------------
with open(train_file) as f:
    text = f.read()
zero = os.path.join(W, "dna0.svm")
with open(zero, "w") as f:
    for line in text.splitlines():
        head, *feats = line.split()
        f.write(head + " " + " ".join(f"{int(k) - 1}:{v}" for k, v in (x.split(":") for x in feats)) + "\n")
gz, bz = os.path.join(W, "dna.svm.gz"), os.path.join(W, "dna.svm.bz2")
with gzip.open(gz, "wt") as f:
    f.write(text)
with bz2.open(bz, "wt") as f:
    f.write(text)
ref_flags = ["--lambda", "0.01", "--tol", "1e-5"]
with open(model) as f:
    ref_rows = f.read().split("rows", 1)[1]
for name, data, extra in [("zero-based", zero, ["--zero-based"]), ("gzip", gz, []), ("bzip2", bz, [])]:
    m = os.path.join(W, f"{name}.model")
    o = train(ref_flags + extra, m, data=data)
    with open(m) as f:
        rows = f.read().split("rows", 1)[1]
    t.check(o.get("objective") == obj.get("objective") and rows == ref_rows, f"{name} input trains the same model")

# --- --float ---------------------------------------------------------------------------------------
mf = os.path.join(W, "float.model")
of = train(["--float", "--lambda", "0.01", "--tol", "1e-4"], mf, test=test_file)
with open(mf) as f:
    t.check("scalar float" in f.read(), "--float saves a float model")
t.check(rel(of.get("objective", 0), obj.get("objective", 1)) < 1e-3, "--float reaches the double objective (1e-3)",
        f"{of.get('objective')} vs {obj.get('objective')}")
t.check(abs(of.get("test_accuracy", 0) - obj.get("test_accuracy", 1)) < 0.02, "--float accuracy close to double")

# --- --bias and --intercept --------------------------------------------------------------------------
mb = os.path.join(W, "bias.model")
ob = train(["--bias", "1", "--lambda", "0.01", "--tol", "1e-5"], mb, test=test_file)
mbm = read_native_model(mb)
t.check(mbm.W.shape[0] == 181 and mbm.bias == 1.0, "--bias 1: d + 1 rows and bias 1 in the model")
pb = predictions(mb)
t.check(pb == numpy_top(mb, X_test), "--bias: predictions = numpy with the bias feature appended")
t.check(abs(float(np.mean(np.array([p[0] for p in pb]) == y_test)) - ob.get("test_accuracy", -1)) < 1e-12,
        "--bias: train --test accuracy = predict's")
rc, ev, err = run_json([a.eval, "--json", train_file, mb])
t.check(rc == 0 and ev and rel(ev["objective"], ob.get("objective", 0)) < 1e-12, "--bias: eval = train objective")

mi = os.path.join(W, "intercept.model")
oi = train(["--intercept", "--loss", "logistic", "--lambda", "0.01", "--tol", "1e-5"], mi, test=test_file)
mim = read_native_model(mi)
t.check(mim.b is not None and np.any(mim.b != 0), "--intercept: the model has an intercept")
t.check(predictions(mi) == numpy_top(mi, X_test), "--intercept: predictions = numpy with b")
rc, ev, err = run_json([a.eval, "--json", train_file, mi])
t.check(rc == 0 and ev and rel(ev["objective"], oi.get("objective", 0)) < 1e-12, "--intercept: eval = train objective")

# --- class weights: part of c_i, so of the objective -------------------------------------------------
mw = os.path.join(W, "weights.model")
ow = train(["--class-weight", "1:2", "--class-weight", "3:0.5", "--lambda", "0.01", "--tol", "1e-5"], mw)
rc, ev, err = run_json([a.eval, "--json", "--class-weight", "1:2", "--class-weight", "3:0.5", train_file, mw])
t.check(rc == 0 and ev and rel(ev["objective"], ow.get("objective", 0)) < 1e-12,
        "--class-weight: eval with the same weights = train objective")
rc, ev1, err = run_json([a.eval, "--json", train_file, mw])
t.check(rc == 0 and ev1 and rel(ev1["objective"], ev["objective"]) > 1e-3, "--class-weight changes the objective")
t.check(ow.get("objective") != obj.get("objective"), "--class-weight changes the fit")

# --- test labels the model never saw: misses, not errors -------------------------------------------
odd = os.path.join(W, "odd.svm")
with open(test_file) as f:
    lines = f.read().splitlines()
with open(odd, "w") as f:
    f.write("\n".join(["7" + ln[1:] if i % 10 == 0 else ln for i, ln in enumerate(lines)]) + "\n")
rc, pj, err = run_json([a.predict, "--json", odd, model])
expected = float(np.mean([p[0] == (7 if i % 10 == 0 else y) for i, (p, y) in enumerate(zip(pred, y_test))]))
t.check(rc == 0 and pj and abs(pj["accuracy"] - expected) < 1e-12, "unknown test labels count as misses",
        f"{pj} vs {expected}")

# --- multilabel data through the whole chain ---------------------------------------------------------
rng = random.Random(7)
ml = os.path.join(W, "ml.svm")
with open(ml, "w") as f:
    for i in range(300):
        labels = sorted(rng.sample([2, 5, 9, 11], rng.randint(0, 3)))
        feats = sorted(rng.sample(range(1, 41), 8))
        vals = [(j, round(rng.uniform(-1, 1) + (0.8 if j % 4 == (labels[0] if labels else 0) % 4 else 0), 3))
                for j in feats]
        f.write(",".join(map(str, labels)) + " " + " ".join(f"{j}:{v}" for j, v in vals) + "\n")
mm = os.path.join(W, "ml.model")
om = train(["--loss", "ovr-squared-hinge", "--lambda", "0.001", "--tol", "1e-5"], mm, data=ml, test=ml)
check = "test_precision_at_1" in om
t.check(check, "multilabel train --test reports precision@1", str(om))
rc, pj, err = run_json([a.predict, "--json", "--top-k", "3", ml, mm])
ml_labels, X_ml = read_libsvm(ml, n_features=40)
top3 = numpy_top(mm, X_ml, 3)
p3 = float(np.mean([len(set(p) & set(y)) / 3 for p, y in zip(top3, ml_labels)]))
t.check(rc == 0 and pj and pj["multilabel"] and abs(pj["precision_at_k"] - p3) < 1e-12,
        "multilabel predict --top-k 3: precision@3 = numpy's", f"{pj} vs {p3}")
rc, help_text, _ = run([a.train, "--help"])
if "fcbcfw:" in help_text:  # the separation ranking loss through PD-Sparse's solver
    mc = os.path.join(W, "ml-cs.model")
    oc = train(["--loss", "crammer-singer", "--penalty", "l1", "--lambda", "1e-4", "--mu", "0.01", "--bias", "1"],
               mc, data=ml, test=ml)
    t.check(oc.get("solver") == "fcbcfw" and "test_precision_at_1" in oc, "multilabel crammer-singer trains with fcbcfw",
            str(oc))
    rc, pj, err = run_json([a.predict, "--json", "--top-k", "2", ml, mc])
    top2 = numpy_top(mc, X_ml, 2)
    p2 = float(np.mean([len(set(p) & set(y)) / 2 for p, y in zip(top2, ml_labels)]))
    t.check(rc == 0 and pj and abs(pj["precision_at_k"] - p2) < 1e-12, "fcbcfw multilabel precision@2 = numpy's",
            f"{pj} vs {p2}")
rc, out, err = run([a.train, "--loss", "squared-hinge", ml, mm])
t.check(rc == 1 and "multilabel" in err and "ovr-squared-hinge" in err,
        "a multiclass-only loss on multilabel data is a usage error listing the multilabel losses", err)

t.done()

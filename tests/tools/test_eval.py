#!/usr/bin/python3
"""sparsemc-eval against an independent computation of objective (1) for every loss × penalty.

How: models with random weights (a third of the rows zero, random intercepts) are written by
this script in the native format and in LIBLINEAR's format (unsorted labels, bias feature);
the data are read by a plain python parser; the scores XW + b, the five losses and the four
penalties are computed with numpy from their definitions (ARCHITECTURE.md §1 and the loss
headers' doc comments), sharing no code with sparsemc. sparsemc-eval's objective, loss part
and penalty part must agree to 1e-10 relative, on multiclass (data/dna.scale) and multilabel
(generated) data, with and without class weights. A ridge-only Crammer-Singer model's gap, raised by
the sequential dual method, is checked against F - F* of a tight fit.
"""

import os
import random
import sys

from common import require_files, SKIP, Checks, Model, objective, parse_args, read_libsvm, run, run_json, write_liblinear_model

try:
    import numpy as np
except ImportError:
    print("SKIPPED: numpy is not installed")
    sys.exit(SKIP)

a = parse_args()
t = Checks()
LOSSES = ["squared-hinge", "huber-hinge", "ovr-squared-hinge", "crammer-singer", "logistic", "least-squares"]
PENALTIES = ["l1l2", "l1", "l1linf", "none"]
MULTILABEL_LOSSES = ["ovr-squared-hinge", "crammer-singer", "logistic", "least-squares"]
rng = np.random.default_rng(12345)


def write_native(path, W, labels, b=None, bias=-1.0):
    """A native model file (io/model_io.hpp's format), rows with a nonzero entry only."""
    rows = [j for j in range(W.shape[0]) if np.any(W[j] != 0)]
    with open(path, "w") as f:
        f.write(f"sparsemc-model 1\nscalar double\nn_features {W.shape[0]}\nn_classes {len(labels)}\n")
        f.write("labels " + " ".join(map(str, labels)) + "\n")
        f.write("intercept " + ("none" if b is None else " ".join(repr(float(v)) for v in b)) + "\n")
        f.write(f"bias {bias!r}\nloss squared-hinge\npenalty l1l2\nsolver test\nlambda 0.5\nmu 0.25\n")
        f.write(f"status converged\nrows {len(rows)}\n")
        for j in rows:
            f.write(f"{j} " + " ".join(repr(float(v)) for v in W[j]) + "\n")


def random_weights(d, K, scale=0.4):
    W = rng.normal(0, scale, size=(d, K))
    W[rng.random(d) < 1 / 3] = 0.0
    W[rng.random((d, K)) < 0.1] = 0.0  # some single zeros, for l1 and l1linf ties
    return W


def rel(x, y):
    return abs(x - y) / max(abs(x), abs(y), 1e-300)


def compare(data, model_file, model, labels, X, loss, penalty, lam, mu, class_weights=None, what=""):
    cmd = [a.eval, "--json", "--loss", loss, "--penalty", penalty, "--lambda", repr(lam), "--mu", repr(mu)]
    for label, w in (class_weights or {}).items():
        cmd += ["--class-weight", f"{label}:{w!r}"]
    rc, obj, err = run_json(cmd + [data, model_file])
    if not t.check(rc == 0 and obj is not None, f"eval {what} {loss} {penalty} exits 0", err):
        return
    F, L, P = objective(model, labels, X, loss, penalty, lam, mu, class_weights)
    t.check(rel(obj["objective"], F) < 1e-10 and rel(obj["loss_part"], L) < 1e-10 and rel(obj["penalty_part"], P) < 1e-10,
            f"eval {what} {loss} {penalty} lambda={lam} mu={mu} = numpy",
            f"sparsemc F={obj['objective']!r} L={obj['loss_part']!r} P={obj['penalty_part']!r}; "
            f"numpy F={F!r} L={L!r} P={P!r}")
    # The certificate: D = F - gap is a lower bound on F*, so on F of any model, here W = 0
    # (computed with numpy). With no penalty and mu = 0 it is the trivial D = D(0).
    where = f"eval {what} {loss} {penalty} lambda={lam} mu={mu}"
    gap, relative = obj.get("duality_gap"), obj.get("relative_gap")
    finite = isinstance(gap, float) and isinstance(relative, float) and gap >= 0
    if loss == "crammer-singer" and model.b is not None and "multilabel" in what:
        t.xfail(finite, f"{where}: duality_gap >= 0",
                "duality_gap.hpp: the intercept correction leaves the separation-ranking dual infeasible "
                "(gap +inf) on multilabel data", str(obj))
        if not finite:
            return
    elif not t.check(finite, f"{where}: duality_gap >= 0", str(obj)):
        return
    t.check(rel(relative, gap / abs(obj["objective"])) < 1e-12, f"{where}: relative_gap = gap/|F|")
    zero = Model(np.zeros_like(model.W), model.labels, None if model.b is None else np.zeros_like(model.b), model.bias)
    F0 = objective(zero, labels, X, loss, penalty, lam, mu, class_weights)[0]
    t.check(obj["objective"] - gap <= F0 + 1e-10 * abs(F0), f"{where}: D = F - gap <= F(0) (weak duality)",
            f"F {obj['objective']!r} gap {gap!r} F(0) {F0!r}")


# --- multiclass: data/dna.scale, K = 3 ---------------------------------------------------------------
dna = os.path.join(a.data, "dna.scale")
require_files(dna)
labels, X = read_libsvm(dna, n_features=180)

native = os.path.join(a.work, "random.model")
W = random_weights(180, 3)
b = rng.normal(0, 0.5, size=3)
write_native(native, W, [1, 2, 3], b)
m_native = Model(W, [1, 2, 3], b)

native_bias = os.path.join(a.work, "random-bias.model")
Wb = random_weights(181, 3)
Wb[180] = [0.3, -0.2, 0.7]
write_native(native_bias, Wb, [1, 2, 3], None, bias=2.5)
m_bias = Model(Wb, [1, 2, 3], None, 2.5)

liblinear = os.path.join(a.work, "random.liblinear")
Wl = random_weights(181, 3)
write_liblinear_model(liblinear, Wl, [3, 1, 2], bias=1.0)  # LIBLINEAR's label order: first seen
m_liblinear = Model(Wl, [3, 1, 2], None, 1.0)

for loss in LOSSES:
    for penalty in PENALTIES:
        for lam, mu in [(0.01, 0.1), (0.3, 0.0)]:
            compare(dna, native, m_native, labels, X, loss, penalty, lam, mu, what="native+intercept")
        compare(dna, native_bias, m_bias, labels, X, loss, penalty, 0.02, 0.5, what="native+bias")
        compare(dna, liblinear, m_liblinear, labels, X, loss, penalty, 0.05, 0.01, what="liblinear")
    compare(dna, native, m_native, labels, X, loss, "l1l2", 0.01, 0.1, class_weights={1: 2.0, 3: 0.25},
            what="class-weights")

# The model's recorded loss, penalty, lambda and mu are the defaults.
rc, obj, err = run_json([a.eval, "--json", dna, native])
F, _, _ = objective(m_native, labels, X, "squared-hinge", "l1l2", 0.5, 0.25)
t.check(rc == 0 and obj and rel(obj["objective"], F) < 1e-10 and obj["lambda"] == 0.5 and obj["mu"] == 0.25,
        "eval defaults to the model's recorded loss/penalty/lambda/mu", str(obj))
# A LIBLINEAR model records no lambda/mu: they are required.
rc, out, err = run([a.eval, "--loss", "logistic", "--penalty", "l1", dna, liblinear])
t.check(rc == 1 and "--lambda" in err, "eval of a LIBLINEAR model requires --lambda", err)

# --- multilabel: generated data, K = 4 (labels 2, 5, 9, 11), empty and full label sets ------------------
py = random.Random(3)
ml = os.path.join(a.work, "ml.svm")
with open(ml, "w") as f:
    for i in range(200):
        ls = sorted(py.sample([2, 5, 9, 11], py.choice([0, 1, 1, 2, 2, 3, 4])))
        feats = sorted(py.sample(range(1, 31), 6))
        f.write(",".join(map(str, ls)) + " " + " ".join(f"{j}:{py.uniform(-2, 2):.4f}" for j in feats) + "\n")
ml_labels, X_ml = read_libsvm(ml, n_features=30)
ml_model = os.path.join(a.work, "ml.model")
Wm = random_weights(30, 4, 0.8)
bm = rng.normal(0, 0.5, size=4)
write_native(ml_model, Wm, [2, 5, 9, 11], bm)
m_ml = Model(Wm, [2, 5, 9, 11], bm)
for loss in MULTILABEL_LOSSES:
    for penalty in PENALTIES:
        compare(ml, ml_model, m_ml, ml_labels, X_ml, loss, penalty, 0.02, 0.3, what="multilabel")
    compare(ml, ml_model, m_ml, ml_labels, X_ml, loss, "l1", 0.02, 0.3, class_weights={5: 3.0, 11: 0.5},
            what="multilabel class-weights")
rc, out, err = run([a.eval, "--loss", "squared-hinge", ml, ml_model])
t.check(rc == 1 and "multilabel" in err, "eval: squared-hinge on multilabel data is a usage error", err)

# --- Crammer-Singer with the ridge or the elastic net: the sequential dual method raises the dual ----
# A model trained to 1e-2 is certified near its own excess F - F* (F* from a fit to 1e-9): the gap
# is at least that excess (a valid bound) and at most the excess over (1 - 0.1) plus what a stalled
# dual leaves; --dual-epochs 0 keeps the subgradient's looser bound. μ = 1/n is LIBLINEAR's C = 1,
# where the best scale of the subgradient's dual point is about 1/400 (the epochs from the
# unscaled point stalled at a relative gap of 3.9).
cs_mu = 1 / 2000
cs_models = {}
for penalty in [["--penalty", "none"], ["--penalty", "l1", "--lambda", "1e-4"]]:
    name = " ".join(penalty[1::2])
    for tol in ["1e-2", "1e-9"]:
        cs_models[tol] = os.path.join(a.work, f"cs-{penalty[1]}-{tol}.model")
        rc, out, err = run([a.train, "--quiet", "--loss", "crammer-singer", *penalty, "--mu", repr(cs_mu),
                            "--tol", tol, dna, cs_models[tol]])
        t.check(rc == 0, f"train crammer-singer {name} to {tol}", err)
    rc, tight, err = run_json([a.eval, "--json", dna, cs_models["1e-9"]])
    rc2, raised, err2 = run_json([a.eval, "--json", dna, cs_models["1e-2"]])
    rc3, loose, err3 = run_json([a.eval, "--json", "--dual-epochs", "0", dna, cs_models["1e-2"]])
    if t.check(rc == 0 and rc2 == 0 and rc3 == 0 and tight and raised and loose, f"eval crammer-singer {name} models",
               err + err2 + err3):
        F_star = tight["objective"] - tight["duality_gap"]  # within 1e-9 |F| of F*
        excess = raised["objective"] - tight["objective"]
        slack = 1e-8 * abs(tight["objective"])
        t.check(raised["duality_gap"] >= excess - slack, f"eval crammer-singer {name}: the raised gap bounds F - F*",
                str(raised))
        t.check(raised["duality_gap"] <= 1.2 * (raised["objective"] - F_star) + slack,
                f"eval crammer-singer {name}: the raised gap is within 1.2x of F - F*", f"{raised} F* {F_star!r}")
        t.check(loose["duality_gap"] >= raised["duality_gap"] and loose["objective"] == raised["objective"],
                f"eval crammer-singer {name}: --dual-epochs 0 leaves the subgradient's looser bound",
                f"{loose} vs {raised}")
rc, out, err = run([a.eval, "--dual-epochs", "-1", dna, cs_models["1e-2"]])
t.check(rc != 0 and "--dual-epochs" in err, "eval: a negative --dual-epochs names the option", err)

t.done()

#!/usr/bin/python3
"""LIBLINEAR model format, both directions, against Debian's liblinear-tools.

Export: a model saved with --model-format liblinear gives liblinear-predict exactly the
predictions sparsemc-predict gives for the native model (plain, --bias, --intercept).
Import: models of liblinear-train (-s 4 Crammer–Singer, -s 5 L1 squared hinge, with -B 1)
predict the same under sparsemc-predict as under liblinear-predict, and sparsemc-eval's
objective of the -s 4 model (CrammerSinger, λ = 0, μ = 1/(Cn)) matches numpy.
Skipped (exit 77) when liblinear-train/-predict are not installed.
"""

import os
import re
import shutil
import sys

from common import SKIP, Checks, require_files, objective, parse_args, read_libsvm, read_liblinear_model, run, run_json

train_bin, predict_bin = shutil.which("liblinear-train"), shutil.which("liblinear-predict")
if not (train_bin and predict_bin):
    print("SKIPPED: liblinear-train / liblinear-predict not installed (Debian package liblinear-tools)")
    sys.exit(SKIP)

a = parse_args()
t = Checks()
train_file = os.path.join(a.data, "dna.scale")
test_file = os.path.join(a.data, "dna.scale.t")
require_files(train_file, test_file)
W = a.work


def read_labels(path):
    with open(path) as f:
        return [line.split()[0] for line in f if line.strip()]


def liblinear_predictions(model):
    out = os.path.join(W, "ll.out")
    rc, stdout, err = run([predict_bin, test_file, model, out])
    t.check(rc == 0, f"liblinear-predict accepts {os.path.basename(model)}", err + stdout)
    return read_labels(out) if rc == 0 else []


def sparsemc_predictions(model):
    out = os.path.join(W, "smc.out")
    rc, _, err = run([a.predict, test_file, model, out])
    t.check(rc == 0, f"sparsemc-predict accepts {os.path.basename(model)}", err)
    return read_labels(out) if rc == 0 else []


# --- export -------------------------------------------------------------------------------------------
for name, flags in [("plain", []), ("bias", ["--bias", "1"]), ("intercept", ["--intercept", "--loss", "logistic"])]:
    native, exported = os.path.join(W, f"{name}.model"), os.path.join(W, f"{name}.liblinear")
    common_flags = ["--lambda", "0.01", "--tol", "1e-5", *flags, train_file]
    rc1, _, e1 = run([a.train, *common_flags, native])
    rc2, _, e2 = run([a.train, "--model-format", "liblinear", *common_flags, exported])
    t.check(rc1 == 0 and rc2 == 0, f"export {name}: train exits 0", e1 + e2)
    with open(exported) as f:
        t.check(f.readline().startswith("solver_type"), f"export {name}: LIBLINEAR header")
    ours = sparsemc_predictions(native)
    theirs = liblinear_predictions(exported)
    t.check(len(ours) == 1186 and ours == theirs, f"export {name}: liblinear-predict = sparsemc-predict",
            f"{sum(x != y for x, y in zip(ours, theirs))} of {len(ours)} differ")
    t.check(sparsemc_predictions(exported) == ours, f"export {name}: the exported file reads back, same predictions")

# --- import -------------------------------------------------------------------------------------------
labels, X = read_libsvm(train_file, n_features=180)
n = len(labels)
for name, args in [("s4", ["-s", "4", "-c", "1"]), ("s4-bias", ["-s", "4", "-c", "0.5", "-B", "1"]),
                   ("s5", ["-s", "5", "-c", "1"])]:
    model = os.path.join(W, f"{name}.ll")
    rc, out, err = run([train_bin, "-q", *args, train_file, model])
    if not t.check(rc == 0, f"liblinear-train {' '.join(args)}", err + out):
        continue
    theirs = liblinear_predictions(model)
    ours = sparsemc_predictions(model)
    t.check(len(ours) == 1186 and ours == theirs, f"import {name}: sparsemc-predict = liblinear-predict",
            f"{sum(x != y for x, y in zip(ours, theirs))} differ")
    if name.startswith("s4"):
        C = float(args[args.index("-c") + 1])
        mu = 1.0 / (C * n)
        rc, obj, err = run_json([a.eval, "--json", "--loss", "crammer-singer", "--penalty", "none", "--lambda", "0",
                                 "--mu", repr(mu), train_file, model])
        F, _, _ = objective(read_liblinear_model(model), labels, X, "crammer-singer", "none", 0.0, mu)
        t.check(rc == 0 and obj and abs(obj["objective"] - F) <= 1e-10 * abs(F),
                f"import {name}: eval objective (crammer-singer, mu=1/(Cn)) = numpy", f"{obj} vs {F}")
        flags = ["--loss", "crammer-singer", "--penalty", "none", "--lambda", "0", "--mu", repr(mu)]
    else:
        C = float(args[args.index("-c") + 1])
        flags = ["--loss", "ovr-squared-hinge", "--penalty", "l1", "--lambda", repr(1.0 / (C * n)), "--mu", "0"]
    # A LIBLINEAR model is certified like sparsemc's: its duality gap bounds F - F*, so it is at
    # least F - F_ref for sparsemc's certified fit of the same (1) (F_ref >= F*). The bound can be
    # loose (a subgradient's dual point for Crammer-Singer, the rescaling at mu = 0 for L1).
    rc, obj, err = run_json([a.eval, "--json", *flags, train_file, model])
    reference = os.path.join(W, f"{name}.reference.model")
    bias = ["--bias", args[args.index("-B") + 1]] if "-B" in args else []  # the same (1): the bias feature too
    rc2, ref, err2 = run_json([a.train, "--json", *flags, *bias, train_file, reference])
    gap = obj.get("duality_gap") if obj else None
    if t.check(rc == 0 and rc2 == 0 and isinstance(gap, float) and gap >= 0 and ref and ref["status"] == "converged",
               f"import {name}: eval gives the LIBLINEAR model a duality gap; the reference fit converged",
               f"{obj} {ref} {err + err2}"):
        print(f"import {name}: LIBLINEAR F {obj['objective']!r}, relative gap {obj['relative_gap']:.3g}; "
              f"sparsemc {ref['solver']} F {ref['objective']!r}")
        t.check(gap >= obj["objective"] - ref["objective"] - 1e-12 * abs(ref["objective"]),
                f"import {name}: the LIBLINEAR model's gap >= F - F_ref (it bounds F - F*)",
                f"gap {gap} F {obj['objective']} F_ref {ref['objective']}")
    rc, out, err = run([a.eval, train_file, model])
    t.check(rc == 1 and re.search(r"--(loss|lambda)", err), f"import {name}: eval needs the flags LIBLINEAR lacks", err)

t.done()

#!/usr/bin/python3
"""What a LIBLINEAR user reaches for: --version, progress on stderr (and --quiet), LIBLINEAR's C,
sample weights from a file, a warm start from a model file, probabilities and decision values
from sparsemc-predict, and a hint for 0-based files.
"""

import os
import re
import shutil

from common import Checks, parse_args, read_native_model, require_files, run, run_json, sanitizer_run

a = parse_args()
t = Checks()
train_file = os.path.join(a.data, "dna.scale")
test_file = os.path.join(a.data, "dna.scale.t")
require_files(train_file, test_file)
w = a.work


def path(name):
    return os.path.join(w, name)


def exits(cmd, status, pattern, what):
    rc, out, err = run(cmd)
    t.check(rc == status, f"{what}: exit {status}", f"got {rc}; stderr {err.strip()[:300]}")
    t.check(re.search(pattern, err) is not None, f"{what}: stderr matches {pattern!r}", err.strip()[:300])


def max_abs_difference(m1, m2):
    import numpy as np
    return float(np.abs(m1.W - m2.W).max())


# --- --version on every tool; predict and eval describe their own exit statuses ------------------
for tool in (a.train, a.predict, a.eval):
    name = os.path.basename(tool)
    rc, out, err = run([tool, "--version"])
    t.check(rc == 0 and re.fullmatch(re.escape(name) + r" \d+\.\d+\.\d+\n", out) is not None,
            f"{name} --version prints its name and version", out + err)
for tool in (a.predict, a.eval):
    rc, out, _ = run([tool, "--help"])
    tail = out.split("Exit status", 1)[-1]
    t.check("Exit status" in out and "--max-epochs" not in tail, f"{os.path.basename(tool)} --help: its own exit statuses",
            tail)

# --- a 0-based file: the error suggests --zero-based -----------------------------------------------
zero = path("zero.svm")
with open(zero, "w") as f:
    f.write("1 0:0.5 3:1\n2 1:1\n")
exits([a.train, zero, path("zero.model")], 2, r"zero\.svm:1:3: feature index 0 .*--zero-based",
      "0-based file without --zero-based")
rc, _, err = run([a.train, "--zero-based", "--max-epochs", "2", zero, path("zero.model")])
t.check(rc == 0, "the same file with --zero-based trains", err)

# --- progress: a run of more than a second prints epoch lines on stderr; --quiet none; a short run none
long_run = ["--solver", "fista", "--tol", "1e-14", "--max-epochs", "100000000", "--time-limit", "1.6"]
rc, obj, err = run_json([a.train, "--json"] + long_run + [train_file, path("long.model")])
t.check(rc == 0 and obj is not None, "a 1.6 s run exits 0 with its JSON on stdout", err)
t.check(re.search(r"^epoch \d+ +objective ", err, re.M) is not None, "a 1.6 s run prints progress on stderr", err[:300])
rc, out, err = run([a.train, "--quiet"] + long_run + [train_file, path("long.model")])
t.check(rc == 0 and err == "", "--quiet: nothing on stderr", err[:300])
if not sanitizer_run():  # a sanitizer build may take a second to read and fit
    rc, out, err = run([a.train, "--max-epochs", "2", train_file, path("short.model")])
    t.check(rc == 0 and err == "", "a run well under a second prints no progress", err[:300])
rc, out, err = run([a.train, "--verbose", "--max-epochs", "2", train_file, path("short.model")])
t.check(len(re.findall(r"^epoch \d+ ", err, re.M)) >= 2 and "read " in err, "--verbose: every epoch and the file read",
        err[:300])
exits([a.train, "--verbose", "--quiet", train_file, path("x.model")], 1, r"--quiet|--verbose", "--verbose with --quiet")

# --- --C: LIBLINEAR's C, lambda = 1/(nC) (or mu with --penalty none); n = 2000 -------------------
n = 2000
for loss, penalty, C, flag, value in [("ovr-squared-hinge", "l1", 0.5, "--lambda", 1 / (n * 0.5)),
                                      ("crammer-singer", "none", 2.0, "--mu", 1 / (n * 2.0))]:
    common_flags = ["--json", "--loss", loss, "--penalty", penalty, "--max-epochs", "30"]
    rc, by_c, err = run_json([a.train] + common_flags + ["--C", str(C), train_file, path("c.model")])
    rc2, by_value, err2 = run_json([a.train] + common_flags + [flag, repr(value), train_file, path("v.model")])
    what = f"--loss {loss} --penalty {penalty} --C {C}"
    t.check(rc == 0 and rc2 == 0 and by_c is not None and by_value is not None, f"{what} and {flag} exit 0", err + err2)
    if by_c and by_value:
        key = flag[2:]
        t.check(by_c[key] == value, f"{what}: {key} = 1/(nC)", f"{by_c[key]} vs {value}")
        t.check(by_c["objective"] == by_value["objective"], f"{what}: the same fit as {flag} 1/(nC)",
                f"{by_c['objective']} vs {by_value['objective']}")
        t.check(max_abs_difference(read_native_model(path("c.model")), read_native_model(path("v.model"))) == 0,
                f"{what}: the same model as {flag} 1/(nC)")
exits([a.train, "--C", "1", "--lambda", "0.1", train_file, path("x.model")], 1, r"--C|--lambda", "--C with --lambda")
exits([a.train, "--C", "1", "--penalty", "none", "--mu", "0.1", train_file, path("x.model")], 1, r"--C.*--mu",
      "--C with --penalty none and --mu")
exits([a.train, "--C", "0", train_file, path("x.model")], 1, r"--C.*> 0", "--C 0")

# --- --weights FILE: equal to duplicating the samples of weight 2 ---------------------------------
with open(train_file) as f:
    lines = f.readlines()[:300]
small, weights_file, duplicated = path("small.svm"), path("small.weights"), path("duplicated.svm")
weights = [2 if i % 3 == 0 else 1 for i in range(len(lines))]
with open(small, "w") as f:
    f.writelines(lines)
with open(weights_file, "w") as f:
    f.writelines(f"{x}\n" for x in weights)
with open(duplicated, "w") as f:
    for line, x in zip(lines, weights):
        f.writelines([line] * x)
# (1/n) sum c_i l_i + lambda R: the duplicated file has n' = sum of weights samples, so its lambda
# and mu are scaled by n/n' to have the same minimiser.
n_small, n_dup = len(lines), sum(weights)
lam, mu = 2e-3, 1e-3
fit = ["--json", "--loss", "logistic", "--penalty", "l1l2", "--tol", "1e-10", "--max-epochs", "100000"]
rc, weighted, err = run_json([a.train] + fit + ["--lambda", repr(lam), "--mu", repr(mu), "--weights", weights_file,
                                                small, path("weighted.model")])
rc2, dup, err2 = run_json([a.train] + fit + ["--lambda", repr(lam * n_small / n_dup), "--mu", repr(mu * n_small / n_dup),
                                             duplicated, path("duplicated.model")])
t.check(rc == 0 and rc2 == 0 and weighted is not None and dup is not None, "--weights and the duplicated file fit",
        err + err2)
if weighted and dup:
    t.check(weighted["status"] == "converged" and dup["status"] == "converged", "both certified at 1e-10",
            f"{weighted['status']} {dup['status']}")
    ratio = weighted["objective"] / dup["objective"]
    t.check(abs(ratio - n_dup / n_small) < 1e-8, "--weights: F = (n'/n) F of the duplicated file",
            f"ratio {ratio!r}, n'/n {n_dup / n_small!r}")
    diff = max_abs_difference(read_native_model(path("weighted.model")), read_native_model(path("duplicated.model")))
    t.check(diff < 1e-4, "--weights: the same model as duplicating the samples", f"max |dW| {diff}")
bad = path("bad.weights")
with open(bad, "w") as f:
    f.writelines(["1\n", "0.5\n", "  abc\n"] + ["1\n"] * 297)
exits([a.train, "--weights", bad, small, path("x.model")], 2, r"bad\.weights:3:3: expected a weight", "a bad weight line")
with open(bad, "w") as f:
    f.writelines(["1\n"] * 299)
exits([a.train, "--weights", bad, small, path("x.model")], 2, r"bad\.weights: 299 weights for the 300 samples",
      "too few weights")
with open(bad, "w") as f:
    f.writelines(["1\n"] * 299 + ["-1\n"])
exits([a.train, "--weights", bad, small, path("x.model")], 2, r"bad\.weights:300:1: .*>= 0", "a negative weight")

# --- --init MODEL: at the optimum the solve certifies at once; labels must match ----------------------
for solver in ("bcd-ls", "fista", "scd"):
    flags = ["--json", "--solver", solver, "--lambda", "0.01", "--tol", "1e-6", "--max-epochs", "100000"]
    if solver == "scd":
        flags += ["--loss", "ovr-squared-hinge", "--penalty", "l1"]
    rc, first, err = run_json([a.train] + flags + [train_file, path(f"{solver}.model")])
    rc2, again, err2 = run_json([a.train] + flags + ["--init", path(f"{solver}.model"), train_file,
                                                     path(f"{solver}-again.model")])
    t.check(rc == 0 and rc2 == 0 and first and again, f"--init {solver}: exits 0", err + err2)
    if first and again:
        t.check(first["epochs"] > 3 and again["epochs"] <= 1 and again["status"] == "converged",
                f"--init {solver}: from the optimum, converged within one epoch",
                f"cold {first['epochs']} epochs, warm {again['epochs']} epochs, {again['status']}")
        t.check(again["objective"] <= first["objective"] * (1 + 1e-6), f"--init {solver}: no worse than the start",
                f"{again['objective']} vs {first['objective']}")
other_labels = path("other.svm")
with open(other_labels, "w") as f:
    f.write("1 1:1\n7 2:1\n")
exits([a.train, "--init", path("fista.model"), other_labels, path("x.model")], 1, r"--init: .*labels",
      "--init with other labels")
exits([a.train, "--init", path("fista.model"), "--path", "3", train_file, path("x.model")], 1, r"--init",
      "--init with --path")

# --- --cv K: stratified folds, reproducible with --seed; lambda chosen on the folds -------------------
cv = ["--json", "--cv", "5", "--seed", "7", "--lambda", "0.01", "--tol", "1e-4"]
rc, first, err = run_json([a.train] + cv + [train_file, path("cv.model")])
rc2, again, err2 = run_json([a.train] + cv + [train_file, path("cv2.model")])
rc3, other, err3 = run_json([a.train] + cv[:4] + ["8"] + cv[5:] + [train_file, path("cv3.model")])
t.check(rc == rc2 == rc3 == 0 and first and again and other, "--cv 5 exits 0", err + err2 + err3)
if first and again and other:
    folds = first.get("cv_folds", [])
    t.check(len(folds) == 5 and all(0.8 < f <= 1 for f in folds), "--cv 5: five plausible fold accuracies", str(folds))
    # Folds of 400 samples each (2000 = 5 x 400): the mean is their plain mean.
    t.check(abs(first["cv_accuracy"] - sum(folds) / 5) < 1e-12, "--cv: the mean of the folds", str(first))
    t.check(first["cv_folds"] == again["cv_folds"], "--cv: the same folds and scores for the same --seed")
    t.check(first["cv_folds"] != other["cv_folds"], "--cv: other folds for another --seed")
rc, plain, err = run_json([a.train, "--json", "--seed", "7", "--lambda", "0.01", "--tol", "1e-4", train_file,
                           path("plain.model")])
if first and plain:
    t.check(first["objective"] == plain["objective"], "--cv: MODEL is the plain fit on all the data", f"{first} {plain}")

# lambda chosen on the folds, and on a held-out file, for a solver without the early stop
choose = ["--json", "--solver", "fista", "--path", "4:0.01", "--tol", "1e-4", "--test", test_file]
rc, by_cv, err = run_json([a.train] + choose + ["--cv", "3", train_file, path("cv-path.model")])
t.check(rc == 0 and by_cv is not None, "--cv 3 --path 4 exits 0", err)
if by_cv:
    grid = by_cv.get("grid", [])
    means = [p.get("cv_accuracy") for p in grid]
    t.check(len(grid) == 4 and all(isinstance(m, float) for m in means), "--cv --path: a score per lambda", str(grid))
    if len(grid) == 4:
        best = max(range(4), key=lambda k: (means[k], -k))
        t.check(by_cv["lambda"] == grid[best]["lambda"], "--cv --path: the saved model is at the best mean score",
                f"lambda {by_cv['lambda']}, scores {means}")
        rc, refit, err = run_json([a.train, "--json", "--solver", "fista", "--tol", "1e-4", "--lambda",
                                   repr(by_cv["lambda"]), train_file, path("refit.model")])
        t.check(refit is not None and refit["objective"] == by_cv["objective"],
                "--cv --path: the saved model equals a plain fit at the chosen lambda",
                f"{by_cv['objective']} vs {refit and refit['objective']}")
    t.check(isinstance(by_cv.get("test_accuracy"), float) and all("test_accuracy" not in p for p in grid),
            "--cv --path: only the chosen model is scored on --test")
rc, by_heldout, err = run_json([a.train] + choose + ["--heldout", test_file, train_file, path("ho-path.model")])
t.check(rc == 0 and by_heldout is not None, "--heldout --path 4 (fista) exits 0", err)
if by_heldout:
    grid = by_heldout.get("grid", [])
    scores = [p.get("heldout_accuracy") for p in grid]
    t.check(len(grid) == 4 and by_heldout["heldout_accuracy"] == max(scores) and
            by_heldout["lambda"] == grid[scores.index(max(scores))]["lambda"],
            "--heldout --path: the saved model has the best held-out score", str(scores))
exits([a.train, "--cv", "5", "--heldout", test_file, train_file, path("x.model")], 1, r"--cv|--heldout",
      "--cv with --heldout")
exits([a.train, "--cv", "1", train_file, path("x.model")], 1, r"--cv.*>= 2", "--cv 1")
exits([a.train, "--cv", "3", zero, path("x.model"), "--zero-based"], 1, r"--cv: 3 folds for the 2 samples", "--cv 3 on 2 samples")
exits([a.train, "--lambda-grid", "0.1,0.01", train_file, path("x.model")], 1, r"--lambda-grid.*--heldout.*--cv",
      "--lambda-grid without held-out data")

# --- --path for Crammer-Singer: it starts at lambda_start, where W = 0 is proven optimal ----------------
rc, cs, err = run_json([a.train, "--json", "--loss", "crammer-singer", "--penalty", "l1", "--mu", "1e-3", "--path",
                        "4:0.05", train_file, path("cs-path.model")])
t.check(rc == 0 and cs is not None, "--path with crammer-singer exits 0", err)
if cs:
    points = cs.get("path", [])
    t.check(isinstance(cs.get("lambda_start"), float) and "lambda_max" not in cs,
            "--path crammer-singer: reports lambda_start (an upper bound on lambda_max)", str(cs)[:300])
    # W = 0 is optimal at lambda_start: F* = F(0) = 1 (every margin violated by 1), and the first
    # point's F is within its certified gap of it (the solver may keep entries of ~1e-7).
    first = points[0] if points else {}
    t.check(len(points) == 4 and first["status"] == "converged" and
            abs(first["objective"] - 1) <= first["duality_gap"] + 1e-12 and points[-1]["nnz_rows"] > 10,
            "--path crammer-singer: F(0) optimal at lambda_start, rows enter below",
            str([(p["lambda"], p["objective"], p["duality_gap"], p["nnz_rows"], p["status"]) for p in points]))

# --- MODEL '-': the model on stdout, the report on stderr; --json cannot share stdout with it ---------
rc, out, err = run([a.train, "--max-epochs", "5", train_file, "-"])
t.check(rc == 0 and out.startswith("sparsemc-model ") and "status max_iter" in err and "duality gap" not in out,
        "MODEL '-': the model on stdout, the report on stderr", f"stdout {out[:80]!r} stderr {err[:200]!r}")
with open(path("stdout.model"), "w") as f:
    f.write(out)
rc, out, err = run([a.predict, test_file, path("stdout.model")])
t.check(rc == 0 and "accuracy" in out, "MODEL '-': the model written to stdout predicts", err)
exits([a.train, "--json", train_file, "-"], 1, r"--json: MODEL '-'", "--json with MODEL '-'")

# --- predict --proba / --scores: LIBLINEAR's -b 1 layout ---------------------------------------------
rc, _, err = run([a.train, "--loss", "logistic", "--lambda", "1e-3", train_file, path("logistic.model")])
t.check(rc == 0, "a logistic model", err)
rc, out, err = run([a.predict, "--proba", test_file, path("logistic.model"), path("proba.out")])
t.check(rc == 0, "predict --proba exits 0", err)
if rc == 0:
    with open(path("proba.out")) as f:
        rows = [line.split() for line in f]
    t.check(rows[0] == ["labels", "1", "2", "3"], "--proba: a header naming the columns' labels", str(rows[0]))
    sums = [sum(float(x) for x in r[1:]) for r in rows[1:]]
    t.check(len(rows) == 1187 and all(abs(s - 1) < 1e-12 for s in sums), "--proba: every row sums to 1",
            f"{len(rows)} rows, sums from {min(sums)} to {max(sums)}")
    argmax_ok = all(r[0] == rows[0][1 + max(range(3), key=lambda k: float(r[1 + k]))] for r in rows[1:])
    t.check(argmax_ok, "--proba: the label is the most probable class")
rc, out, err = run([a.predict, "--scores", test_file, path("fista.model"), "-"])
t.check(rc == 0, "predict --scores exits 0", err)
if rc == 0:
    rows = [line.split() for line in out.splitlines()]
    t.check(rows[0][0] == "labels" and all(len(r) == 4 for r in rows[1:]), "--scores: a header and K values a line")
    argmax_ok = all(r[0] == rows[0][1 + max(range(3), key=lambda k: float(r[1 + k]))] for r in rows[1:])
    t.check(argmax_ok, "--scores: the label has the largest score")
# A LIBLINEAR logistic model (-s 0, one-vs-rest): --proba equals liblinear-predict -b 1 (%g, 6 digits).
if shutil.which("liblinear-train") and shutil.which("liblinear-predict"):
    rc, _, err = run(["liblinear-train", "-q", "-s", "0", train_file, path("ll.model")])
    rc2, _, err2 = run(["liblinear-predict", "-q", "-b", "1", test_file, path("ll.model"), path("ll-b1.out")])
    rc3, _, err3 = run([a.predict, "--proba", test_file, path("ll.model"), path("ll-proba.out")])
    t.check(rc == rc2 == rc3 == 0, "liblinear -s 0: train, predict -b 1 and sparsemc-predict --proba", err + err2 + err3)
    if rc == rc2 == rc3 == 0:
        with open(path("ll-b1.out")) as f1, open(path("ll-proba.out")) as f2:
            theirs, ours = [ln.split() for ln in f1], [ln.split() for ln in f2]
        t.check(theirs[0] == ours[0], "--proba: LIBLINEAR's header", f"{theirs[0]} vs {ours[0]}")
        worst = max(abs(float(x) - float(y)) for r1, r2 in zip(theirs[1:], ours[1:]) for x, y in zip(r1[1:], r2[1:]))
        same_labels = all(r1[0] == r2[0] for r1, r2 in zip(theirs[1:], ours[1:]))
        t.check(len(theirs) == len(ours) and same_labels and worst < 1e-5,
                "--proba of a LIBLINEAR -s 0 model = liblinear-predict -b 1", f"max difference {worst}")
else:
    print("SKIPPED: liblinear-train/liblinear-predict not installed (the --proba = -b 1 check)")
exits([a.predict, "--proba", test_file, path("fista.model"), path("x.out")], 1, r"--proba: .*logistic",
      "--proba of a squared-hinge model")
exits([a.predict, "--proba", test_file, path("logistic.model")], 1, r"--proba: .*OUTPUT", "--proba without OUTPUT")
exits([a.predict, "--proba", "--scores", test_file, path("logistic.model"), "-"], 1, r"--proba|--scores",
      "--proba with --scores")

t.done()

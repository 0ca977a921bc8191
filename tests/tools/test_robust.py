#!/usr/bin/python3
"""Issue 17 through the tools: inputs and model files that cannot hurt.

Each defect of the issue with its reproducer, run through sparsemc-train / -predict / -eval:
atomic writes and the early check of MODEL's directory (1), header counts checked before they
size anything (2), O(K log K) label tables (3), a non-finite objective is exit 3 (4), recorded
hyper-parameters validated (5), bytes after a gzip/bzip2 stream (6), a label-less line in a
multiclass file (7), underflow is 0 (8), I/O errors name the file (9), a cut version-3 model
(10), memory that follows the features used, not the largest index (11). Needs no data set:
every file is written here.
"""

import bz2
import gzip
import os
import re
import shutil
import stat
import subprocess
import time

from common import Checks, parse_args, run, run_json, sanitizer_run

a = parse_args()
t = Checks()
w = a.work


def path(name):
    return os.path.join(w, name)


def write(name, text, mode="w"):
    with open(path(name), mode) as f:
        f.write(text)
    return path(name)


def expect(cmd, status, patterns=(), what=None):
    rc, out, err = run(cmd)
    label = what or " ".join(os.path.basename(str(c)) for c in cmd)
    t.check(rc == status, f"{label}: exit {status}", f"got {rc}; stderr: {err.strip()[:500]}")
    for p in patterns:
        t.check(re.search(p, err) is not None, f"{label}: stderr matches {p!r}", err.strip()[:500])
    return rc, out, err


train = write("train.svm", "".join(f"{1 + i % 3} {1 + i % 5}:{0.5 + i % 7} {6 + i % 4}:{(i % 11) / 10}\n" for i in range(60)))
quick = ["--max-epochs", "5"]

# --- 1: atomic writes; MODEL's directory is checked before training ------------------------------
model = path("m.model")
expect([a.train, train, model] + quick, 0)
old = open(model, "rb").read()
t.check(b"sparsemc-model 3" in old and old.endswith(b"end\n"), "1: the native model is version 3 with an end marker")
t.check(not [f for f in os.listdir(w) if ".tmp-" in f], "1: no temporary file is left after a write")
start = time.time()
expect([a.train, train, "/nonexistdir/x.model"] + quick, 2, [r"/nonexistdir/x\.model: cannot be written"],
       "1: a model in a missing directory")
expect([a.predict, train, model, "/nonexistdir/out.txt"], 2, [r"/nonexistdir/out\.txt"], "1: predictions into a missing directory")
if os.geteuid() != 0:
    locked = path("locked")
    os.makedirs(locked, exist_ok=True)
    shutil.copy(model, os.path.join(locked, "m.model"))
    os.chmod(locked, stat.S_IRUSR | stat.S_IXUSR)
    expect([a.train, train, os.path.join(locked, "m.model")] + quick, 2, [r"locked/m\.model: cannot be written"],
           "1: a model in a read-only directory")
    t.check(open(os.path.join(locked, "m.model"), "rb").read() == old, "1: the old model in the read-only directory is intact")
    os.chmod(locked, stat.S_IRWXU)
# A full disk (root only: a 16 KiB tmpfs holding an old model and a filler).
full = path("full")
os.makedirs(full, exist_ok=True)
rc, _, _ = run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", full]) if os.geteuid() == 0 else (1, "", "")
if rc == 0:
    try:
        shutil.copy(model, os.path.join(full, "m.model"))
        with open(os.path.join(full, "filler"), "wb", buffering=0) as f:
            try:
                f.write(b"x" * (16 * 1024 - len(old) - 2048))
            except OSError:
                pass
        big = write("big.svm", "".join(f"{1 + i % 40} " + " ".join(f"{j}:{(i * j) % 7 + 1}" for j in range(1, 60)) + "\n"
                                       for i in range(400)))
        expect([a.train, big, os.path.join(full, "m.model"), "--max-epochs", "2", "--lambda", "1e-6"], 2, [r"m\.model"],
               "1: training onto a full disk")
        t.check(open(os.path.join(full, "m.model"), "rb").read() == old, "1: the old model survives a full disk")
        t.check(not [f for f in os.listdir(full) if ".tmp-" in f], "1: no temporary is left on the full disk")
    finally:
        run(["umount", full])
else:
    print("note: full-disk case skipped (needs root and tmpfs)")

# --- 2: header counts ----------------------------------------------------------------------------
head = ["scalar double", "n_features 5", "n_classes 3", "labels 1 2 3", "intercept none", "bias -1", "loss logistic",
        "penalty l1", "solver fista", "lambda 0.01", "mu 0", "status converged"]


def native(tail, header=None, version=3):
    return "\n".join([f"sparsemc-model {version}"] + (header or head) + tail) + "\n"


empty_rows = ["rows 0", "entries 0", "layout dense", "end"]
h = list(head)
h[2] = "n_classes 2147483647"
bad = write("classes.model", native(empty_rows, h))
expect([a.predict, train, bad], 2, [re.escape(bad) + r":4:11: n_classes 2147483647"], "2: n_classes 2147483647")
h = list(head)
h[1] = "n_features 1000000000000"
bad = write("rows.model", native(["rows 1000000000000", "entries 0", "layout dense", "end"], h))
expect([a.eval, train, bad], 2, [re.escape(bad) + r":14:6: rows 1000000000000"], "2: rows 10^12")
wide = write("wide.model", native(["rows 1", "entries 3", "layout dense", "999999999999 1 2 3", "end"], h))
start = time.time()
expect([a.predict, train, wide], 0, [], "2: n_features 10^12 with one stored row predicts")
t.check(time.time() - start < 5, "2: ... in seconds (nothing sized by n_features)", f"{time.time() - start:.1f} s")
bad = write("ll_classes.model", "solver_type MCSVM_CS\nnr_class 2147483647\nlabel 1 2 3\nnr_feature 2\nbias -1\nw\n1 2 3\n4 5 6\n")
expect([a.predict, train, bad], 2, [re.escape(bad) + r":2:10: nr_class"], "2: LIBLINEAR nr_class 2147483647")

# --- 3: 300,000 labels load fast -----------------------------------------------------------------
K = 300000
labels = " ".join(str(k + 1) for k in range(K))
ll = write("ll_many.model", f"solver_type MCSVM_CS\nnr_class {K}\nlabel {labels}\nnr_feature 0\nbias -1\nw\n")
nat = write("many.model", native(["rows 0", "entries 0", "layout dense", "end"],
                                 ["scalar double", "n_features 10", f"n_classes {K}", "labels " + labels] + head[4:]))
for m in (ll, nat):
    start = time.time()
    expect([a.predict, train, m], 0, [], f"3: {os.path.basename(m)} with {K} labels")
    t.check(time.time() - start < 10, f"3: ... loads and predicts in seconds", f"{time.time() - start:.1f} s")

# --- 4: a non-finite objective is exit 3 ---------------------------------------------------------
over = write("overflow.model", native(["rows 1", "0 1e308 -1e308"],
                                      ["scalar double", "n_features 2", "n_classes 2", "labels 1 2"] + head[4:], 1))
data2 = write("two.svm", "1 1:10\n2 1:10\n")
expect([a.eval, data2, over], 3, [r"not finite"], "4: eval of overflowing weights (text)")
rc, out, _ = expect([a.eval, data2, over, "--json"], 3, [r"not finite"], "4: eval of overflowing weights (--json)")
t.check('"objective":null' in out.replace(" ", ""), "4: --json still reports the objective as null", out[:300])

# --- 5: recorded hyper-parameters ----------------------------------------------------------------
h = list(head)
h[9] = "lambda -1"
bad = write("lambda.model", native(["rows 0", "entries 0", "layout dense", "end"], h))
expect([a.eval, train, bad], 2, [re.escape(bad) + r":11:8: lambda must be a number >= 0"], "5: lambda -1")
h = list(head)
h[10] = "mu -5"
bad = write("mu.model", native(["rows 0", "entries 0", "layout dense", "end"], h))
expect([a.eval, train, bad], 2, [re.escape(bad) + r":12:4: mu must be a number >= 0"], "5: mu -5")

# --- 6: trailing bytes after a compressed stream -------------------------------------------------
text = open(train).read()
gz = path("appended.svm.gz")
with open(gz, "wb") as f:
    f.write(gzip.compress(text[: len(text) // 2].encode()) + text[len(text) // 2:].encode())
expect([a.train, gz, path("gz.model")] + quick, 2, [re.escape(gz) + r": trailing bytes after the gzip data"], "6: text after gzip")
bz = path("appended.svm.bz2")
with open(bz, "wb") as f:
    f.write(bz2.compress(text.encode()) + b"3 1:1\n")
expect([a.train, bz, path("bz.model")] + quick, 2, [re.escape(bz) + r": trailing bytes after the bzip2 data"], "6: text after bzip2")
ok_gz = path("members.svm.gz")
with open(ok_gz, "wb") as f:
    f.write(gzip.compress(text[: len(text) // 2].encode()) + gzip.compress(text[len(text) // 2:].encode()))
expect([a.train, ok_gz, path("gz.model")] + quick, 0, [], "6: two gzip members are one file")

# --- 7: one deleted byte does not make a file multilabel -----------------------------------------
lines = text.splitlines(keepends=True)
lines[6] = lines[6][1:]  # " 2:..." : the label deleted
cut = write("deleted.svm", "".join(lines))
for loss in ([], ["--loss", "logistic"]):
    expect([a.train, cut, path("d.model")] + quick + loss, 2, [re.escape(cut) + r":7:2: missing label"],
           "7: a label-less line in a multiclass file " + " ".join(loss))
expect([a.train, cut, path("d.model"), "--loss", "logistic", "--multilabel"] + quick, 0, [], "7: ... accepted with --multilabel")

# --- 8: underflow is 0 ---------------------------------------------------------------------------
tiny = write("tiny.svm", text + "1 1:1e-5000 2:1e-400\n")
expect([a.train, tiny, path("t.model")] + quick, 0, [], "8: 1e-5000 reads as 0")
huge = write("huge.svm", text + "1 1:1e5000\n")
expect([a.train, huge, path("t.model")] + quick, 2, [re.escape(huge) + r":61:5: value '1e5000' overflows double"], "8: 1e5000")

# --- 9: every I/O error names the file -----------------------------------------------------------
d = path("dir.model")
os.makedirs(d, exist_ok=True)
for tool in (a.predict, a.eval):
    expect([tool, train, d], 2, [re.escape(d) + r": .*directory"], f"9: {os.path.basename(tool)} with a directory as MODEL")
expect([a.train, train, d] + quick, 2, [re.escape(d) + r": .*directory"], "9: train with a directory as MODEL")
expect([a.train, w] + quick + [path("x.model")], 2, [re.escape(w) + r": .*directory"], "9: a directory as TRAIN")

# --- 10: a cut version-3 model -------------------------------------------------------------------
full_text = open(model).read()
cut_model = write("cut.model", full_text[: full_text.rfind("end") - 2])
expect([a.predict, train, cut_model], 2, [re.escape(cut_model) + r":\d+:1: unexpected end of file"], "10: a cut v3 model")
narrow = write("narrow.svm", "".join(f"{1 + i % 3} {1 + i % 5}:{0.5 + i % 7}\n" for i in range(12)))  # features of the head's d
v1 = write("v1.model", native(["rows 1", "0 1 2 3"], version=1))
expect([a.predict, narrow, v1], 0, [], "10: version 1 still reads")
v2 = write("v2.model", native(["rows 1", "0 1:2"], version=2))
expect([a.predict, narrow, v2], 0, [], "10: version 2 still reads")

# --- 11: memory follows the features used, not the largest index ---------------------------------
def peak_rss_mb(cmd):
    """Runs a command; returns (exit status, its peak resident memory in MB)."""
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


def stored_rows(model_file):
    """A native model's d and its stored rows as {feature: the row's weights as written}."""
    lines = open(model_file).read().splitlines()
    d = int(next(ln.split()[1] for ln in lines if ln.startswith("n_features ")))
    start = next(i for i, ln in enumerate(lines) if ln.startswith("rows "))
    n_rows = int(lines[start].split()[1])
    body = [ln for ln in lines[start + 1:] if ln.split()[0] not in ("entries", "layout")][:n_rows]
    return d, {int(ln.split(maxsplit=1)[0]): ln.split(maxsplit=1)[1] for ln in body}


# Hashed features: five used of 10^8 possible. The same data with its features renumbered
# 1..5 must give the very same fit (the solvers see the same compact columns).
hashed_rows = ["1 1:0.5 100000000:1", "2 2:1 3:0.2", "3 1:1 5:2", "1 1:0.7 100000000:0.5", "2 3:1 5:0.1", "3 2:0.4 5:1"]
renumber = {"1": "1", "2": "2", "3": "3", "5": "4", "100000000": "5"}
hashed = write("hashed.svm", "".join(r + "\n" for r in hashed_rows))
renumbered = write("renumbered.svm", "".join(
    " ".join([r.split()[0]] + [renumber[e.split(":")[0]] + ":" + e.split(":")[1] for e in r.split()[1:]]) + "\n"
    for r in hashed_rows))
limit_mb = 500 if sanitizer_run() else 50  # the address sanitizer's shadow memory comes on top
for fit in (["--lambda", "0.01"],
            ["--loss", "crammer-singer", "--penalty", "none", "--mu", "0.01"],
            ["--solver", "fista", "--loss", "logistic", "--lambda", "0.01", "--intercept"],
            ["--solver", "scd-ls", "--penalty", "l1", "--lambda", "0.01", "--bias", "1"],
            ["--solver", "fcbcfw", "--loss", "crammer-singer", "--penalty", "l1", "--lambda", "0.01", "--mu", "0.1"],
            ["--path", "3:0.1"]):
    what = "11: " + " ".join(fit)
    wide_model, narrow_model = path("hashed.model"), path("renumbered.model")
    rc, mb = peak_rss_mb([a.train, hashed, wide_model] + fit)
    t.check(rc == 0, f"{what}: trains on features up to 10^8", f"exit {rc}")
    t.check(mb < limit_mb, f"{what}: peak memory {mb:.0f} MB < {limit_mb} MB")
    expect([a.train, renumbered, narrow_model] + fit, 0, [], what + " on the renumbered file")
    (d_wide, wide), (d_narrow, narrow) = stored_rows(wide_model), stored_rows(narrow_model)
    bias = 1 if "--bias" in fit else 0
    t.check(d_wide == 100000000 + bias and d_narrow == 5 + bias, f"{what}: the model keeps the data's d",
            f"{d_wide}, {d_narrow}")
    back = {int(v) - 1: int(k) - 1 for k, v in renumber.items()}
    back[5] = 100000000  # the bias feature
    t.check(len(wide) > 0 and {back[j]: row for j, row in narrow.items()} == wide,
            f"{what}: the rows sit at their original features, with the renumbered fit's weights",
            f"{wide} vs {narrow}")
    rc, obj, err = run_json([a.eval, hashed, wide_model, "--json"])
    rc2, obj2, _ = run_json([a.eval, renumbered, narrow_model, "--json"])
    t.check(rc == 0 and rc2 == 0 and obj["objective"] == obj2["objective"] and obj["duality_gap"] == obj2["duality_gap"],
            f"{what}: eval gives the renumbered fit's objective and gap", f"{obj} vs {obj2}; {err.strip()[:300]}")
    rc, mb = peak_rss_mb([a.eval, hashed, wide_model])
    t.check(rc == 0 and mb < limit_mb, f"{what}: eval in {mb:.0f} MB < {limit_mb} MB", f"exit {rc}")
    rc, mb = peak_rss_mb([a.predict, hashed, wide_model, path("hashed.pred")])
    t.check(rc == 0 and mb < limit_mb, f"{what}: predict in {mb:.0f} MB < {limit_mb} MB", f"exit {rc}")

t.done()

#!/usr/bin/python3
"""Exit statuses and messages of sparsemc-train / -predict / -eval.

0 success (max_iter and time_limit included), 1 usage error naming the option and what it
accepts, 2 bad input with `file:line:column: what`, 3 numerical failure; --help documents
every flag with its default.
"""

import os
import re

from common import Checks, check_certificate, parse_args, require_files, run, run_json

a = parse_args()
t = Checks()
train_file = os.path.join(a.data, "dna.scale")
test_file = os.path.join(a.data, "dna.scale.t")
require_files(train_file, test_file)
model = os.path.join(a.work, "cli.model")
quick = ["--max-epochs", "3"]


def expect(cmd, status, stderr_patterns=(), what=None):
    rc, out, err = run(cmd)
    label = what or " ".join(os.path.basename(str(c)) for c in cmd[1:])
    ok = t.check(rc == status, f"{label}: exit {status}", f"got {rc}; stderr: {err.strip()[:400]}")
    for pattern in stderr_patterns:
        t.check(re.search(pattern, err) is not None, f"{label}: stderr matches {pattern!r}", err.strip()[:400])
    return rc, out, err


# --- --help: exit 0, every flag listed, every option with its default ---------------------------
train_flags = ["--loss", "--penalty", "--lambda", "--mu", "--solver", "--tol", "--max-epochs", "--time-limit",
               "--seed", "--threads", "--bias", "--intercept", "--class-weight", "--zero-based", "--float",
               "--model-format", "--test", "--verbose", "--json", "--path"]
for tool, flags in [(a.train, train_flags), (a.predict, ["--json", "--top-k", "--zero-based", "--threads"]),
                    (a.eval, ["--loss", "--penalty", "--lambda", "--mu", "--json", "--threads"])]:
    rc, out, err = run([tool, "--help"])
    name = os.path.basename(tool)
    t.check(rc == 0, f"{name} --help exits 0", err)
    for flag in flags:
        t.check(re.search(r"^\s+" + re.escape(flag) + r"\b", out, re.M) is not None, f"{name} --help lists {flag}")
    # Each option's entry (from its line to the next option line) states a default.
    entries = re.split(r"\n(?=\s{2}-)", out.split("Options:", 1)[1].split("\n\n")[0])
    for entry in entries:
        if not entry.strip():
            continue
        first = entry.strip().split()[0]
        if first.startswith("-h") or first == "--version":  # actions, not settings
            continue
        t.check("default" in entry, f"{name} --help: {first} states its default", entry)
    t.check("Exit status" in out, f"{name} --help documents the exit statuses")
rc, out, _ = run([a.train, "--help"])
t.check("fista" in out and "auto" in out, "sparsemc-train --help lists the registered solvers")

# --- 0: success, max_iter and time_limit are successes --------------------------------------------
rc, obj, err = run_json([a.train, "--json", "--solver", "fista", "--max-epochs", "1", "--tol", "1e-12",
                         train_file, model])
t.check(rc == 0, "--max-epochs 1 exits 0", err)
t.check(obj is not None and obj.get("status") == "max_iter", "--max-epochs 1 reports status max_iter", str(obj))
if obj:
    rel = check_certificate(t, obj, "--max-epochs 1", 1e-12)
    t.check(rel is not None and rel > 1e-12, "--max-epochs 1: relative_gap > tol, how far from certified", str(rel))
# A budget of 1e-9 s ends the solve after its first epoch: time_limit, never converged at tol 1e-12.
rc, obj, err = run_json([a.train, "--json", "--time-limit", "1e-9", "--tol", "1e-12", train_file, model])
t.check(rc == 0, "--time-limit exits 0", err)
t.check(obj is not None and obj.get("status") == "time_limit", "--time-limit reports status time_limit", str(obj))
if obj:
    rel = check_certificate(t, obj, "--time-limit", 1e-12)
    t.check(rel is not None and rel > 1e-12, "--time-limit: relative_gap > tol, how far from certified", str(rel))

# The text report carries the certificate, for every status (at the default tol 1e-3 and cut short).
for flags, status in [([], "converged"), (["--max-epochs", "1", "--tol", "1e-12"], "max_iter")]:
    rc, out, err = run([a.train, *flags, train_file, model])
    m = re.search(r"^duality gap (\S+) \(relative (\S+)\)(.*)$", out, re.M)
    st = re.search(r"^status (\S+) after", out, re.M)
    if t.check(rc == 0 and m is not None and st is not None, f"text {' '.join(flags)}: a 'duality gap X (relative Y)' line",
               out + err):
        gap, rel = float(m.group(1)), float(m.group(2))
        t.check(st.group(1) == status, f"text {' '.join(flags)}: status {status}", st.group(1))
        tol = float(flags[flags.index("--tol") + 1]) if "--tol" in flags else 1e-3  # the default
        if status == "converged":
            t.check(0 <= rel <= tol and gap >= 0, f"text {' '.join(flags)}: certified", m.group(0))
        else:
            t.check(rel > tol and "not certified" in m.group(3), f"text {' '.join(flags)}: says it is not certified",
                    m.group(0))
rc, out, err = run([a.train, "--path", "3", "--tol", "1e-4", train_file, model])
lines = [line for line in out.splitlines() if line.startswith("lambda ")]
t.check(rc == 0 and len(lines) == 3 and all(re.search(r"converged  relative gap \S+", line) for line in lines),
        "text --path: every line carries its status and relative gap", out + err)

# --help: one meaning of --tol for every solver of (1); the solvers of other problems say theirs.
rc, help_text, _ = run([a.train, "--help"])
tol_entry = re.search(r"^  --tol.*?(?=^ {1,4}-)", help_text, re.M | re.S)
tol_text = " ".join(tol_entry.group(0).split()) if tol_entry else ""
t.check("relative duality gap of (1)" in tol_text and "default 1e-3" in tol_text,
        "--help: --tol is the relative duality gap of (1), default 1e-3", tol_text)
t.check(all(name in tol_text for name in ("fbpd-epi", "gls-cal", "stagewise")),
        "--help: --tol says what fbpd-epi, gls-cal and stagewise stop on", tol_text)
t.check("default --tol" not in help_text, "--help: no per-solver --tol defaults in the solver list")
rc, listing, err = run_json([a.train, "--list-solvers"])
if t.check(rc == 0 and listing and isinstance(listing.get("solvers"), list), "--list-solvers prints the table", err):
    names = {s["name"]: s for s in listing["solvers"]}
    t.check({"fista", "bcd-ls"} <= set(names) and all(s["losses"] and s["penalties"] for s in names.values()),
            "--list-solvers: names, losses, penalties", str(listing)[:400])
    t.check(all(not names[n]["certifies"] for n in ("fbpd-epi", "gls-cal", "stagewise") if n in names) and
            all(names[n]["certifies"] for n in ("fista", "bcd-ls", "fbpd") if n in names),
            "--list-solvers: which solvers certify (1)", str(listing)[:600])
expect([a.predict, test_file, model], 0)
expect([a.eval, train_file, model], 0)

# --- 1: usage errors name the option and what it accepts ------------------------------------------
expect([a.train, "--bogus", train_file, model], 1, [r"--bogus"])
expect([a.train, "--loss", "hinge", train_file, model], 1, [r"--loss", r"squared-hinge", r"crammer-singer"])
expect([a.train, "--penalty", "l2", train_file, model], 1, [r"--penalty", r"l1l2"])
expect([a.train, "--lambda", "abc", train_file, model], 1, [r"--lambda", r">= 0"])
expect([a.train, "--lambda", "-1", train_file, model], 1, [r"--lambda", r">= 0"])
expect([a.train, "--mu", "nan", train_file, model], 1, [r"--mu"])
expect([a.train, "--tol", "0", train_file, model], 1, [r"--tol", r"> 0"])
expect([a.train, "--max-epochs", "2.5", train_file, model], 1, [r"--max-epochs", r"integer"])
expect([a.train, "--threads", "-1", train_file, model], 1, [r"--threads", r">= 0"])
expect([a.train, "--seed", "-3", train_file, model], 1, [r"--seed"])
expect([a.train, "--time-limit", "-1", train_file, model], 1, [r"--time-limit"])
expect([a.train, "--bias", "-2", train_file, model], 1, [r"--bias"])
expect([a.train, "--model-format", "xml", train_file, model], 1, [r"--model-format", r"liblinear"])
expect([a.train, "--solver", "newton", train_file, model], 1, [r"--solver", r"fista"])
expect([a.train, "--solver", "fista", "--loss", "crammer-singer", train_file, model], 1,
       [r"fista", r"crammer-singer", r"accepts", r"logistic"], "unsupported loss for a solver")
expect([a.train, "--class-weight", "7:2", train_file, model], 1, [r"--class-weight", r"7"])
expect([a.train, "--class-weight", "1=2", train_file, model], 1, [r"--class-weight", r"LABEL:W"])
expect([a.train, "--path", "0", train_file, model], 1, [r"--path"])
expect([a.train, "--path", "5:2", train_file, model], 1, [r"--path", r"RATIO"])
expect([a.train, "--path", "3", "--lambda", "0.1", train_file, model], 1, [r"--path|--lambda"])
expect([a.train, "--path", "3", "--penalty", "none", train_file, model], 1, [r"--path", r"none"])
# --penalty none has no lambda term: a lambda other than 0 is refused, not ignored; 0 is reported.
expect([a.train, "--penalty", "none", "--lambda", "0.5", "--mu", "0.01", train_file, model], 1,
       [r"--lambda", r"none", r"--mu"], "--lambda with --penalty none")
expect([a.train, "--penalty", "none", "--C", "1", "--mu", "0.01", train_file, model], 1, [r"--C", r"--mu"])
expect([a.train, "--penalty", "none", "--lambda-grid", "0.1,0.01", "--cv", "2", "--mu", "0.01", train_file, model],
       1, [r"--lambda-grid", r"none"])
rc, obj, err = run_json([a.train, "--json", "--max-epochs", "1", "--penalty", "none", "--mu", "0.01", train_file, model])
t.check(rc == 0 and obj and obj["lambda"] == 0, "--penalty none reports lambda 0", f"exit {rc}: {obj}")
expect([a.train, train_file], 1, [r"MODEL"], "missing MODEL")
expect([a.train, train_file, model, "extra"], 1, [r"extra"], "extra positional")
expect([a.predict, "--top-k", "0", test_file, model], 1, [r"--top-k"])
expect([a.predict, "--threads", "-1", test_file, model], 1, [r"--threads", r">= 0"])
expect([a.eval, "--threads", "x", train_file, model], 1, [r"--threads"])
expect([a.predict, "--top-k", "4", test_file, model], 1, [r"--top-k", r"3"], "--top-k beyond K")
expect([a.eval, "--loss", "hinge", train_file, model], 1, [r"--loss"])
expect([a.eval, "--lambda", "x", train_file, model], 1, [r"--lambda"])
expect([a.eval, train_file, model, "--class-weight", "9:1"], 1, [r"--class-weight"])

# --- the registry: what auto picks, and combinations a solver refuses ----------------------------------
rc, help_text, _ = run([a.train, "--help"])
registered = set(re.findall(r"^  ([a-z0-9-]+): ", help_text.split("Solvers", 1)[-1], re.M))


def auto_choice(*flags):
    rc, obj, err = run_json([a.train, "--json", "--max-epochs", "1", *flags, train_file, model])
    return obj.get("solver") if rc == 0 and obj else f"exit {rc}: {err.strip()[:200]}"


# Issue 4: bcd-ls for the smooth losses once registered (fista before); a specialised family may
# claim a loss of its own with a higher priority (scd-ls: ovr-squared-hinge), and fista takes the
# coupled losses on tall data (dna: 2000 samples, 180 features; docs/bcd.md, "auto on tall data").
smooth_default = "bcd-ls" if "bcd-ls" in registered else "fista"
for loss, others in [("squared-hinge", {"fista"}), ("logistic", {"fista"}), ("ovr-squared-hinge", {"scd-ls"}),
                     ("least-squares", {"gls"})]:
    got = auto_choice("--loss", loss)
    allowed = {smooth_default} | (others & registered)
    t.check(got in allowed, f"auto picks one of {sorted(allowed)} for {loss}", got)
wide = os.path.join(a.work, "wide.svm")
with open(wide, "w") as f:
    f.write("".join(f"{1 + i % 3} {1 + 7 * i}:1 {2 + 7 * i}:0.5\n" for i in range(30)))


def auto_on(data_file, loss, *flags):
    rc, obj, err = run_json([a.train, "--json", "--max-epochs", "1", "--loss", loss, *flags, data_file, model])
    return obj.get("solver") if rc == 0 and obj else f"exit {rc}: {err.strip()[:200]}"


if "bcd-ls" in registered:
    # The coupled losses: fista on tall data, bcd-ls on wide data.
    for loss in ("squared-hinge", "logistic"):
        for data_file, expected in ((train_file, "fista"), (wide, "bcd-ls")):
            got = auto_on(data_file, loss, "--penalty", "l1l2")
            t.check(got == expected, f"auto picks {expected} for {loss} on {os.path.basename(data_file)}", got)
if {"bcd-ls", "scd-ls"} <= registered:
    # The one-vs-rest problem: scd-ls on tall data, bcd-ls on wide data (docs/scd.md, "auto's choice").
    for data_file, expected in ((train_file, "scd-ls"), (wide, "bcd-ls")):
        got = auto_on(data_file, "ovr-squared-hinge", "--penalty", "l1")
        t.check(got == expected, f"auto picks {expected} for ovr-squared-hinge on {os.path.basename(data_file)}", got)
# Every loss x penalty x mu = 0 / mu > 0: auto picks a solver of (1) that accepts the pair (the
# table of --list-solvers, read independently of auto), or refuses naming what is registered.
rc, table, err = run_json([a.train, "--list-solvers"])
solvers = table["solvers"] if table else []
for loss in sorted({x for s in solvers for x in s["losses"]}):
    for penalty in sorted({x for s in solvers for x in s["penalties"]}):
        for mu in ("0", "0.01"):
            got = auto_choice("--loss", loss, "--penalty", penalty, "--mu", mu)
            spec = next((s for s in solvers if s["name"] == got), None)
            accepting = [s["name"] for s in solvers if loss in s["losses"] and penalty in s["penalties"]]
            if spec is None:
                t.check(got.startswith("exit 1") and "--solver auto" in got,
                        f"auto for {loss} + {penalty}, mu {mu}: refused with the reason when it picks none", got)
            else:
                t.check(loss in spec["losses"] and penalty in spec["penalties"] and spec["certifies"],
                        f"auto for {loss} + {penalty}, mu {mu}: {got} accepts it and solves (1)",
                        f"{got} of {accepting}")
if "fcbcfw" in registered:
    got = auto_choice("--loss", "crammer-singer", "--penalty", "l1", "--mu", "0.01")
    t.check(got == "fcbcfw", "auto picks fcbcfw for crammer-singer + l1 with mu > 0", got)
if "sdm" in registered:
    # Issue 16: the ridge-only Crammer-Singer SVM goes to the sequential dual method, unless the
    # data is multilabel or the fit must stop on a held-out set (fcbcfw's).
    # At lambda = 0 every penalty is the ridge term alone: the default l1l2 included.
    for flags in (["--penalty", "none"], ["--penalty", "l1", "--lambda", "0"], ["--lambda", "0"],
                  ["--penalty", "l1linf", "--lambda", "0"]):
        got = auto_choice("--loss", "crammer-singer", "--mu", "0.01", *flags)
        t.check(got == "sdm", f"auto picks sdm for crammer-singer {' '.join(flags)} with mu > 0", got)
    got = auto_choice("--loss", "crammer-singer", "--penalty", "none", "--mu", "0.01", "--heldout", test_file)
    t.check(got == "fcbcfw", "auto picks fcbcfw for the ridge-only Crammer-Singer SVM with --heldout", got)
    multilabel = os.path.join(a.work, "multilabel.svm")
    with open(multilabel, "w") as f:
        f.write("".join(f"{1 + i % 3},{1 + (i + 1) % 3} {1 + i % 5}:{0.5 + i % 7}\n" for i in range(30)))
    rc, obj, err = run_json([a.train, "--json", "--max-epochs", "1", "--loss", "crammer-singer", "--penalty", "none",
                             "--mu", "0.01", multilabel, model])
    got = obj.get("solver") if rc == 0 and obj else f"exit {rc}: {err.strip()[:200]}"
    t.check(got == "fcbcfw", "auto re-chooses fcbcfw once the data read is multilabel", got)
    expect([a.train, "--solver", "sdm", "--loss", "crammer-singer", "--penalty", "l1l2", "--lambda", "0.1", "--mu", "1",
            train_file, model], 1, [r"--solver sdm", r"--lambda 0", r"--penalty l1"], "sdm with l1l2 at lambda > 0")
    rc, out, err = run([a.train, "--quiet", "--solver", "sdm", "--loss", "crammer-singer", "--penalty", "l1", "--lambda",
                        "0.01", "--mu", "0.1", train_file, model])
    t.check(rc == 0, "sdm takes the elastic net (l1 at lambda > 0)", err)
    expect([a.train, "--solver", "fcbcfw", "--loss", "crammer-singer", "--penalty", "l1", train_file, model], 1,
           [r"--solver fcbcfw", r"--mu"], "fcbcfw at mu = 0")
    expect([a.train, "--solver", "fcbcfw", "--loss", "crammer-singer", "--penalty", "l1", "--mu", "1", "--intercept",
            train_file, model], 1, [r"--intercept", r"--bias"], "fcbcfw with --intercept")
    expect([a.train, "--solver", "fcbcfw", "--loss", "crammer-singer", "--penalty", "l1l2", "--mu", "1",
            train_file, model], 1, [r"fcbcfw", r"accepts", r"l1\|none"], "fcbcfw with l1l2")
    # --heldout's early stop (PD-Sparse's -h) is fcbcfw's; --patience needs it and is >= 1.
    fc = [a.train, "--solver", "fcbcfw", "--loss", "crammer-singer", "--penalty", "l1", "--mu", "1e-3"]
    expect([a.train, "--solver", smooth_default, "--heldout", test_file, "--patience", "2", train_file, model], 1,
           [r"--patience", r"fcbcfw"], "--patience with a solver without the early stop")
    expect([*fc, "--patience", "2", train_file, model], 1, [r"--patience", r"--heldout"], "--patience alone")
    expect([*fc, "--heldout", test_file, "--patience", "0", train_file, model], 1, [r"--patience", r">= 1"],
           "--patience 0")
    # --lambda-grid: chosen on --heldout, so it needs it; exclusive with --lambda and --path; numbers >= 0.
    expect([*fc, "--lambda-grid", "1e-4,1e-3", train_file, model], 1, [r"--lambda-grid", r"--heldout"],
           "--lambda-grid without --heldout")
    expect([*fc, "--heldout", test_file, "--lambda-grid", "1e-4,x", train_file, model], 1,
           [r"--lambda-grid", r">= 0", r"'x'"], "--lambda-grid with a non-number")
    expect([*fc, "--heldout", test_file, "--lambda-grid", "1e-4,-1", train_file, model], 1,
           [r"--lambda-grid", r">= 0"], "--lambda-grid with a negative lambda")
    expect([*fc, "--heldout", test_file, "--lambda-grid", "1e-4", "--lambda", "1", train_file, model], 1,
           [r"--lambda", r"--lambda-grid"], "--lambda-grid with --lambda")
    bad_heldout = os.path.join(a.work, "bad_heldout.txt")
    with open(bad_heldout, "w") as f:
        f.write("1 1:0.5\n2 3:0.25 4:y\n")
    expect([*fc, "--heldout", bad_heldout, train_file, model], 2, [re.escape(bad_heldout) + r":2:12: "],
           "malformed held-out file")
expect([a.train, "--loss", "crammer-singer", "--penalty", "l1l2", train_file, model], 1 if "fbpd" not in registered else 0,
       [r"--solver auto", r"crammer-singer"] if "fbpd" not in registered else [], "auto with no accepting solver")
expect([a.train, "--path", "3", "--loss", "crammer-singer", "--penalty", "l1", "--mu", "1", "--intercept", train_file,
        model], 1, [r"--path", r"--intercept"], "--path with crammer-singer and --intercept")

# --- 2: bad input, file:line:column: what ----------------------------------------------------------
bad = os.path.join(a.work, "bad.svm")
with open(bad, "w") as f:
    f.write("1 1:0.5 3:1\n2 2:1 x:2\n")
expect([a.train, bad, model], 2, [re.escape(bad) + r":2:7: "], "non-numeric index")
with open(bad, "w") as f:
    f.write("1 1:0.5 3:1\n# comment\n2 4:1 2:2\n")
expect([a.train, bad, model], 2, [re.escape(bad) + r":3:\d+: "], "decreasing indices")
with open(bad, "w") as f:
    f.write("1 1:0.5\n2 2:nan\n")
expect([a.train, bad, model], 2, [re.escape(bad) + r":2:\d+: "], "NaN value")
with open(bad, "w") as f:
    f.write("1 1:0.5\n2 200:1\n")
# A feature beyond the model's is ignored when predicting (as LIBLINEAR's predict does) and is
# an error where the objective on the data is asked (sparsemc-eval).
expect([a.train, "--test", bad, train_file, model], 0, [], "test feature beyond the training dimension is ignored")
within = os.path.join(a.work, "within.svm")
with open(within, "w") as f:
    f.write("1 1:0.5\n2 \n")
beyond_pred, within_pred = os.path.join(a.work, "beyond.pred"), os.path.join(a.work, "within.pred")
expect([a.predict, bad, model, beyond_pred], 0, [], "predict: a test feature beyond the model is ignored")
expect([a.predict, within, model, within_pred], 0, [], "predict: the same file without it")
t.check(open(beyond_pred).read() == open(within_pred).read(), "predict: a feature beyond the model changes nothing")
expect([a.eval, bad, model], 2, [re.escape(bad) + r":2:\d+: .*beyond"], "eval: a feature beyond the model")
missing = os.path.join(a.work, "does-not-exist.svm")
expect([a.train, missing, model], 2, [re.escape(missing)], "missing data file")
expect([a.predict, test_file, missing], 2, [re.escape(missing)], "missing model file")
bad_model = os.path.join(a.work, "bad.model")
with open(model) as f:
    lines = f.read().split("\n")
lines[2] = "n_features many"
with open(bad_model, "w") as f:
    f.write("\n".join(lines))
expect([a.predict, test_file, bad_model], 2, [re.escape(bad_model) + r":3:\d+: "], "malformed model")
expect([a.eval, train_file, bad_model], 2, [re.escape(bad_model) + r":3:\d+: "], "eval: malformed model")
with open(bad, "w") as f:
    f.write("1 1:0.5\n9 2:1\n")
expect([a.eval, bad, model], 2, [re.escape(bad) + r":2:1: "], "eval: label unknown to the model")

# --- 3: numerical failure --------------------------------------------------------------------------
huge = os.path.join(a.work, "huge.svm")
with open(huge, "w") as f:
    for i in range(20):
        f.write(f"{1 + i % 3} 1:{3e37 if i % 2 else -3e37} 2:{1e38}\n")
rc, out, err = expect([a.train, "--float", "--solver", "fista", "--loss", "logistic", "--lambda", "0",
                       "--mu", "1e-3", huge, model], 3, [r"numerical"], "non-finite values in float")

t.done()

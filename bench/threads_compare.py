#!/usr/bin/python3
"""bench/threads_compare.py: the parallel paths at two thread counts, side by side, in one run
(the table of docs/parallel.md).

Each row runs one whole command at --threads A and at --threads B in turn (REPEAT pairs) and
prints the median ratio of wall-clock times B/A with its min–max, and checks that the two runs
agree where the result does not depend on the count (the same X from the reader, the same
predictions, the same FISTA model file) and that every fit ends converged.

  bench/threads_compare.py                # sector (bzcat'd into a work folder), letter, dna
  bench/threads_compare.py --smoke        # seconds, data/dna.scale only: what CI runs; exits 1
                                          # when a run fails or two runs that must agree differ
  bench/threads_compare.py --threads 1,4 --repeat 5 --build build/release
"""

import argparse
import bz2
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "multiclass"))


def plain(work, name, copies=1):
    """A plain copy of a shared (possibly .bz2) data file, `copies` times over; None if absent."""
    for source in (os.path.join(SHARED, name), os.path.join(SHARED, name + ".bz2")):
        if os.path.exists(source):
            target = os.path.join(work, f"{name}.x{copies}")
            if not os.path.exists(target):
                opener = bz2.open if source.endswith(".bz2") else open
                with opener(source, "rb") as f:
                    text = f.read()
                with open(target, "wb") as out:
                    for _ in range(copies):
                        out.write(text)
            return target
    return None


def rows(build, work, smoke):
    """(name, command at a thread count, the output file that must not depend on it or None)."""
    tools, bench = os.path.join(build, "tools"), os.path.join(build, "bench")
    train, predict = os.path.join(tools, "sparsemc-train"), os.path.join(tools, "sparsemc-predict")
    dna, dna_test = os.path.join(ROOT, "data", "dna.scale"), os.path.join(ROOT, "data", "dna.scale.t")
    if smoke:  # C = 0.3: at C = 1 the serial bcd-ls fit of dna ends at max_iter (issue 15's tail)
        parse_data, predict_data, train_data, ovr_data, fbpd_data = dna, dna_test, dna, dna, dna
        fista, C = ["--lambda", "1e-3", "--mu", "1e-3", "--max-epochs", "20"], "0.3"
        cst_hinge, cst_logistic = ["--lambda", "1e-2", "--mu", "1e-2"], ["--lambda", "1e-2", "--mu", "1e-2"]
    else:
        parse_data, predict_data = plain(work, "sector.scale", 8), plain(work, "sector.t.scale", 8)
        train_data, ovr_data, fbpd_data = plain(work, "sector.scale"), plain(work, "letter.scale"), dna
        fista, C = ["--lambda", "1e-4", "--mu", "1e-4", "--max-epochs", "30"], "1"
        cst_hinge, cst_logistic = ["--lambda", "1e-4", "--mu", "1e-3"], ["--lambda", "1e-4", "--mu", "1e-4"]
        if None in (parse_data, predict_data, train_data, ovr_data):
            sys.exit(f"threads_compare: sector and letter are not in {SHARED}; --smoke runs on data/")
    model = os.path.join(work, "ovr.model")
    subprocess.run([train, "--quiet", "--loss", "ovr-squared-hinge", "--penalty", "l1", "--C", C, train_data, model],
                   check=True, capture_output=True)
    out = lambda name, t: os.path.join(work, f"{name}.{t}")  # noqa: E731
    return [
        ("parse (bench/parse_file)", lambda t: (["env", f"OMP_NUM_THREADS={t}", os.path.join(bench, "parse_file"),
                                                 "--repeat", "1", parse_data], None), "stdout"),
        ("sparsemc-predict", lambda t: ([predict, "--threads", str(t), predict_data, model, out("predict", t)],
                                        out("predict", t)), "file"),
        ("fista, logistic + l1l2", lambda t: ([train, "--quiet", "--json", "--solver", "fista", "--loss", "logistic",
                                               "--penalty", "l1l2", *fista, "--threads", str(t), train_data,
                                               out("fista", t)], out("fista", t)), "file"),
        (f"auto, one-vs-rest + l1, C = {C}", lambda t: ([train, "--quiet", "--json", "--loss", "ovr-squared-hinge",
                                                         "--penalty", "l1", "--C", C, "--threads", str(t), ovr_data,
                                                      out("ovr", t)], None), "certified"),
        (f"bcd-ls, one-vs-rest + l1, C = {C}", lambda t: ([train, "--quiet", "--json", "--solver", "bcd-ls", "--loss",
                                                           "ovr-squared-hinge", "--penalty", "l1", "--C", C,
                                                        "--threads", str(t), train_data, out("bcd", t)], None),
         "certified"),
        ("bcd-cst, squared hinge + l1l2 + ridge", lambda t: ([train, "--quiet", "--json", "--solver", "bcd-cst",
                                                              *cst_hinge, "--threads", str(t), train_data,
                                                              out("cst-hinge", t)], None), "certified"),
        ("bcd-cst, logistic + l1l2 + ridge", lambda t: ([train, "--quiet", "--json", "--solver", "bcd-cst", "--loss",
                                                          "logistic", *cst_logistic, "--threads", str(t), train_data,
                                                          out("cst-logistic", t)], None), "certified"),
        ("fbpd, crammer-singer + l1l2", lambda t: ([train, "--quiet", "--json", "--solver", "fbpd", "--loss",
                                                    "crammer-singer", "--penalty", "l1l2", "--lambda", "1e-3",
                                                    "--threads", str(t), fbpd_data, out("fbpd", t)], None),
         "certified"),
    ]


def run(command):
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"threads_compare: {' '.join(command)} exited {done.returncode}: {done.stderr.strip()[:400]}")
    return seconds, done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--threads", default="1,2", help="the two counts, A,B (default 1,2)")
    parser.add_argument("--repeat", type=int, default=3, help="pairs per row (default 3; 1 with --smoke)")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--work", help="folder for data copies and outputs (default: a temporary one)")
    args = parser.parse_args()
    a, b = (int(t) for t in args.threads.split(","))
    repeat = 1 if args.smoke else args.repeat
    work = args.work or tempfile.mkdtemp(prefix="threads_compare.")
    os.makedirs(work, exist_ok=True)
    print(f"| run | {b} threads / {a} (wall), median (min–max) of {repeat} | agree |")
    print("|---|---|---|")
    for name, command, check in rows(args.build, work, args.smoke):
        ratios, agree = [], True
        for _ in range(repeat):
            (cmd_a, file_a), (cmd_b, file_b) = command(a), command(b)
            seconds_a, out_a = run(cmd_a)
            seconds_b, out_b = run(cmd_b)
            ratios.append(seconds_b / seconds_a)
            if check == "stdout":  # parse_file: the same n, d, nnz
                agree &= out_a.split()[1:4] == out_b.split()[1:4]
            elif check == "file":
                with open(file_a, "rb") as fa, open(file_b, "rb") as fb:
                    agree &= fa.read() == fb.read()
            if check == "certified":
                agree &= all(json.loads(out)["status"] == "converged" for out in (out_a, out_b))
        verdict = {"stdout": "same X", "file": "identical output", "certified": "both certified"}[check]
        print(f"| {name} | {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) | "
              f"{verdict if agree else 'NO'} |", flush=True)
        if not agree:
            sys.exit(f"threads_compare: {name}: the runs at {a} and {b} threads do not agree")


if __name__ == "__main__":
    main()

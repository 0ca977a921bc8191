#!/usr/bin/python3
"""bench/auto_shape.py: bcd-ls against fista on tall data (fewer features than samples), the
evidence behind auto's choice for the multinomial logistic loss there (docs/bcd.md, "auto on
tall data").

For every dataset, loss and lambda: `sparsemc-train --solver S --loss L --penalty PEN --lambda X`
at the default tol (a certified relative gap of 1e-3), one whole process per solver in turn,
--repeat times; prints status, epochs, the median CPU time (user + system of the child) and the
median wall time of each solver and the ratio fista / bcd-ls of each. A run that stops at the time
limit or at max_iter counts its time (it is a lower bound on the time to a certificate).

  bench/auto_shape.py --build build/release                  # the shared tall sets
  bench/auto_shape.py --build build/release --smoke          # data/dna.scale, one lambda
"""

import argparse
import bz2
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "multiclass"))
TALL = ["dna.scale", "letter.scale", "usps_zip.train.bz2", "mnist10k_npm.bz2", "segment.train", "vowel_esl.train"]


def prepare(name, work):
    """The dataset as a plain file in `work` (bz2 decompressed once), or None when absent."""
    if name == "dna.scale" and not os.path.exists(os.path.join(SHARED, name)):
        return os.path.join(ROOT, "data", "dna.scale")
    src = os.path.join(SHARED, name)
    if not os.path.exists(src):
        return None
    if not name.endswith(".bz2"):
        return src
    out = os.path.join(work, name[:-4])
    if not os.path.exists(out):
        with bz2.open(src, "rb") as f, open(out, "wb") as g:
            shutil.copyfileobj(f, g)
    return out


def run(train, solver, loss, penalty, lam, data, model, time_limit):
    """One whole process; returns (report, cpu seconds, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([train, "--quiet", "--json", "--solver", solver, "--loss", loss, "--penalty", penalty,
                          "--lambda", lam, "--time-limit", str(time_limit), data, model],
                         capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"{solver} on {data}: exit {out.returncode}: {out.stderr.strip()[:400]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out.stdout), cpu, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--data", nargs="*", default=TALL)
    parser.add_argument("--losses", nargs="*", default=["logistic", "squared-hinge"])
    parser.add_argument("--penalty", default="l1l2")
    parser.add_argument("--lambdas", nargs="*", default=["1e-3", "1e-4"])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=40.0)
    parser.add_argument("--smoke", action="store_true", help="data/dna.scale, logistic, lambda 1e-3, once")
    a = parser.parse_args()
    if a.smoke:
        a.data, a.losses, a.lambdas, a.repeat, a.time_limit = ["dna.scale"], ["logistic"], ["1e-3"], 1, 30.0
    train = os.path.join(a.build, "tools", "sparsemc-train")
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "model")
        print("| data | loss | lambda | bcd-ls: status, epochs, CPU s | fista: status, epochs, CPU s | "
              "fista / bcd-ls CPU (wall) |")
        print("|---|---|---|---|---|---|")
        for name in a.data:
            data = prepare(name, work)
            if data is None:
                print(f"skipped {name}: not in {SHARED}")
                continue
            for loss in a.losses:
                for lam in a.lambdas:
                    cells, times = {}, {}
                    for solver in ("bcd-ls", "fista"):
                        cpu, wall = [], []
                        for _ in range(a.repeat):
                            report, c, w = run(train, solver, loss, a.penalty, lam, data, model, a.time_limit)
                            cpu.append(c)
                            wall.append(w)
                        times[solver] = (statistics.median(cpu), statistics.median(wall))
                        cells[solver] = f"{report['status']}, {report['epochs']}, {times[solver][0]:.2f}"
                    ratio = times["fista"][0] / times["bcd-ls"][0]
                    wall_ratio = times["fista"][1] / times["bcd-ls"][1]
                    print(f"| {os.path.basename(data)} | {loss} | {lam} | {cells['bcd-ls']} | {cells['fista']} | "
                          f"{ratio:.2f} ({wall_ratio:.2f}) |", flush=True)


if __name__ == "__main__":
    main()

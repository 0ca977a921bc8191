#!/usr/bin/python3
"""bench/mpi_compare.py: sparsemc-train-mpi at two rank counts, side by side, in one run (the
table of docs/mpi.md).

Each row runs one whole `mpirun -np A` command and the same at `-np B` in turn (REPEAT pairs,
--threads 1 per rank) and prints the median ratio of wall-clock times B/A with its min–max, the
bytes rank 0 sent into the sums over the ranks per iteration (reduced_bytes / epochs, at B
ranks), the largest peak resident memory of a rank at A and at B (GNU time's %M; 0 without
/usr/bin/time), and checks that both runs end certified (or, with --max-epochs, at that count).

Rows: by classes, one-vs-rest squared hinge + l1 (C = 1) on sector; by samples, fista on
sector (30 iterations) and on a generated tall file (n = 400 000, d = 2 000, K = 10, 40 entries
per row: X dominates a rank's memory, so each rank's peak follows its share), gls
(multinomial logistic + ridge, to its certificate) and fbpd (Crammer–Singer + l1, 30 passes) on
the tall file.

  bench/mpi_compare.py                 # sector (bzcat'd into a work folder) and the tall file
  bench/mpi_compare.py --smoke         # seconds, data/dna.scale only: what CI runs; exits 1 when
                                       # a run fails or is not certified
  bench/mpi_compare.py --ranks 1,2 --repeat 5 --build build/release
  bench/mpi_compare.py --only gls      # the rows whose name contains "gls"
"""

import argparse
import bz2
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "multiclass"))
# Open MPI runs as root and more ranks than cores only when told.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")


def sector(work):
    """A plain copy of the shared sector.scale, or None."""
    source = os.path.join(SHARED, "sector.scale.bz2")
    if not os.path.exists(source):
        return None
    target = os.path.join(work, "sector.scale")
    if not os.path.exists(target):
        with bz2.open(source, "rb") as f, open(target, "wb") as out:
            out.write(f.read())
    return target


def tall(work, n=400_000, d=2_000, K=10, per_row=40):
    """A generated tall LIBSVM file: class k's samples lean on features 10k..10k+9."""
    target = os.path.join(work, f"tall_{n}.svm")
    if os.path.exists(target):
        return target
    rng = random.Random(7)
    with open(target, "w") as out:
        for _ in range(n):
            k = rng.randrange(K)
            features = sorted(set([10 * k + rng.randrange(10) for _ in range(4)] +
                                  [rng.randrange(d) for _ in range(per_row - 4)]))
            out.write(f"{k + 1} " + " ".join(f"{j + 1}:{rng.random():.3f}" for j in features) + "\n")
    return target


def rows(work, smoke):
    """(name, training options, data file)."""
    dna = os.path.join(ROOT, "data", "dna.scale")
    if smoke:
        return [("by classes, one-vs-rest + l1, C = 0.3, dna", ["--loss", "ovr-squared-hinge", "--penalty", "l1",
                                                                  "--C", "0.3"], dna),
                ("by samples, fista, logistic + l1l2, dna", ["--loss", "logistic", "--penalty", "l1l2", "--lambda",
                                                             "1e-3", "--max-epochs", "20"], dna),
                ("by samples, gls, logistic + ridge, dna", ["--solver", "gls", "--loss", "logistic", "--penalty",
                                                            "none", "--mu", "1e-3"], dna),
                ("by samples, fbpd, crammer-singer + l1, dna", ["--loss", "crammer-singer", "--penalty", "l1",
                                                                "--lambda", "1e-3", "--mu", "1e-3"], dna)]
    data = sector(work)
    if data is None:
        sys.exit(f"mpi_compare: sector is not in {SHARED}; --smoke runs on data/")
    fista = ["--loss", "logistic", "--penalty", "l1l2", "--lambda", "1e-4", "--mu", "1e-4", "--max-epochs", "30"]
    return [("by classes, one-vs-rest + l1, C = 1, sector", ["--loss", "ovr-squared-hinge", "--penalty", "l1",
                                                              "--C", "1"], data),
            ("by samples, fista 30 iterations, logistic + l1l2, sector", fista, data),
            ("by samples, fista 30 iterations, logistic + l1l2, tall generated", fista, tall(work)),
            ("by samples, gls certified, logistic + ridge 1e-4, tall generated",
             ["--solver", "gls", "--loss", "logistic", "--penalty", "none", "--mu", "1e-4"], tall(work)),
            ("by samples, fbpd 30 passes, crammer-singer + l1, tall generated",
             ["--loss", "crammer-singer", "--penalty", "l1", "--lambda", "1e-4", "--mu", "1e-4", "--max-epochs", "30"],
             tall(work))]


def run(build, ranks, options, data, model):
    """Wall seconds, the JSON report, and the largest peak RSS of a rank (KiB)."""
    tool = os.path.join(build, "tools", "sparsemc-train-mpi")
    rss = os.path.join(os.path.dirname(model), f"rss.{ranks}")
    # Each rank under GNU time (when installed), writing its peak to rss.RANKS.RANK.
    measured = os.path.exists("/usr/bin/time")
    wrapper = ["sh", "-c", 'exec /usr/bin/time -o "$0.$OMPI_COMM_WORLD_RANK" -f %M "$@"', rss] if measured else []
    command = ["mpirun", "-np", str(ranks), *wrapper, tool, "--quiet", "--json", "--threads", "1", *options, data,
               model]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=ENV)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"mpi_compare: {' '.join(command)} exited {done.returncode}: {done.stderr.strip()[:400]}")
    peak = 0
    for r in range(ranks if measured else 0):
        with open(f"{rss}.{r}") as f:
            peak = max(peak, int(f.read().split()[-1]))
    return seconds, json.loads(done.stdout), peak


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--ranks", default="1,2", help="the two counts, A,B (default 1,2)")
    parser.add_argument("--repeat", type=int, default=3, help="pairs per row (default 3; 1 with --smoke)")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--work", help="folder for data copies and outputs (default: a temporary one)")
    parser.add_argument("--only", default="", help="run only the rows whose name contains this text")
    args = parser.parse_args()
    a, b = (int(r) for r in args.ranks.split(","))
    repeat = 1 if args.smoke else args.repeat
    work = args.work or tempfile.mkdtemp(prefix="mpi_compare.")
    os.makedirs(work, exist_ok=True)
    print(f"| run | {b} ranks / {a} (wall), median (min–max) of {repeat} | sent per iteration by rank 0 at {b} "
          f"ranks | peak RSS of a rank, {a} → {b} ranks | certified |")
    print("|---|---|---|---|---|")
    for name, options, data in rows(work, args.smoke):
        if args.only not in name:
            continue
        ratios, certified, per_iteration, peaks = [], True, 0.0, (0, 0)
        for _ in range(repeat):
            seconds_a, report_a, peak_a = run(args.build, a, options, data, os.path.join(work, "model.a"))
            seconds_b, report_b, peak_b = run(args.build, b, options, data, os.path.join(work, "model.b"))
            ratios.append(seconds_b / seconds_a)
            planned = ("converged", "max_iter") if "--max-epochs" in options else ("converged",)
            certified &= all(r["status"] in planned for r in (report_a, report_b))
            per_iteration = report_b["reduced_bytes"] / max(report_b["epochs"], 1)
            peaks = (peak_a, peak_b)
        print(f"| {name} | {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) | "
              f"{per_iteration / 1e6:.2f} MB | {peaks[0] / 1024:.0f} → {peaks[1] / 1024:.0f} MiB | "
              f"{'yes' if certified else 'NO'} |", flush=True)
        if not certified:
            sys.exit(f"mpi_compare: {name}: a run did not end as planned")


if __name__ == "__main__":
    main()

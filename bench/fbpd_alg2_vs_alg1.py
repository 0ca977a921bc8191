#!/usr/bin/python3
"""Algorithm 2 vs Algorithm 1 of Chierchia et al. (2015) on mnist10k subsets: distance to the
solution, ||W_t - W*|| / ||W*||, against time (the paper's Fig. 3 b, d, f).

Runs `bench_fbpd --distance-trace` (W* = Algorithm 1's solution at a relative duality gap of
1e-9, cached in --cache so that a rerun only races the two algorithms), then prints the time of
each algorithm to a distance of 1e-5 and draws the curves into --plot.

  /usr/bin/python3 bench/fbpd_alg2_vs_alg1.py --bench build/release/bench/bench_fbpd \\
      --cache /tmp/fbpd-ref --plot docs/fbpd-alg2-vs-alg1.png [--sizes dna 3000 5000 10000]

Exits 0 with "SKIPPED: ..." when the shared data folder (../shared/data) is absent.
"""
import argparse
import csv
import os
import subprocess
import sys
from collections import defaultdict


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="the bench_fbpd executable")
    parser.add_argument("--cache", default="/tmp/fbpd-ref", help="folder of the cached reference solutions")
    parser.add_argument("--plot", default=os.path.join(here, "..", "docs", "fbpd-alg2-vs-alg1.png"))
    parser.add_argument("--sizes", nargs="*", default=["3000", "5000", "10000"],
                        help="mnist10k subset sizes L, or dna (the repository's data set)")
    parser.add_argument("--csv", help="reuse this trace instead of running the benchmark")
    args = parser.parse_args()

    shared = os.path.join(here, "..", "..", "shared", "data", "multiclass", "mnist10k_npm.bz2")
    if args.csv is None and not os.path.exists(shared):
        args.sizes = [s for s in args.sizes if s == "dna"]
        if not args.sizes:
            print("SKIPPED: mnist10k_npm.bz2 not found in ../shared/data")
            return 0
    trace = args.csv
    if trace is None:
        os.makedirs(args.cache, exist_ok=True)
        trace = os.path.join(args.cache, "trace.csv")
        subprocess.run([args.bench, "--distance-trace", trace, args.cache] + [str(s) for s in args.sizes], check=True)

    curves = defaultdict(list)
    with open(trace) as f:
        for row in csv.DictReader(f):
            key = (row["L"], int(row["algorithm"]), row["steps"])
            curves[key].append((float(row["seconds"]), float(row["distance"])))
    sizes = sorted({k[0] for k in curves}, key=lambda L: (not L.isdigit(), int(L) if L.isdigit() else 0, L))
    print("| L | steps | Algorithm 1: iterations, s | Algorithm 2: iterations, s | time ratio Alg. 2 / Alg. 1 |")
    print("|---|---|---|---|---|")
    for L in sizes:
        for steps in ("adaptive", "fixed"):
            cells, times = [], []
            for algorithm in (1, 2):
                points = curves.get((L, algorithm, steps), [])
                reached = points and points[-1][1] <= 1e-5
                cells.append(f"{len(points)}, {points[-1][0]:.2f}" + ("" if reached else f" (distance {points[-1][1]:.1e}: not reached)")
                             if points else "-")
                times.append(points[-1][0] if reached else None)
            ratio = f"{times[1] / times[0]:.2f}" if None not in times else "-"
            print(f"| {L} | {steps} | {cells[0]} | {cells[1]} | {ratio} |")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plot")
        return 0
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 3.6), squeeze=False)
    styles = {(1, "adaptive"): ("C0", "-"), (2, "adaptive"): ("C1", "-"), (1, "fixed"): ("C0", ":"), (2, "fixed"): ("C1", ":")}
    for ax, L in zip(axes[0], sizes):
        for (algorithm, steps), (color, line) in styles.items():
            points = curves.get((L, algorithm, steps))
            if points:
                ax.semilogy([p[0] for p in points], [p[1] for p in points], color=color, linestyle=line,
                            label=f"Algorithm {algorithm}, {steps} steps")
        ax.axhline(1e-5, color="grey", linewidth=0.5)
        ax.set_title(f"mnist10k, L = {L}" if L.isdigit() else L)
        ax.set_xlabel("seconds")
        ax.set_ylabel("||W_t - W*|| / ||W*||")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

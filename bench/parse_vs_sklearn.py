#!/usr/bin/python3
"""Parse speed of sparsemc's LIBSVM reader next to scikit-learn's load_svmlight_file.

Both read the same files in one run, each the best of --repeat reads (warm page cache),
timed inside its own process (no start-up, no import). Prints seconds per file and the
ratio sklearn / sparsemc (> 1: sparsemc is faster), and the geometric mean of the ratios
over the uncompressed files (bzip2 files are bound by decompression in both).
--clock cpu compares process CPU times instead of wall times (both readers are
single-threaded), which is steadier on a busy machine.

    cmake --build build --target parse_file
    /usr/bin/python3 bench/parse_vs_sklearn.py [--parse-file build/bench/parse_file]
                                               [--repeat 5] [--clock wall|cpu] [FILE ...]

Without FILE: data/dna.scale and, when ../shared/data is present, news20.t,
usps_zip.test, letter.scale, multilabel/bibtex.train and sector.t.scale.bz2.
"""
import argparse
import glob
import math
import os
import re
import subprocess
import sys
import time

from sklearn.datasets import load_svmlight_file

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "data")
DEFAULT_FILES = [os.path.join(REPO, "data", "dna.scale")] + [
    os.path.join(SHARED, f)
    for f in ("multiclass/news20.t", "multiclass/usps_zip.test", "multiclass/letter.scale",
              "multilabel/bibtex.train", "multiclass/sector.t.scale.bz2")
]


def find_parse_file():
    candidates = glob.glob(os.path.join(REPO, "build*", "bench", "parse_file")) + glob.glob(
        os.path.join(REPO, "build*", "*", "bench", "parse_file"))
    if not candidates:
        sys.exit("parse_file not found: build the target (cmake --build <build> --target parse_file) "
                 "or pass --parse-file")
    return max(candidates, key=os.path.getmtime)


def time_sparsemc(binary, path, repeat, multilabel, clock):
    cmd = [binary, "--repeat", str(repeat)] + (["--multilabel"] if multilabel else []) + [path]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    fields = dict(re.findall(r"(\w+(?:/s)?)=([0-9.]+)", out))
    key = "cpu_seconds" if clock == "cpu" else "seconds"
    return float(fields[key]), int(fields["n"]), int(fields["nnz"])


def time_sklearn(path, repeat, multilabel, clock):
    now = time.process_time if clock == "cpu" else time.perf_counter
    best = math.inf
    for _ in range(repeat):
        start = now()
        X, _y = load_svmlight_file(path, multilabel=multilabel, zero_based=False)
        best = min(best, now() - start)
    return best, X.shape[0], X.nnz


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parse-file", help="path of the parse_file program")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    binary = args.parse_file or find_parse_file()
    files = args.files or [f for f in DEFAULT_FILES if os.path.exists(f)]

    print(f"sparsemc: {binary}\nbest of {args.repeat} reads each, double values, {args.clock} time\n")
    print(f"{'file':<24} {'MB':>7} {'sparsemc s':>11} {'sklearn s':>10} {'ratio':>7}")
    plain_ratios = []
    for path in files:
        multilabel = "multilabel" in path
        ours, n, nnz = time_sparsemc(binary, path, args.repeat, multilabel, args.clock)
        theirs, n2, nnz2 = time_sklearn(path, args.repeat, multilabel, args.clock)
        if (n, nnz) != (n2, nnz2):
            print(f"warning: {path}: sparsemc read n={n} nnz={nnz}, sklearn n={n2} nnz={nnz2}")
        ratio = theirs / ours
        if not path.endswith((".bz2", ".gz")):
            plain_ratios.append(ratio)
        mb = os.path.getsize(path) / 1e6
        print(f"{os.path.basename(path):<24} {mb:7.2f} {ours:11.4f} {theirs:10.4f} {ratio:6.1f}x")
    if plain_ratios:
        geo = math.exp(sum(map(math.log, plain_ratios)) / len(plain_ratios))
        verdict = "met" if geo >= 3 else "NOT met"
        print(f"\ngeometric mean ratio (uncompressed files): {geo:.1f}x  (target >= 3x: {verdict})")


if __name__ == "__main__":
    main()

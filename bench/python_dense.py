#!/usr/bin/env python3
"""A dense numpy X against the CSR matrix made of it, for the solvers that read a dense design in
place: by rows (sdm, fbpd, fcbcfw: C order) or by columns (bcd-ls, scd-ls: Fortran order).

Fits, on DATA's rows tiled REPEAT times, `--solver sdm` (the default: CrammerSingerSVC(C=1),
auto's sdm), `--solver fbpd` (Crammer-Singer with l1l2, alpha = l2 = 1e-3: auto's fbpd),
`--solver fcbcfw` (Crammer-Singer with l1, alpha = 1e-4, l2 = 1e-3: auto's fcbcfw),
`--solver bcd-ls` (squared hinge with l1l2, alpha = 1e-3) or `--solver scd-ls` (one-vs-rest
squared hinge with l1, alpha = 1e-3: auto's scd-ls on tall data), either on the array as it
is (`dense`, in the solver's order, made before the clock starts: no copy) or on
`scipy.sparse.csr_matrix` of it (`csr`: what the estimator did before these solvers took dense
arrays; the conversion is timed with the fit, and the column solvers build their CSC from it).
Run each mode in its own process: the growth of the peak resident memory during fit() is the
copies' size.

    bench/python_dense.py dense ../shared/data/multiclass/usps_zip.train.bz2 4
    bench/python_dense.py csr ../shared/data/multiclass/usps_zip.train.bz2 4
    bench/python_dense.py --solver fbpd dense ../shared/data/multiclass/usps_zip.train.bz2 4
    bench/python_dense.py --solver bcd-ls dense ../shared/data/multiclass/usps_zip.train.bz2 4
"""
import argparse
import bz2
import resource
import time

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import sparsemc


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["dense", "csr"])
    parser.add_argument("data", help="a LIBSVM file (.bz2 too)")
    parser.add_argument("repeat", type=int, nargs="?", default=1, help="times the rows are tiled")
    parser.add_argument("--solver", choices=["sdm", "fbpd", "fcbcfw", "bcd-ls", "scd-ls"], default="sdm")
    args = parser.parse_args()
    X, y = load_svmlight_file(bz2.open(args.data) if args.data.endswith(".bz2") else args.data)
    D, Y = np.tile(X.toarray(), (args.repeat, 1)), np.tile(y, args.repeat)
    if args.solver in ("bcd-ls", "scd-ls"):
        D = np.asfortranarray(D)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    estimator = {
        "sdm": lambda: sparsemc.CrammerSingerSVC(C=1.0),
        "fbpd": lambda: sparsemc.SparseLinearClassifier(loss="crammer-singer", penalty="l1l2", alpha=1e-3, l2=1e-3,
                                                        fit_intercept=False),
        "fcbcfw": lambda: sparsemc.SparseLinearClassifier(loss="crammer-singer", penalty="l1", alpha=1e-4, l2=1e-3,
                                                          fit_intercept=False),
        "bcd-ls": lambda: sparsemc.SparseLinearClassifier(loss="squared-hinge", penalty="l1l2", alpha=1e-3,
                                                          solver="bcd-ls"),
        "scd-ls": lambda: sparsemc.SparseLinearClassifier(loss="ovr-squared-hinge", penalty="l1", alpha=1e-3,
                                                          solver="scd-ls"),
    }[args.solver]()
    clf = estimator.fit(D if args.mode == "dense" else sp.csr_matrix(D), Y)
    seconds = time.perf_counter() - start
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"{args.mode}: {clf.solver_} {clf.status_}, {clf.n_iter_} epochs, F {clf.objective_!r}, fit {seconds:.2f} s, "
          f"peak grew {grown:.1f} MiB (X: {D.nbytes / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""sparsemc-train-mpi under mpirun -np 2 and -np 3 against sparsemc-train on the same data: by
classes, the same objective within the two certificates; by samples (fista, gls, fbpd), the
serial solver's objective within the two certificates; fbpd-epi (Algorithm 2) certified by its KKT
residual at the serial objective; a model file sparsemc-predict and sparsemc-eval read like
sparsemc-train's (the same labels, the same format, its objective the one reported), and --test's
accuracy that of its predictions; --init's warm start certified at once in either partition; and the serial tool's errors and exit statuses for a malformed
file, a solver or loss the partitions do not take, a bad option and a missing file. The extra
arguments: --train-mpi, the tool, and --mpirun, Open MPI's launcher.
"""

import gzip
import os
import re
import shutil

from common import Checks, parse_args, read_native_model, require_files, run, run_json

a = parse_args([(("--train-mpi",), {"required": True}), (("--mpirun",), {"required": True})])
t = Checks()
train_file = os.path.join(a.data, "dna.scale")
test_file = os.path.join(a.data, "dna.scale.t")
require_files(train_file, test_file)
w = a.work
# Open MPI runs as root and more ranks than cores only when told.
os.environ.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                   "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1"})


def path(name):
    return os.path.join(w, name)


def mpi(ranks, *args):
    return [a.mpirun, "-np", str(ranks), a.train_mpi, *args]


gz = path("dna.scale.gz")
with open(train_file, "rb") as src, gzip.open(gz, "wb") as dst:
    shutil.copyfileobj(src, dst)

# (options, partition): by samples the serial run is that of the solver auto takes over MPI —
# fista, or fbpd for Crammer–Singer — unless --solver says which.
fits = [
    (["--loss", "ovr-squared-hinge", "--penalty", "l1", "--lambda", "1e-3"], "classes"),
    (["--loss", "ovr-squared-hinge", "--penalty", "l1", "--C", "0.5", "--intercept", "--solver", "bcd-ls"], "classes"),
    (["--loss", "least-squares", "--penalty", "none", "--mu", "1e-2", "--bias", "1", "--classes-per-fit", "1"],
     "classes"),
    (["--loss", "ovr-squared-hinge", "--penalty", "l1", "--lambda", "1e-3", "--class-weight", "2:3", "--partition",
      "classes", "--solver", "fista"], "classes"),
    (["--loss", "logistic", "--penalty", "l1l2", "--lambda", "1e-4", "--intercept"], "samples"),
    (["--loss", "squared-hinge", "--penalty", "l1", "--lambda", "1e-3", "--class-weight", "1:2", "--solver", "fista"],
     "samples"),
    (["--loss", "logistic", "--penalty", "none", "--mu", "1e-3", "--intercept", "--solver", "gls"], "samples"),
    (["--loss", "least-squares", "--penalty", "none", "--mu", "1e-2", "--solver", "gls"], "samples"),
    (["--loss", "crammer-singer", "--penalty", "l1", "--lambda", "1e-3", "--mu", "1e-3"], "samples"),
    (["--loss", "crammer-singer", "--penalty", "l1l2", "--lambda", "1e-3", "--mu", "1e-2", "--intercept", "--solver",
      "fbpd"], "samples"),
]
for k, (fit, partition) in enumerate(fits):
    serial_model = path(f"serial{k}.txt")
    mpi_only = [i for i, f in enumerate(fit) if f in ("--partition", "--classes-per-fit")]
    serial_fit = [f for i, f in enumerate(fit) if i not in mpi_only and i - 1 not in mpi_only]
    if partition == "samples" and "--solver" not in serial_fit:
        serial_fit += ["--solver", "fbpd" if "crammer-singer" in fit else "fista"]
    # By samples, at tol 1e-9: the two certificates bound the difference by 2e-9 relative (the
    # iterates are the serial ones up to rounding, which after a thousand steps may take
    # another backtracking or restart decision, so the iteration counts can differ).
    tol = "1e-9" if partition == "samples" else "1e-6"
    _, serial, _ = run_json([a.train, *serial_fit, "--json", "--tol", tol, train_file, serial_model])
    for ranks in (2, 3):
        for data in (train_file, gz) if k == 0 else (train_file,):  # rank 0 decompresses and scatters
            what = f"{' '.join(fit)} on {os.path.basename(data)}, {ranks} ranks"
            model = path(f"mpi{k}_{ranks}.txt")
            rc, split, err = run_json(mpi(ranks, *fit, "--json", "--tol", tol, data, model))
            if not t.check(rc == 0 and split is not None, f"{what}: runs", err.strip()[:300]):
                continue
            t.check(split["status"] == "converged" and split["relative_gap"] <= float(tol), f"{what}: certified",
                    f"{split['status']} {split['relative_gap']}")
            t.check(split["ranks"] == ranks and split["partition"] == partition, f"{what}: ranks and partition")
            bound = (split["duality_gap"] + serial["duality_gap"]) * (1 + 1e-9) + 1e-12
            t.check(abs(split["objective"] - serial["objective"]) <= bound, f"{what}: the serial objective",
                    f"{split['objective']} vs {serial['objective']} (bound {bound})")
            # The model file: what sparsemc-train writes, read back by the other tools.
            m1, m2 = read_native_model(serial_model), read_native_model(model)
            t.check(m1.labels == m2.labels and m1.W.shape == m2.W.shape and m1.bias == m2.bias,
                    f"{what}: labels, shape and bias of the model file")
            weights = fit[fit.index("--class-weight"):][:2] if "--class-weight" in fit else []
            _, evaluated, _ = run_json([a.eval, "--loss", split["loss"], "--penalty", split["penalty"], "--lambda",
                                        repr(split["lambda"]), "--mu", repr(split["mu"]), *weights, "--json",
                                        train_file, model])
            t.check(abs(evaluated["objective"] - split["objective"]) <= 1e-9 * abs(split["objective"]),
                    f"{what}: sparsemc-eval's objective of the model", f"{evaluated['objective']} vs {split['objective']}")
            rc, out, err = run([a.predict, test_file, model, path("pred.txt")])
            t.check(rc == 0, f"{what}: sparsemc-predict reads the model", err.strip()[:300])

# --- --init: each partition warm-started from sparsemc-train's model is certified at once --------------
for k in (0, 4):  # by classes (one-vs-rest + l1), by samples (fista)
    fit, partition = fits[k]  # its serial model is certified at 1e-6 or 1e-9; the warm fits stop at 1e-3
    rc, warm, err = run_json(mpi(2, *fit, "--init", path(f"serial{k}.txt"), "--json", "--tol", "1e-3", train_file,
                                 path("warm.txt")))
    what = f"--init, {partition}"
    if t.check(rc == 0 and warm is not None, f"{what}: runs", err.strip()[:300]):
        t.check(warm["status"] == "converged" and warm["epochs"] <= 2, f"{what}: certified at once",
                f"{warm['status']} after {warm['epochs']} epochs")
rc, _, err = run(mpi(2, "--loss", "ovr-squared-hinge", "--penalty", "l1", "--init", path("serial1.txt"), train_file,
                     path("x.txt")))
t.check(rc == 1 and "--init: the model has an intercept" in err and err.count("error:") == 1,
        "--init of a model with an intercept, none asked: sparsemc-train's usage error", err.strip()[:300])

# --- fbpd-epi (Algorithm 2) at the loss of the regularised fit, and --test -------------------------
crammer_singer = ["--loss", "crammer-singer", "--penalty", "l1l2", "--lambda", "1e-3", "--mu", "1e-2"]
_, regularised, _ = run_json([a.train, *crammer_singer, "--solver", "fbpd", "--tol", "1e-8", "--json", train_file,
                              path("cs.txt")])
_, loss_part, _ = run_json([a.eval, "--loss", "crammer-singer", "--penalty", "none", "--lambda", "0", "--mu", "0",
                            "--json", train_file, path("cs.txt")])
epi = [*crammer_singer, "--solver", "fbpd-epi", "--eta", repr(loss_part["objective"]), "--tol", "1e-6", "--json"]
_, serial_epi, _ = run_json([a.train, *epi, train_file, path("epi.txt")])
with open(test_file) as f:
    test_labels = [line.split()[0] for line in f if line.strip()]
for ranks in (2, 3):
    rc, split, err = run_json(mpi(ranks, *epi, "--test", test_file, train_file, path("epi_mpi.txt")))
    if not t.check(rc == 0 and split is not None, f"fbpd-epi, {ranks} ranks: runs", err.strip()[:300]):
        continue
    t.check(split["status"] == "converged" and split["measure_name"] == "kkt_residual" and split["measure"] <= 1e-6,
            f"fbpd-epi, {ranks} ranks: its KKT residual certified", f"{split['status']} {split['measure']}")
    t.check(abs(split["objective"] - serial_epi["objective"]) <= 1e-4 * serial_epi["objective"],
            f"fbpd-epi, {ranks} ranks: the serial objective", f"{split['objective']} vs {serial_epi['objective']}")
    # --test: rank 0's accuracy is that of the saved model's predictions.
    rc, _, err = run([a.predict, test_file, path("epi_mpi.txt"), path("epi_pred.txt")])
    with open(path("epi_pred.txt")) as f:
        predicted = [line.split()[0] for line in f if line.strip()]
    right = sum(p == y for p, y in zip(predicted, test_labels))
    t.check(rc == 0 and abs(split.get("test_accuracy", -1) - right / len(test_labels)) <= 1e-12,
            f"--test, {ranks} ranks: the accuracy of the saved model", f"{split.get('test_accuracy')} vs "
            f"{right}/{len(test_labels)}")

# --- the serial tool's errors, from whichever rank met them -----------------------------------------
bad = path("bad.svm")
with open(train_file) as f:
    lines = f.readlines()
with open(bad, "w") as f:
    f.writelines(lines[:1500] + ["2 1:0.5 3:x\n"] + lines[1500:])
rc1, _, err1 = run([a.train, "--loss", "ovr-squared-hinge", "--penalty", "l1", bad, path("x.txt")])
for ranks in (2, 3):
    rc, _, err = run(mpi(ranks, "--loss", "ovr-squared-hinge", "--penalty", "l1", bad, path("x.txt")))
    line = [l for l in err.splitlines() if l.startswith("sparsemc-train-mpi: error:")]
    t.check(rc == rc1 == 2 and line == [err1.strip().replace("sparsemc-train:", "sparsemc-train-mpi:")],
            f"a malformed line, {ranks} ranks: sparsemc-train's message once, exit 2", err.strip()[:400])
    rc, _, err = run(mpi(ranks, "--loss", "logistic", "--solver", "fbpd", train_file, path("x.txt")))
    t.check(rc == 1 and "is smooth" in err and err.count("error:") == 1,
            f"fbpd with a smooth loss, {ranks} ranks: a usage error saying what to take", err.strip()[:300])
    rc, _, err = run(mpi(ranks, "--loss", "logistic", "--solver", "bcd-ls", train_file, path("x.txt")))
    t.check(rc == 1 and "the sample partition runs" in err,
            f"a solver neither partition runs, {ranks} ranks: a usage error", err.strip()[:300])
    rc, _, err = run(mpi(ranks, "--loss", "logistic", "--partition", "classes", train_file, path("x.txt")))
    t.check(rc == 1 and "couples the classes" in err, f"logistic by classes, {ranks} ranks: a usage error",
            err.strip()[:300])
    rc, _, err = run(mpi(ranks, "--loss", "ovr-squared-hinge", "--penalty", "l1", "--lambda", "-1", train_file,
                         path("x.txt")))
    t.check(rc == 1 and re.search(r"--lambda", err) is not None, f"a bad option, {ranks} ranks: exit 1 naming it",
            err.strip()[:300])
    rc, _, err = run(mpi(ranks, "--loss", "ovr-squared-hinge", "--penalty", "l1", path("missing.svm"), path("x.txt")))
    t.check(rc == 2 and "cannot open" in err, f"a missing file, {ranks} ranks: exit 2", err.strip()[:300])
t.done()

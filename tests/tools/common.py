"""Shared helpers of the command-line tool tests (run by ctest through tests/tools.cmake).

Everything here is written independently of the C++ library: a plain LIBSVM reader, a
LIBLINEAR model reader/writer, a native model reader following the documented format, and
objective (1) of ARCHITECTURE.md computed with numpy from the formulas in the loss headers'
doc comments, so that sparsemc-eval can be checked against it.
"""

import argparse
import json
import math
import os
import subprocess
import sys

SKIP = 77  # ctest SKIP_RETURN_CODE


def parse_args(extra=None):
    """The arguments every tool test takes: the three tool binaries, data/ and a work dir."""
    p = argparse.ArgumentParser()
    p.add_argument("--train", required=True)
    p.add_argument("--predict", required=True)
    p.add_argument("--eval", required=True)
    p.add_argument("--data", required=True, help="the repo's data/ directory")
    p.add_argument("--work", required=True, help="scratch directory")
    for args, kwargs in extra or []:
        p.add_argument(*args, **kwargs)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    return a


def sanitizer_run():
    return bool(os.environ.get("SPARSEMC_SANITIZER_RUN"))


def require_files(*paths):
    """Exits with the skip code (ctest: skipped, not passed) when an input file is missing."""
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        print("SKIPPED: missing input " + ", ".join(missing))
        sys.exit(SKIP)


class Checks:
    """Counts checks; prints one line per failure and the closing 'N passed, N failed' line.
    `xfail` is a check known to fail until a named fix lands: its failure is printed as XFAIL
    and does not fail the script; its success is printed as XPASS (the mark can go)."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.xfailed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAILED: {what}" + (f"\n    {detail}" if detail else ""), flush=True)
        return ok

    def xfail(self, ok, what, reason, detail=""):
        if ok:
            self.passed += 1
            print(f"XPASS: {what} (expected to fail: {reason}; remove the mark)", flush=True)
        else:
            self.xfailed += 1
            print(f"XFAIL: {what} ({reason})" + (f"\n    {detail}" if detail else ""), flush=True)
        return ok

    def done(self):
        print(f"{self.passed} passed, {self.failed} failed" + (f", {self.xfailed} expected failures" if self.xfailed else ""))
        sys.exit(1 if self.failed else 0)


def run(cmd, timeout=600):
    """Runs a command; returns (exit status, stdout, stderr)."""
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_json(cmd):
    """Runs a tool with --json; returns (exit status, parsed object or None, stderr)."""
    rc, out, err = run(cmd)
    try:
        obj = json.loads(out)
    except ValueError:
        obj = None
    return rc, obj, err


DEFAULT_TOL = 1e-3  # every solver of (1): converged means relative duality gap <= 1e-3


def check_certificate(t, obj, where, tol=DEFAULT_TOL):
    """The certificate of a train/eval JSON object: duality_gap >= 0 and relative_gap = gap/|F|
    (both numbers), and status converged only with relative_gap <= tol. Returns relative_gap."""
    gap, rel = obj.get("duality_gap"), obj.get("relative_gap")
    if not t.check(isinstance(gap, (int, float)) and isinstance(rel, (int, float)),
                   f"{where}: duality_gap and relative_gap are numbers", f"{gap!r} {rel!r} {obj.get('gap_note')!r}"):
        return None
    F = obj["objective"]
    t.check(gap >= 0 and abs(rel - gap / max(abs(F), 1e-12)) <= 1e-12 + 1e-9 * rel,
            f"{where}: relative_gap = duality_gap / |F| >= 0", f"gap {gap} relative {rel} F {F}")
    if obj.get("status") == "converged":
        t.check(rel <= tol, f"{where}: status converged implies relative_gap <= tol {tol}", f"relative_gap {rel}")
    if "gap_evaluations" in obj:  # a fit (eval's objects have no solve): the certificate's cost
        n, seconds = obj["gap_evaluations"], obj.get("gap_seconds")
        t.check(isinstance(n, int) and n >= 1 and isinstance(seconds, (int, float))
                and 0 <= seconds <= obj["train_seconds"],
                f"{where}: >= 1 gap evaluation, its time within train_seconds", f"{n!r} {seconds!r}")
    return rel


# --- data -----------------------------------------------------------------------------------

def read_libsvm(path, n_features=None, zero_based=False):
    """(list of label lists, scipy CSR X). Labels stay as integers; multilabel 'a,b' splits."""
    import numpy as np
    import scipy.sparse as sp
    labels, indptr, indices, values = [], [0], [], []
    max_index = -1
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip("\r\n")
            if not line.strip():
                continue
            tokens = line.split(" ") if not line.startswith(" ") else [""] + line.split()
            head = tokens[0]
            labels.append([int(t) for t in head.split(",") if t != ""])
            for tok in tokens[1:]:
                if not tok or tok.startswith("qid:"):
                    continue
                k, v = tok.split(":")
                j = int(k) - (0 if zero_based else 1)
                indices.append(j)
                values.append(float(v))
                max_index = max(max_index, j)
            indptr.append(len(indices))
    d = n_features if n_features is not None else max_index + 1
    keep = np.array(indices, dtype=np.int64) < d
    X = sp.csr_matrix((np.array(values), np.array(indices), np.array(indptr)), shape=(len(labels), max(d, max_index + 1)))
    X = X[:, :d] if not keep.all() else X
    return labels, X.tocsr()


# --- models ---------------------------------------------------------------------------------

class Model:
    """W (d × K dense numpy), intercept b (K or None), labels, bias (< 0: none)."""

    def __init__(self, W, labels, b=None, bias=-1.0):
        self.W, self.labels, self.b, self.bias = W, list(labels), b, bias

    def scores(self, X):
        """S = XW + 1bᵀ with the bias feature appended when bias >= 0 (like LIBLINEAR)."""
        import numpy as np
        d_data = self.W.shape[0] - (1 if self.bias >= 0 else 0)
        X = X[:, :d_data] if X.shape[1] >= d_data else _pad(X, d_data)
        S = X @ self.W[:d_data]
        if self.bias >= 0:
            S = S + self.bias * self.W[d_data]
        if self.b is not None:
            S = S + self.b
        return np.asarray(S)


def _pad(X, d):
    import scipy.sparse as sp
    X = X.tocsr().copy()
    X.resize((X.shape[0], d))
    return X


def read_liblinear_model(path):
    """LIBLINEAR's text model: header lines, then 'w', then nr_feature(+1 with bias) rows of
    nr_w weights (nr_w = 1 for two classes except MCSVM_CS)."""
    import numpy as np
    header = {}
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while lines[i].strip() != "w":
        key, *rest = lines[i].split()
        header[key] = rest
        i += 1
    labels = [int(x) for x in header["label"]]
    d = int(header["nr_feature"][0])
    bias = float(header["bias"][0])
    rows = [[float(x) for x in ln.split()] for ln in lines[i + 1:] if ln.strip()]
    W = np.array(rows, dtype=float)
    n_rows = d + (1 if bias >= 0 else 0)
    assert W.shape[0] == n_rows, (W.shape, n_rows)
    if W.shape[1] == 1 and len(labels) == 2:  # binary: w for the first label, −w for the second
        W = np.hstack([W, -W])
    return Model(W, labels, None, bias)


def write_liblinear_model(path, W, labels, bias=-1.0, solver_type="MCSVM_CS"):
    """Writes W (d(+1) × K, K > 2 or MCSVM_CS) in LIBLINEAR's model format."""
    d = W.shape[0] - (1 if bias >= 0 else 0)
    with open(path, "w") as f:
        f.write(f"solver_type {solver_type}\nnr_class {len(labels)}\nlabel {' '.join(map(str, labels))}\n")
        f.write(f"nr_feature {d}\nbias {bias:.17g}\nw\n")
        for row in W:
            f.write(" ".join(f"{v:.17g}" for v in row) + " \n")


def read_native_model(path):
    """The native sparse text model (io/model_io.hpp): 'key value...' header lines up to
    'rows R', then R lines 'feature w_1 ... w_K' (version 1) or 'feature k:w_k ...' (version 2),
    0-based feature and class indices, nonzero rows only."""
    import numpy as np
    header = {}
    with open(path) as f:
        lines = [ln.rstrip("\n") for ln in f]
    i = 0
    while not lines[i].startswith("rows"):
        if lines[i].strip() and not lines[i].startswith("#"):
            key, *rest = lines[i].split()
            header[key] = rest
        i += 1
    n_rows = int(lines[i].split()[1])
    while lines[i + 1].split()[0] in ("entries", "layout"):  # version 3: after 'rows', before the rows
        i += 1
    labels = [int(x) for x in header["labels"]]
    d = int(header["n_features"][0])
    W = np.zeros((d, len(labels)))
    for ln in lines[i + 1:i + 1 + n_rows]:
        parts = ln.split()
        if any(":" in p for p in parts[1:]):  # version 2: 'class:weight' pairs, 0-based classes
            for pair in parts[1:]:
                k, v = pair.split(":")
                W[int(parts[0]), int(k)] = float(v)
        else:
            W[int(parts[0])] = [float(x) for x in parts[1:]]
    b = None
    if header.get("intercept", ["none"]) != ["none"]:
        b = np.array([float(x) for x in header["intercept"]])
    bias = float(header["bias"][0]) if "bias" in header else -1.0
    return Model(W, labels, b, bias)


# --- objective (1) ------------------------------------------------------------------------------

def loss_values(loss, S, Y):
    """ℓ(s_i, y_i) for every sample, from the definitions in the loss headers. Y is a list of
    class-index lists."""
    import numpy as np
    n, K = S.shape
    out = np.zeros(n)
    for i in range(n):
        s, y = S[i], Y[i]
        if loss == "squared-hinge":
            c = y[0]
            a = np.maximum(0.0, 1.0 - s[c] + s)
            a[c] = 0.0
            out[i] = np.sum(a * a)
        elif loss == "huber-hinge":  # the tools' width δ = 1
            c = y[0]
            z = 1.0 - s[c] + s
            phi = np.where(z <= 0.0, 0.0, np.where(z <= 1.0, 0.5 * z * z, z - 0.5))
            phi[c] = 0.0
            out[i] = np.sum(phi)
        elif loss == "ovr-squared-hinge":
            sign = -np.ones(K)
            sign[y] = 1.0
            a = np.maximum(0.0, 1.0 - sign * s)
            out[i] = np.sum(a * a)
        elif loss == "crammer-singer":
            pos = np.zeros(K, dtype=bool)
            pos[y] = True
            if pos.all() or not pos.any():
                out[i] = 0.0
            else:
                out[i] = max(0.0, 1.0 + s[~pos].max() - s[pos].min())
        elif loss == "logistic":
            if not y:
                out[i] = 0.0
                continue
            m = s.max()
            lse = m + math.log(np.exp(s - m).sum())
            out[i] = lse - s[y].mean() - math.log(len(y))
        elif loss == "least-squares":
            t = np.zeros(K)
            t[y] = 1.0
            out[i] = 0.5 * np.sum((s - t) ** 2)
        else:
            raise ValueError(loss)
    return out


def penalty_value(penalty, W):
    import numpy as np
    if penalty == "none":
        return 0.0
    if penalty == "l1":
        return float(np.abs(W).sum())
    if penalty == "l1l2":
        return float(np.sqrt((W * W).sum(axis=1)).sum())
    if penalty == "l1linf":
        return float(np.abs(W).max(axis=1).sum()) if W.size else 0.0
    raise ValueError(penalty)


def objective(model, labels, X, loss, penalty, lam, mu, class_weights=None):
    """(F, loss part, penalty part) of (1) for a model on data (labels as read)."""
    import numpy as np
    index = {l: k for k, l in enumerate(model.labels)}
    Y = [sorted(index[l] for l in ls) for ls in labels]
    S = model.scores(X)
    c = np.ones(len(Y))
    if class_weights:
        for i, ls in enumerate(labels):
            if ls:
                c[i] = np.mean([class_weights.get(l, 1.0) for l in ls])
    loss_part = float((c * loss_values(loss, S, Y)).sum() / len(Y))
    reg = lam * penalty_value(penalty, model.W) + 0.5 * mu * float((model.W ** 2).sum())
    return loss_part + reg, loss_part, reg

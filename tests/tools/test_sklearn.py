#!/usr/bin/python3
"""sparsemc-train --solver fista against scikit-learn on multinomial logistic + ridge.

LogisticRegression(C, fit_intercept=False, multinomial, tight tol) minimises
½‖W‖² + C Σ_i logloss_i, which is C·n times (1) with Logistic, λ = 0, μ = 1/(Cn). Both
models' objectives (1) are computed by sparsemc-eval (scikit-learn's written in LIBLINEAR's
model format); fista at --tol 1e-6 must report a stopping measure <= 1e-6 and agree with
scikit-learn to 1e-6 relative. Skipped (exit 77) without numpy/scikit-learn.
"""

import os
import sys

from common import require_files, SKIP, Checks, parse_args, run_json, sanitizer_run, write_liblinear_model

try:
    import numpy as np  # noqa: F401
    from sklearn.datasets import load_svmlight_file
    from sklearn.linear_model import LogisticRegression
except ImportError:
    print("SKIPPED: scikit-learn is not installed (Debian package python3-sklearn)")
    sys.exit(SKIP)

a = parse_args()
t = Checks()
train_file = os.path.join(a.data, "dna.scale")
require_files(train_file)
X, y = load_svmlight_file(train_file, n_features=180)
n, C = X.shape[0], 1.0
mu = 1.0 / (C * n)

clf = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=100000).fit(X, y)
theirs = os.path.join(a.work, "sklearn.model")
write_liblinear_model(theirs, clf.coef_.T, [int(c) for c in clf.classes_])

ours = os.path.join(a.work, "fista.model")
rc, obj, err = run_json([a.train, "--json", "--solver", "fista", "--loss", "logistic", "--penalty", "none",
                         "--lambda", "0", "--mu", repr(mu), "--tol", "1e-6", train_file, ours])
t.check(rc == 0 and obj is not None, "fista on logistic + ridge exits 0", err)
if obj:
    t.check(obj["status"] == "converged" and isinstance(obj.get("relative_gap"), float) and obj["relative_gap"] <= 1e-6,
            "fista is certified: converged with relative duality gap <= 1e-6",
            f"{obj['status']} relative_gap {obj.get('relative_gap')}")

values = {}
for name, model in [("sparsemc", ours), ("sklearn", theirs)]:
    rc, ev, err = run_json([a.eval, "--json", "--loss", "logistic", "--penalty", "none", "--lambda", "0",
                            "--mu", repr(mu), train_file, model])
    t.check(rc == 0 and ev is not None, f"eval of the {name} model", err)
    values[name] = ev["objective"] if ev else float("nan")
    values[name + " gap"] = ev.get("duality_gap") if ev else None
gap = (values["sparsemc"] - values["sklearn"]) / abs(values["sklearn"])
print(f"objective (1): fista {values['sparsemc']!r}, scikit-learn {values['sklearn']!r}, relative gap {gap:+.2e}")
t.check(abs(gap) <= 1e-6, "fista's objective = scikit-learn's to 1e-6 relative", f"{gap:+.3e}")
# Each model's certificate bounds the other's objective from below (weak duality: D <= F* <= F).
g_ours, g_theirs = values["sparsemc gap"], values["sklearn gap"]
t.check(isinstance(g_ours, float) and values["sparsemc"] - g_ours <= values["sklearn"] * (1 + 1e-12),
        "the sparsemc model's dual bound is below scikit-learn's objective", f"gap {g_ours}")
t.check(isinstance(g_theirs, float) and values["sklearn"] - g_theirs <= values["sparsemc"] * (1 + 1e-12),
        "scikit-learn's model is certified too: its dual bound is below fista's objective", f"gap {g_theirs}")

t.done()

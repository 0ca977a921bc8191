"""Quickstart: a sparse multinomial logistic regression on the dna data shipped in the repository.

    python3 examples/python/quickstart.py
"""
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

from sparsemc import SparseLogisticRegression

data = Path(__file__).resolve().parents[2] / "data"
X, y = load_svmlight_file(str(data / "dna.scale"), n_features=180)
X_test, y_test = load_svmlight_file(str(data / "dna.scale.t"), n_features=180)

# Objective (1): (1/n) sum_i logistic loss + alpha ||W||_1 + (l2/2) ||W||^2, with an intercept.
clf = SparseLogisticRegression(penalty="l1", alpha=1e-3, l2=1e-4, tol=1e-4).fit(X, y)

used = np.flatnonzero(clf.coef_.getnnz(axis=0))
print(f"solver {clf.solver_}: {clf.status_} after {clf.n_iter_} epochs, relative duality gap {clf.relative_gap_:.1e}")
print(f"{len(used)} of {X.shape[1]} features used, {clf.coef_.nnz} nonzero weights")
print(f"test accuracy {clf.score(X_test, y_test):.4f}")
print("probabilities of the first test sample:", np.round(clf.predict_proba(X_test[:1]), 3))

clf.save("dna-logistic.model")  # sparsemc-predict and the native model format read it

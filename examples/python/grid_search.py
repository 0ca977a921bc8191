"""Choosing alpha by cross-validation in a scikit-learn Pipeline, and the regularisation path.

    python3 examples/python/grid_search.py
"""
from pathlib import Path

from sklearn.datasets import load_svmlight_file
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler

from sparsemc import SparseLinearClassifier, regularization_path

data = Path(__file__).resolve().parents[2] / "data"
X, y = load_svmlight_file(str(data / "dna.scale"), n_features=180)
X_test, y_test = load_svmlight_file(str(data / "dna.scale.t"), n_features=180)

# MaxAbsScaler keeps X sparse; the classifier is multiclass squared hinge + l1/l2 (row sparsity).
pipeline = make_pipeline(MaxAbsScaler(), SparseLinearClassifier(loss="squared-hinge", penalty="l1l2"))
search = GridSearchCV(pipeline, {"sparselinearclassifier__alpha": [3e-2, 1e-2, 3e-3, 1e-3]}, cv=3)
search.fit(X, y)
print("best alpha", search.best_params_["sparselinearclassifier__alpha"], "cv accuracy", round(search.best_score_, 4))
print("test accuracy", round(search.score(X_test, y_test), 4))

# The whole path from alpha_max (W = 0) down, warm-started and screened, each point certified.
alphas, coefs, gaps, statuses = regularization_path(X, y, loss="squared-hinge", penalty="l1l2", n_alphas=6)
for alpha, coef, gap, status in zip(alphas, coefs, gaps, statuses):
    features = (coef.getnnz(axis=0) > 0).sum()
    print(f"alpha {alpha:.2e}: {features:3d} features, duality gap {gap:.1e}, {status}")

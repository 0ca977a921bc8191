"""sparsemc: sparse linear multiclass and multilabel classifiers.

scikit-learn estimators over the C++ solvers of sparsemc (block coordinate descent, PD-Sparse's
fully-corrective Frank–Wolfe, FISTA, stochastic coordinate descent, the primal–dual method,
generalized least squares), minimising objective (1) of the library:

    F(W, b) = (1/n) Σ_i c_i ℓ(W^T x_i + b, y_i) + alpha R(W) + (l2/2) ||W||_F^2

and stopping on a certified relative duality gap; GLSClassifier fits (1) on random Fourier
features, or the calibrated and stagewise chains of Agarwal et al. (2014).

    >>> from sparsemc import SparseLinearClassifier
    >>> clf = SparseLinearClassifier(loss="logistic", penalty="l1", alpha=1e-3).fit(X, y)
    >>> clf.predict(X_test), clf.duality_gap_, clf.coef_.nnz
"""
from ._core import __version__
from ._estimators import (
    CrammerSingerSVC,
    GLSClassifier,
    PDSparseClassifier,
    SparseLinearClassifier,
    SparseLogisticRegression,
    evaluate,
    load,
    regularization_path,
    solvers,
)

__all__ = [
    "CrammerSingerSVC",
    "GLSClassifier",
    "PDSparseClassifier",
    "SparseLinearClassifier",
    "SparseLogisticRegression",
    "evaluate",
    "load",
    "regularization_path",
    "solvers",
    "__version__",
]

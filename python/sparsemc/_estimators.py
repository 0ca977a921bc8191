"""The estimators: parameters in, validated data to sparsemc._core, fitted attributes out."""
import numbers
import os
import re
import sys

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _core

# The C++ messages name the command-line flags; a Python user set parameters.
_FLAG_TO_PARAMETER = {
    "solver": "solver",
    "loss": "loss",
    "penalty": "penalty",
    "lambda": "alpha",
    "mu": "l2",
    "tol": "tol",
    "max-epochs": "max_iter",
    "time-limit": "time_limit",
    "stages": "n_stages",
    "block-size": "n_components",
}


def _python_message(error):
    """'--loss x with --penalty y' -> 'loss=x with penalty=y'; '--intercept' -> 'fit_intercept=True'."""
    def parameter(match):
        flag, after = match.group(1), match.group(2)
        if flag in ("intercept", "calibrate"):
            return ("fit_intercept" if flag == "intercept" else "calibrate") + "=True" + after
        name = _FLAG_TO_PARAMETER.get(flag, flag)
        return name + ("=" if after == " " else after)
    message = str(error).replace("; use --bias B (a constant feature)", "; add a constant column to X instead")
    return re.sub(r"--([a-z-]+)([ :;,)]|$)", parameter, message)


def _call(function, *args):
    """Runs a _core function; its ValueErrors name the Python parameters."""
    try:
        return function(*args)
    except ValueError as e:
        raise ValueError(_python_message(e)) from None


def solvers():
    """The registered solvers: name, summary, the losses and penalties each accepts."""
    return _core.solvers()


def _compressed(X):
    """X as sparsemc._core.SparseInput over its own buffers: canonical CSR or CSC (sorted,
    no duplicates) of float32/float64 values with int32/int64 indices is not copied; anything
    else is converted once."""
    if not sp.issparse(X):
        X = sp.csr_matrix(X)
    elif X.format not in ("csr", "csc"):
        X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.indptr.dtype != X.indices.dtype:  # one index type for both: convert them, share the values
        index = np.int64 if max(X.nnz, *X.shape) > np.iinfo(np.int32).max else np.int32
        X = type(X)((X.data, X.indices.astype(index), X.indptr.astype(index)), shape=X.shape, copy=False)
    n, d = X.shape
    return _core.SparseInput(X.format, n, d, X.indptr, X.indices, X.data), X


def _class_sets(Y_indicator=None, y_index=None, n_classes=0):
    """Per-sample class sets: from class indices (multiclass) or a 0/1 indicator (multilabel)."""
    if Y_indicator is not None:
        Y = sp.csr_matrix(Y_indicator)
        Y.eliminate_zeros()
        Y.sort_indices()
        return _core.ClassSets(Y.indptr.astype(np.int64), Y.indices.astype(np.int32), n_classes)
    offsets = np.arange(len(y_index) + 1, dtype=np.int64)
    return _core.ClassSets(offsets, np.ascontiguousarray(y_index, dtype=np.int32), n_classes)


def _coef_from(model, dtype):
    """coef_ (K × d, CSR) from the model's stored rows (feature support, per-row classes)."""
    n_features, K = int(model["n_features"]), len(model["labels"])
    counts = np.zeros(n_features, dtype=np.int64)
    counts[model["support"]] = np.diff(model["row_start"])
    indptr = np.concatenate(([0], np.cumsum(counts)))
    coef = sp.csc_matrix((model["weights"].astype(dtype, copy=False), model["classes"], indptr), shape=(K, n_features))
    return coef.tocsr()


def _model_from(coef, intercept, labels, provenance):
    """The model dict _core takes: coef_ (K × d) by feature rows."""
    C = sp.csc_matrix(coef)
    C.sort_indices()
    counts = np.diff(C.indptr)
    support = np.flatnonzero(counts).astype(np.int64)
    model = dict(provenance)
    model.update(
        n_features=C.shape[1],
        support=support,
        row_start=np.concatenate(([0], np.cumsum(counts[support]))).astype(np.int64),
        classes=C.indices.astype(np.int32),
        weights=np.asarray(C.data, dtype=np.float64),
        intercept=np.asarray(intercept, dtype=np.float64),
        labels=np.asarray(labels, dtype=np.int64),
    )
    return model


class SparseLinearClassifier(ClassifierMixin, BaseEstimator):
    """A sparse linear multiclass or multilabel classifier fitted by one of sparsemc's solvers.

    It minimises objective (1) of sparsemc

        F(W, b) = (1/n) sum_i c_i loss(W^T x_i + b, y_i) + alpha R(W) + (l2/2) ||W||_F^2

    over W (n_features × n_classes) and, with ``fit_intercept``, b; c_i is the sample weight times
    the class weight. The fit stops when the relative duality gap of (1) is at most ``tol``: the
    returned model is within ``tol`` (relative) of the optimum, and says so (``duality_gap_``,
    ``status_``).

    Parameters
    ----------
    loss : {"squared-hinge", "huber-hinge", "ovr-squared-hinge", "crammer-singer", "logistic", "least-squares"}
        Multiclass squared hinge (multiclass y only), its Huberised form (smooth, width 1;
        multiclass y only), one-vs-rest squared hinge, Crammer–Singer
        hinge (for multilabel y: PD-Sparse's separation ranking loss), multinomial logistic (for
        multilabel y: cross-entropy to the uniform distribution over the sample's labels),
        least squares.
    penalty : {"l1l2", "l1", "l1linf", "none"}
        R(W): the sum of the rows' l2 norms (whole feature rows vanish), the l1 norm, the sum
        of the rows' max norms, or nothing.
    alpha : float, default 1e-3
        lambda of (1), the weight of R. (``lambda`` is a Python keyword.)
    l2 : float, default 0
        mu of (1), the ridge part. ``penalty="none"`` needs l2 > 0.
    solver : str, default "auto"
        A registered solver (``sparsemc.solvers()``): "auto" picks the best one for the loss
        and penalty, as ``sparsemc-train --solver auto`` does.
    tol : float or None
        Relative duality gap at which the fit stops (None: the solver's default, 1e-3).
    max_iter : int or None
        Epochs (passes over the data) at most (None: the solver's default).
    fit_intercept : bool, default True
        Fit an unpenalised intercept b (as scikit-learn's linear models do; sparsemc-train's
        default is off, as LIBLINEAR's). "auto" then picks among the solvers that fit one.
    class_weight : dict, "balanced" or None
        Weights by class, multiplied into the sample weights.
    warm_start : bool
        Start from the previous fit's coef_ and intercept_ (same classes and features).
    random_state : int, RandomState or None
        Seed of the randomised solvers (None: the solver's fixed default seed, so a fit is
        reproducible).
    verbose : int
        0 silent; 1 a progress line about once a second; 2 every epoch (on sys.stdout).
    dtype : numpy.float32, numpy.float64 or None
        Precision of the fit. None: X's own (float32 stays float32; other types become float64).
    time_limit : float or None
        Wall-clock seconds at most.
    n_jobs : int or None
        Threads of the fit (docs/parallel.md says which solvers use them): None or -1 every
        core (OpenMP's default team, OMP_NUM_THREADS if set), k >= 1 k threads, -2 all but one
        (joblib's convention). Unlike scikit-learn's None (one job), None uses every core, as
        sparsemc-train does; a thread count changes the work's split, not the certified model.
    early_stopping : bool
        PD-Sparse's held-out early stop: hold out ``validation_fraction`` of the samples, score
        the model on them after every epoch, stop after ``n_iter_no_change`` epochs without
        improvement and keep the best epoch's model (solvers that return it: fcbcfw).
    validation_fraction : float
    n_iter_no_change : int

    Data. X is a scipy.sparse matrix or a numpy array. A CSR or CSC matrix with sorted indices
    and no duplicates, float32 or float64 values, int32 or int64 indices reaches the solver
    without a copy (the solver's other layout, if it needs one, is built once). A numpy array of
    ``dtype`` reaches every solver without a copy when it is in the layout the solver reads:
    C-contiguous for fista — auto's choice for the squared hinge, Huber hinge and logistic losses
    when there are fewer features than samples —, the Crammer–Singer solvers sdm, fbpd and
    fcbcfw, which walk each row's nonzeros, and the GLS family; Fortran-contiguous
    (``np.asfortranarray``) for the coordinate solvers bcd-ls, bcd-cst, scd, scd-ls and scd-rda,
    which walk its columns, zeros included. An array in the other layout is copied once into
    the solver's. On a mostly-zero array a CSR or CSC matrix is faster: the solvers then walk
    the nonzeros only. Any other input (COO, unsorted
    indices, integer values, or a dtype other than ``dtype``) is converted once. With
    ``early_stopping`` the training and held-out rows are copied.
    y is a 1-D array of labels of any type, or a 0/1 indicator matrix (n_samples × n_labels, as
    MultiLabelBinarizer gives) for multilabel data.

    Sample weights multiply the loss terms of (1), whose average is over all n samples: a zero
    weight is not the same as removing the sample (alpha and l2 are relative to n).

    Attributes
    ----------
    coef_ : scipy.sparse.csr_matrix, shape (n_classes, n_features)
    intercept_ : ndarray, shape (n_classes,)
    classes_ : ndarray of the labels (multilabel: 0..n_labels-1)
    n_features_in_, n_iter_ : epochs run, duality_gap_, relative_gap_, objective_, status_
        ("converged" means relative_gap_ <= tol), solver_ (the solver that ran), fit_seconds_ and
        gap_seconds_ (the part of it spent evaluating the duality gap).

    Example
    -------
    >>> clf = SparseLinearClassifier(loss="logistic", penalty="l1l2", alpha=1e-4, l2=1e-4)
    >>> clf.fit(X_train, y_train).score(X_test, y_test)
    >>> clf.coef_.getnnz(axis=0).astype(bool).sum()   # features in use
    """

    def __init__(
        self,
        loss="squared-hinge",
        penalty="l1l2",
        alpha=1e-3,
        l2=0.0,
        solver="auto",
        tol=None,
        max_iter=None,
        fit_intercept=True,
        class_weight=None,
        warm_start=False,
        random_state=None,
        verbose=0,
        dtype=None,
        time_limit=None,
        n_jobs=None,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=3,
    ):
        self.loss = loss
        self.penalty = penalty
        self.alpha = alpha
        self.l2 = l2
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose
        self.dtype = dtype
        self.time_limit = time_limit
        self.n_jobs = n_jobs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change

    # -- parameters --------------------------------------------------------------------------

    # The parameters a preset fixes (and leaves out of its __init__), by name.
    _FIXED = {}

    def _p(self, name):
        """A parameter's value: the preset's fixed one, or the instance's."""
        return self._FIXED[name] if name in self._FIXED else getattr(self, name)

    def _lambda_mu(self, n_samples):
        """(λ, μ) of (1); the presets override this."""
        return self._p("alpha"), self._p("l2")

    def _settings(self, n_samples, multilabel):
        def number(name, value, low, integer=False, allow_none=False):
            if value is None and allow_none:
                return None
            kind = numbers.Integral if integer else numbers.Real
            if isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value) or value < low:
                raise ValueError(f"{name}: expects a {'whole ' if integer else ''}number >= {low}, got {value!r}")
            return value

        lam, mu = self._lambda_mu(n_samples)
        number("alpha", lam, 0.0)
        number("l2", mu, 0.0)
        for name, value, options in (
            ("loss", self._p("loss"), [l for l in _LOSSES]),
            ("penalty", self._p("penalty"), [p for p in _PENALTIES]),
        ):
            if value not in options:
                raise ValueError(f"{name}: expects one of {', '.join(options)}; got {value!r}")
        solver, loss = self._p("solver"), self._p("loss")
        if not isinstance(solver, str):
            raise ValueError(f"solver: expects a solver name (sparsemc.solvers()) or 'auto', got {solver!r}")
        if multilabel and loss not in _core.multilabel_losses():
            raise ValueError(
                f"loss={loss!r} does not support multilabel y; multilabel losses: "
                + ", ".join(_core.multilabel_losses())
            )
        if self.verbose not in (0, 1, 2) and not isinstance(self.verbose, (bool, numbers.Integral)):
            raise ValueError(f"verbose: expects 0, 1 or 2, got {self.verbose!r}")
        seed = None
        if self.random_state is not None:
            seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max)) if not isinstance(
                self.random_state, numbers.Integral) else int(self.random_state)
            if seed < 0:
                raise ValueError(f"random_state: expects an int >= 0, got {self.random_state!r}")
        n_jobs = self._p("n_jobs")
        if n_jobs is None:
            threads = 0
        elif isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
            raise ValueError(f"n_jobs: expects None, -1 (every core) or a nonzero int, got {n_jobs!r}")
        else:
            threads = 0 if n_jobs == -1 else int(n_jobs) if n_jobs > 0 else max(1, (os.cpu_count() or 1) + 1 + n_jobs)
        return dict(
            threads=threads,
            loss=self._p("loss"),
            penalty=self._p("penalty"),
            **{"lambda": float(lam)},
            mu=float(mu),
            tol=number("tol", self.tol, 0.0, allow_none=True),
            max_epochs=number("max_iter", self.max_iter, 1, integer=True, allow_none=True),
            time_limit=number("time_limit", self.time_limit, 0.0, allow_none=True),
            seed=seed,
            fit_intercept=bool(self._p("fit_intercept")),
            multilabel=bool(multilabel),
        )

    def _float_type(self, X):
        if self.dtype is None:
            return np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
        if np.dtype(self.dtype) not in (np.float32, np.float64):
            raise ValueError(f"dtype: expects numpy.float32, numpy.float64 or None, got {self.dtype!r}")
        return np.dtype(self.dtype).type

    def _progress(self):
        if not self.verbose:
            return None, False
        return (lambda line: print(line, file=sys.stdout, flush=True)), int(self.verbose) >= 2

    # -- fit ---------------------------------------------------------------------------------

    def _encode_targets(self, y):
        """(class sets, multilabel?) with classes_ set."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        if not sp.issparse(y):
            y = np.asarray(y)
        if sp.issparse(y) or (y.ndim == 2 and y.shape[1] > 1):
            if type_of_target(y) != "multilabel-indicator":
                raise ValueError("y: a 2-D y must be a 0/1 indicator matrix (n_samples × n_labels)")
            Y = sp.csr_matrix(y)
            self.classes_ = np.arange(Y.shape[1])
            return Y, None, True
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in the data, but the data contains only one "
                f"class: {self.classes_[0]!r}"
            )
        return None, y_index, False

    def _costs(self, X, sample_weight, Y, y_index, dtype):
        """c_i: sample weight × class weight (multilabel: the mean over the sample's labels)."""
        n = X.shape[0]
        if sample_weight is None and self._p("class_weight") is None:
            return None
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if self._p("class_weight") is not None:
            K = len(self.classes_)
            if Y is not None:
                counts = np.asarray(Y.sum(axis=0)).ravel()
                if self._p("class_weight") == "balanced":
                    per_class = Y.shape[0] / (K * np.maximum(counts, 1))
                else:
                    per_class = np.array([self._p("class_weight").get(k, 1.0) for k in self.classes_], dtype=float)
                labels_per_sample = np.asarray(Y.sum(axis=1)).ravel()
                mean = np.asarray(Y @ per_class).ravel() / np.maximum(labels_per_sample, 1)
                weights *= np.where(labels_per_sample > 0, mean, 1.0)
            else:
                weights *= compute_class_weight(self._p("class_weight"), classes=self.classes_,
                                                y=self.classes_[y_index])[y_index]
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("sample_weight: expects finite values >= 0")
        return np.ascontiguousarray(weights, dtype=dtype)

    def fit(self, X, y, sample_weight=None):
        """Fits the model; returns self. See the class docstring for what X and y may be."""
        X = self._validate_data(X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32),
                                accept_large_sparse=True, reset=True)
        dtype = self._float_type(X)
        if X.dtype != dtype:
            X = X.astype(dtype)
        Y, y_index, multilabel = self._encode_targets(y)
        self.multilabel_ = multilabel
        if X.shape[0] != (Y.shape[0] if Y is not None else len(y_index)):
            raise ValueError(f"X has {X.shape[0]} samples but y has {Y.shape[0] if Y is not None else len(y_index)}")
        K = len(self.classes_)
        costs = self._costs(X, sample_weight, Y, y_index, dtype)
        settings = self._settings(X.shape[0], multilabel)
        progress, every_epoch = self._progress()
        self._fit_with(X, Y, y_index, K, costs, settings, progress, every_epoch)
        return self

    def _fit_with(self, X, Y, y_index, K, costs, settings, progress, every_epoch):
        dtype = X.dtype.type
        if self._p("early_stopping"):
            fraction, patience = self._p("validation_fraction"), self._p("n_iter_no_change")
            if not (0.0 < fraction < 1.0):
                raise ValueError(f"validation_fraction: expects a number in (0, 1), got {fraction!r}")
            if not isinstance(patience, numbers.Integral) or patience < 1:
                raise ValueError(f"n_iter_no_change: expects a whole number >= 1, got {patience!r}")
            rows = np.arange(X.shape[0])
            # Stratified when every class can give a held-out sample and keep a training one.
            held_count = int(np.ceil(fraction * len(rows)))
            stratify = (y_index if Y is None and held_count >= K and np.min(np.bincount(y_index)) >= 2
                        else None)
            train, held = train_test_split(rows, test_size=fraction, stratify=stratify,
                                           random_state=check_random_state(self.random_state if self.random_state
                                                                           is not None else 0))
            X = sp.csr_matrix(X)
            X_train, _ = _compressed(X[train])
            X_held, _ = _compressed(X[held])
            sets = (lambda r: _class_sets(Y[r], None, K)) if Y is not None else (lambda r: _class_sets(None, y_index[r], K))
            result = _call(_core.fit_heldout, X_train, sets(train), X_held, sets(held), int(patience),
                           settings, self._p("solver"), None if costs is None else costs[train], progress, every_epoch)
        else:
            init = None
            if self._p("warm_start") and hasattr(self, "coef_") and self.coef_.shape == (K, X.shape[1]):
                init = _model_from(self.coef_, self.intercept_ if self._p("fit_intercept") else [], np.arange(K), {})
            layout = None if sp.issparse(X) else _core.dense_layout(settings, self._p("solver"), *X.shape)
            if layout is not None:
                X = np.asarray(X, order=layout)  # not copied when already in the layout the solver reads
                result = _call(_core.fit_dense, X, _class_sets(Y, y_index, K), settings, self._p("solver"), costs,
                               init, progress, every_epoch)
            else:
                X_input, _ = _compressed(X)  # holds X's buffers while the fit runs
                result = _call(_core.fit, X_input, _class_sets(Y, y_index, K), settings, self._p("solver"), costs,
                               init, progress, every_epoch)
        self._set_fitted(result, dtype, K)

    def _set_fitted(self, result, dtype, K):
        self.coef_ = _coef_from(result, dtype)
        intercept = np.asarray(result["intercept"], dtype=dtype)
        self.intercept_ = intercept if intercept.size else np.zeros(K, dtype=dtype)
        self._set_info(result)

    def _set_info(self, result):
        """The fit's report: the attributes every model has."""
        self.n_iter_ = int(result["epochs"])
        self.duality_gap_ = float(result["duality_gap"])
        self.relative_gap_ = float(result["relative_gap"])
        self.objective_ = float(result["objective"])
        self.status_ = result["status_name"]
        self.solver_ = result["solver"]
        self.fit_seconds_ = float(result["seconds"])
        self.gap_seconds_ = float(result.get("gap_seconds", 0.0))
        self._provenance = {key: result[key] for key in ("loss", "penalty", "solver", "lambda", "mu", "status")}

    # -- predict -----------------------------------------------------------------------------

    def _scores(self, X):
        check_is_fitted(self)
        X = self._validate_data(X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32),
                                accept_large_sparse=True, reset=False)
        S = X @ self.coef_.T.astype(X.dtype, copy=False)
        S = S.toarray() if sp.issparse(S) else np.asarray(S)
        return S + self.intercept_

    def decision_function(self, X):
        """Scores W^T x + b, shape (n_samples, n_classes); for two classes (not multilabel)
        s_1 - s_0, shape (n_samples,), as scikit-learn's binary classifiers."""
        S = self._scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 and not self.multilabel_ else S

    def predict(self, X):
        """Labels: the best-scored class (ties to the first); multilabel: the indicator of the
        classes with a positive score, and the best-scored one if none is positive."""
        S = self._scores(X)
        best = np.argmax(S, axis=1)
        if not self.multilabel_:
            return self.classes_[best]
        P = (S > 0).astype(int)
        P[np.arange(len(best)), best] = 1
        return P

    def _has_probabilities(self):
        return self._p("loss") == "logistic" and not getattr(self, "multilabel_", False)

    @available_if(_has_probabilities)
    def predict_proba(self, X):
        """Class probabilities softmax(W^T x + b) of a multinomial logistic model (loss="logistic").
        Other losses do not estimate probabilities: this method does not exist for them."""
        S = self._scores(X)
        S -= S.max(axis=1, keepdims=True)
        P = np.exp(S)
        P /= P.sum(axis=1, keepdims=True)
        return P

    @available_if(_has_probabilities)
    def predict_log_proba(self, X):
        """log predict_proba."""
        S = self._scores(X)
        S -= S.max(axis=1, keepdims=True)
        return S - np.log(np.exp(S).sum(axis=1, keepdims=True))

    # -- files -------------------------------------------------------------------------------

    def save(self, path, format="native"):
        """Writes the model as sparsemc-train does ("native") or as LIBLINEAR's train does
        ("liblinear"): sparsemc-predict and liblinear-predict read it. Needs integer labels."""
        check_is_fitted(self)
        intercept = self.intercept_ if self._p("fit_intercept") else []
        _call(_core.save_model, _model_from(self.coef_, intercept, self._file_labels(), self._provenance), str(path),
              format)

    def _file_labels(self):
        """classes_ as the integer labels a model file holds."""
        if self.multilabel_:
            return np.asarray(self.classes_, dtype=np.int64)
        if self.classes_.dtype.kind in "iu" or (self.classes_.dtype.kind == "f"
                                                and np.all(self.classes_ == np.round(self.classes_))):
            return self.classes_.astype(np.int64)
        raise ValueError(f"save: model files hold integer labels; classes_ are {self.classes_.dtype}")

    # scikit-learn's estimator checks that fail by design, with the reason (docs/python.md).
    _XFAIL_CHECKS = {
        "check_sample_weights_invariance":
            "(1) averages the weighted losses over all n samples, so a zero weight rescales alpha and l2 "
            "instead of removing the sample; the check also compares two different fits at rtol 1e-7, "
            "tighter than a certified tol",
    }

    def _more_tags(self):
        return {"_xfail_checks": dict(self._XFAIL_CHECKS)}


# The losses and penalties of the compiled registry (tools/registry/policies.hpp): a loss added
# there is one here too.
_LOSSES = tuple(_core.losses())
_PENALTIES = tuple(_core.penalties())


def load(path):
    """A SparseLinearClassifier from a model file written by save(), sparsemc-train or LIBLINEAR's
    train (the format is recognised), or a GLSClassifier from a staged model file (gls-cal,
    stagewise, gls on random features). Its parameters are those the file records."""
    model = _call(_core.load_model, str(path))
    if "staged" in model:
        return GLSClassifier._loaded(model)
    loss = model["loss"] if model["loss"] in _LOSSES else "squared-hinge"
    penalty = model["penalty"] if model["penalty"] in _PENALTIES else "none"
    clf = SparseLinearClassifier(loss=loss, penalty=penalty, alpha=model["lambda"], l2=model["mu"],
                                 fit_intercept=len(model["intercept"]) > 0)
    K = len(model["labels"])
    clf.classes_ = np.asarray(model["labels"])
    clf._set_fitted(dict(model, epochs=0, duality_gap=np.nan, relative_gap=np.nan, objective=np.nan,
                         status_name=model["status"], seconds=0.0), np.float64, K)
    if model["bias"] >= 0:  # LIBLINEAR's -B: the last feature is the constant `bias`; it is the intercept
        bias_row = clf.coef_[:, -1].toarray().ravel()
        clf.coef_ = clf.coef_[:, :-1].tocsr()
        clf.coef_.eliminate_zeros()
        clf.intercept_ = clf.intercept_ + model["bias"] * bias_row
        clf.fit_intercept = True
    clf.n_features_in_ = clf.coef_.shape[1]
    clf.multilabel_ = False
    return clf


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
        raise ValueError(f"{name}: expects a number > 0, got {value!r}")
    return value


class SparseLogisticRegression(SparseLinearClassifier):
    """Multinomial logistic regression with an l1 (default), l1/l2 or no penalty:
    SparseLinearClassifier(loss="logistic"), with an intercept by default. predict_proba gives
    the softmax probabilities.

    >>> SparseLogisticRegression(penalty="l1", alpha=1e-4).fit(X, y).predict_proba(X_test)
    """

    _FIXED = dict(loss="logistic", early_stopping=False, validation_fraction=0.1, n_iter_no_change=3)

    def __init__(self, penalty="l1", alpha=1e-3, l2=0.0, solver="auto", tol=None, max_iter=None, fit_intercept=True,
                 class_weight=None, warm_start=False, random_state=None, verbose=0, dtype=None, time_limit=None,
                 n_jobs=None):
        self.penalty = penalty
        self.alpha = alpha
        self.l2 = l2
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose
        self.dtype = dtype
        self.time_limit = time_limit
        self.n_jobs = n_jobs


class CrammerSingerSVC(SparseLinearClassifier):
    """The multiclass SVM of Crammer and Singer parametrised as LIBLINEAR's -s 4 and
    scikit-learn's LinearSVC(multi_class="crammer_singer") are (C, the loss summed, not averaged),
    with an optional l1 part: loss="crammer-singer", l2 = 1/(n C), alpha = l1_ratio · l2.

    >>> CrammerSingerSVC(C=1.0).fit(X, y)      # the objective of liblinear-train -s 4 -c 1
    """

    _FIXED = dict(loss="crammer-singer", penalty="l1", fit_intercept=False, early_stopping=False,
                  validation_fraction=0.1, n_iter_no_change=3)

    _XFAIL_CHECKS = dict(SparseLinearClassifier._XFAIL_CHECKS, check_class_weight_classifiers=(
        "no intercept, as its peers (LIBLINEAR -s 4, PD-Sparse): on the check's uncentred blobs no linear "
        "function through the origin predicts the heavily weighted class everywhere"))

    def __init__(self, C=1.0, l1_ratio=0.0, solver="auto", tol=None, max_iter=None, class_weight=None,
                 warm_start=False, random_state=None, verbose=0, dtype=None, time_limit=None, n_jobs=None):
        self.C = C
        self.l1_ratio = l1_ratio
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose
        self.dtype = dtype
        self.time_limit = time_limit
        self.n_jobs = n_jobs

    def _lambda_mu(self, n_samples):
        mu = 1.0 / (n_samples * _positive("C", self.C))
        return self.l1_ratio * mu, mu


class PDSparseClassifier(SparseLinearClassifier):
    """PD-Sparse (Yen et al. 2016) for extreme multiclass and multilabel problems: the
    fully-corrective block-coordinate Frank–Wolfe solver (fcbcfw) on the Crammer–Singer /
    separation ranking loss with l1 and l2 parts, parametrised as PD-Sparse's multiTrain
    (-c C, -l lambda'): l2 = 1/(n C), alpha = l1 · l2; its held-out early stop (-h) on by default.

    >>> PDSparseClassifier(C=1.0, l1=0.1).fit(X, Y_indicator).predict(X_test)
    """

    _FIXED = dict(loss="crammer-singer", penalty="l1", solver="fcbcfw", fit_intercept=False, class_weight=None,
                  warm_start=False)

    _XFAIL_CHECKS = dict(SparseLinearClassifier._XFAIL_CHECKS, check_class_weight_classifiers=(
        "no intercept, as its peers (LIBLINEAR -s 4, PD-Sparse): on the check's uncentred blobs no linear "
        "function through the origin predicts the heavily weighted class everywhere"))

    def __init__(self, C=1.0, l1=0.1, tol=None, max_iter=None, random_state=None, verbose=0, dtype=None,
                 time_limit=None, n_jobs=None, early_stopping=True, validation_fraction=0.1, n_iter_no_change=3):
        self.C = C
        self.l1 = l1
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.dtype = dtype
        self.time_limit = time_limit
        self.n_jobs = n_jobs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change

    def _lambda_mu(self, n_samples):
        mu = 1.0 / (n_samples * _positive("C", self.C))
        return self.l1 * mu, mu


class GLSClassifier(SparseLinearClassifier):
    """Generalized least squares (Agarwal, Kakade, Karampatziakis, Song and Valiant 2014) for dense,
    ill-conditioned problems of a few thousand features, by default on random Fourier features
    of a Gaussian kernel (Rahimi and Recht 2007): a kernel classifier at a linear fit's cost.

    method="gls" (Algorithm 1, solver gls) minimises the ridge objective (1) of a generalised
    linear loss over the features phi(x),

        F(W, b) = (1/n) sum_i c_i loss(W^T phi(x_i) + b, y_i) + (l2/2) ||W||_F^2,

    by quasi-Newton steps whose metric is the factorised second moment of phi(X), and stops on
    its relative duality gap (``duality_gap_``), as every solver of the library does.
    method="calibrated" (Algorithm 2, solver gls-cal) alternates least-squares fits of the
    residual with a learned cubic link and the projection onto the simplex; method="stagewise"
    (Algorithm 3, solver stagewise) adds ``n_stages`` fits, each on a fresh block of
    ``n_components`` features. These two have no certificate of (1): ``status_`` says why they
    stopped and ``duality_gap_`` is NaN.

    Parameters
    ----------
    method : {"gls", "calibrated", "stagewise"}
    loss : {"logistic", "least-squares"} or None
        The link: softmax (logistic) or identity (least squares). None: logistic, and least
        squares for "calibrated" (the only loss it takes).
    features : {"rff", "original", "sample", "sample-replace", "frequent"}
        phi: random Fourier features; the data's own features (gls, calibrated; with gls the
        model is linear and has ``coef_``); stagewise's blocks of the data's features drawn
        without or with replacement, or by decreasing frequency.
    n_components : int or None
        The features of each fit: D random Fourier features (gls, calibrated; None: 1000), or
        the block of P random or original features of each stage (stagewise; None: 512), so
        that a stagewise chain reads n_stages · P features.
    bandwidth : float or None
        sigma of the kernel exp(-||x - x'||^2 / (2 sigma^2)). None: sigma^2 = (1/n) sum_i
        ||x_i - mean||^2, half the mean squared distance between two samples.
    n_stages : int or None
        Stagewise: the number of stages T (None: 8).
    calibrate : bool
        Stagewise with least squares: calibrate every stage (Algorithm 2's link).
    l2 : float, default 1e-4
        mu of (1), the ridge.
    fit_intercept, class_weight, tol, max_iter, random_state, verbose, dtype, time_limit, n_jobs
        As in SparseLinearClassifier; ``tol`` and ``max_iter`` are each method's own (the
        solver summaries of ``sparsemc.solvers()``: GLS's gap, gls-cal's stall, stagewise's GLS
        iterations per block); ``random_state`` seeds the random features and the blocks.

    Attributes
    ----------
    classes_, n_features_in_, n_iter_, objective_, duality_gap_, relative_gap_, status_, solver_,
    fit_seconds_; ``coef_`` and ``intercept_`` when the model is linear (method="gls" on
    features="original"), ``n_stages_`` otherwise: the model is then a chain of stages
    (sparsemc's staged model), kept in C++, that pickles and saves to the staged-model file
    sparsemc-predict reads.

    predict_proba: the softmax of the scores (logistic) or the calibrated scores themselves,
    which lie on the simplex (calibrated); other models have no predict_proba.

    Data. A C-contiguous numpy array of float32 or float64 (of ``dtype``) reaches the solver
    without a copy, as the solver's dense design (so do the sample weights); an F-ordered one is
    copied once into C order. Sparse X is taken as by SparseLinearClassifier.

    >>> GLSClassifier(n_components=2000, l2=1e-5).fit(X, y).score(X_test, y_test)
    """

    _METHODS = {"gls": "gls", "calibrated": "gls-cal", "stagewise": "stagewise"}
    _FEATURES = {"gls": ("rff", "original"), "calibrated": ("rff", "original"),
                 "stagewise": ("rff", "sample", "sample-replace", "frequent")}
    _DEFAULT_COMPONENTS = 1000
    _FIXED = dict(penalty="none", alpha=0.0, warm_start=False, early_stopping=False, validation_fraction=0.1,
                  n_iter_no_change=3)

    def __init__(self, method="gls", loss=None, features="rff", n_components=None, bandwidth=None, n_stages=None,
                 calibrate=False, l2=1e-4, fit_intercept=True, class_weight=None, tol=None, max_iter=None,
                 random_state=None, verbose=0, dtype=None, time_limit=None, n_jobs=None):
        self.method = method
        self.loss = loss
        self.features = features
        self.n_components = n_components
        self.bandwidth = bandwidth
        self.n_stages = n_stages
        self.calibrate = calibrate
        self.l2 = l2
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.dtype = dtype
        self.time_limit = time_limit
        self.n_jobs = n_jobs

    def _p(self, name):
        if name == "solver":
            if self.method not in self._METHODS:
                raise ValueError(f"method: expects one of {', '.join(self._METHODS)}; got {self.method!r}")
            return self._METHODS[self.method]
        if name == "loss" and self.loss is None:
            return "least-squares" if self.method == "calibrated" else "logistic"
        return super()._p(name)

    def _settings(self, n_samples, multilabel):
        settings = super()._settings(n_samples, multilabel)  # names a bad method first
        method = self.method

        def count(name, value):
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1):
                raise ValueError(f"{name}: expects None or a whole number >= 1, got {value!r}")
            return value

        if self.features not in self._FEATURES[method]:
            raise ValueError(f"features: method={method!r} takes one of {', '.join(self._FEATURES[method])}; "
                             f"got {self.features!r}")
        D = count("n_components", self.n_components)
        if self.bandwidth is not None:
            _positive("bandwidth", self.bandwidth)
        if D is not None and self.features == "original":
            raise ValueError("n_components: not with features='original', which fits on the data's own features")
        if self.bandwidth is not None and self.features != "rff":
            raise ValueError(f"bandwidth: only with features='rff', got features={self.features!r}")
        for name, value in (("n_stages", count("n_stages", self.n_stages)), ("calibrate", self.calibrate or None)):
            if value is not None and method != "stagewise":
                raise ValueError(f"{name}: only with method='stagewise', got method={method!r}")
        features, block_size = self.features, None
        if method == "stagewise":
            block_size = D  # P of every stage; the generator draws as many as a stage needs
        elif features == "rff":
            features = f"rff:{self._DEFAULT_COMPONENTS if D is None else D}"
        if features.startswith("rff") and self.bandwidth is not None:
            features += (":" if method != "stagewise" else "::") + repr(float(self.bandwidth))
        settings.update(features=features, stages=self.n_stages, block_size=block_size, calibrate=bool(self.calibrate))
        return settings

    def _set_fitted(self, result, dtype, K):
        if "staged" not in result:
            for name in ("_staged", "_staged_dtype", "_calibrated", "n_stages_"):
                self.__dict__.pop(name, None)
            super()._set_fitted(result, dtype, K)
            return
        for name in ("coef_", "intercept_"):
            self.__dict__.pop(name, None)
        self._staged, self._staged_dtype = result["staged"], dtype
        self.n_stages_ = int(result["n_stages"])
        self._calibrated = bool(result["calibrated"])
        self._set_info(result)

    @classmethod
    def _loaded(cls, model):
        """The estimator of a staged model file (`_core.load_model`'s description)."""
        method = {solver: method for method, solver in cls._METHODS.items()}.get(model["solver"], "stagewise")
        loss = model["loss"] if model["loss"] in _LOSSES else None
        clf = cls(method=method, loss=loss, l2=model["mu"])
        clf.classes_ = np.asarray(model["labels"])
        clf.n_features_in_ = int(model["n_features"])
        clf.multilabel_ = False
        clf._set_fitted(dict(model, epochs=0, duality_gap=np.nan, relative_gap=np.nan, objective=np.nan,
                             status_name=model["status"], seconds=0.0), np.float64, len(model["labels"]))
        return clf

    def _scores(self, X):
        if "_staged" not in self.__dict__:
            return super()._scores(X)
        check_is_fitted(self)
        X = self._validate_data(X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32),
                                accept_large_sparse=True, reset=False)
        if not sp.issparse(X):
            return _call(self._staged.decision_function_dense, np.ascontiguousarray(X, dtype=self._staged_dtype))
        X_input, _ = _compressed(sp.csr_matrix(X, dtype=self._staged_dtype))
        return _call(self._staged.decision_function, X_input)

    def _has_probabilities(self):
        if getattr(self, "multilabel_", False):
            return False
        return self._p("loss") == "logistic" or getattr(self, "_calibrated", False)

    @available_if(_has_probabilities)
    def predict_proba(self, X):
        """Class probabilities: the softmax of the scores (logistic), or the calibrated scores,
        which lie on the probability simplex (calibrated models)."""
        if getattr(self, "_calibrated", False):
            return self._scores(X)
        return super().predict_proba(X)

    @available_if(_has_probabilities)
    def predict_log_proba(self, X):
        """log predict_proba."""
        if getattr(self, "_calibrated", False):
            with np.errstate(divide="ignore"):
                return np.log(self._scores(X))
        return super().predict_log_proba(X)

    def save(self, path, format="native"):
        """Writes the model: a linear one as SparseLinearClassifier.save does, a staged one as the
        staged-model file sparsemc-train writes for gls-cal, stagewise and gls on random features
        (its only format), which sparsemc-predict and sparsemc.load read."""
        if "_staged" not in self.__dict__:
            return super().save(path, format)
        check_is_fitted(self)
        if format != "native":
            raise ValueError(f"format: a staged model has one format, 'native'; got {format!r}")
        _call(self._staged.save, str(path), self._file_labels())
        return None


def regularization_path(X, y, loss="squared-hinge", penalty="l1l2", l2=0.0, alphas=None, n_alphas=10,
                        alpha_min_ratio=1e-2, solver="auto", tol=None, max_iter=None, fit_intercept=False,
                        sample_weight=None, verbose=0):
    """Fits (1) along a decreasing grid of alpha (= lambda), each fit warm-started from the
    previous one (BlockCD's screened path where the solver has it).

    Without ``alphas`` the grid is ``n_alphas`` values from alpha_max (the smallest alpha at which
    W = 0 is optimal; Crammer–Singer: a bound at which it is proven optimal) down to
    ``alpha_min_ratio · alpha_max``, geometrically. Returns (alphas, coefs, gaps, statuses):
    coefs[i] is the (n_classes, n_features) CSR coef_ at alphas[i]; gaps[i] its duality gap.
    """
    clf = SparseLinearClassifier(loss=loss, penalty=penalty, alpha=0.0, l2=l2, solver=solver, tol=tol,
                                 max_iter=max_iter, fit_intercept=fit_intercept, verbose=verbose)
    X = clf._validate_data(X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32), accept_large_sparse=True)
    Y, y_index, multilabel = clf._encode_targets(y)
    K = len(clf.classes_)
    settings = clf._settings(X.shape[0], multilabel)
    X_input, X_used = _compressed(X)
    sets = _class_sets(Y, y_index, K)
    costs = clf._costs(X, sample_weight, Y, y_index, X.dtype.type)
    if alphas is None:
        top = _call(_core.lambda_max, X_input, sets, settings)
        alphas = np.geomspace(top, top * alpha_min_ratio, n_alphas)
    alphas = np.sort(np.asarray(alphas, dtype=float))[::-1]
    progress, every_epoch = clf._progress()
    results = _call(_core.path, X_input, sets, settings, solver, list(alphas), costs, progress, every_epoch)
    coefs = [_coef_from(r, X.dtype.type) for r in results]
    gaps = np.array([r["duality_gap"] for r in results])
    return alphas, coefs, gaps, [r["status_name"] for r in results]


def evaluate(X, y, coef, intercept=None, *, loss, penalty, alpha, l2=0.0, sample_weight=None):
    """Objective (1) of a linear model (coef: (n_classes, n_features), rows in the order of
    np.unique(y), or the columns of an indicator y; intercept or None) on (X, y), with its loss
    and penalty parts and its duality gap, an upper bound on F - F* (NaN for a loss without
    one). Certifies any model, also one fitted by another library, as sparsemc-eval does.

    >>> evaluate(X, y, clf.coef_, clf.intercept_, loss="logistic", penalty="l1", alpha=1e-3)["duality_gap"]
    """
    clf = SparseLinearClassifier(loss=loss, penalty=penalty, alpha=alpha, l2=l2)
    X = clf._validate_data(X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32), accept_large_sparse=True)
    Y, y_index, multilabel = clf._encode_targets(y)
    K = len(clf.classes_)
    coef = sp.csr_matrix(coef)
    if coef.shape != (K, X.shape[1]):
        raise ValueError(f"coef: expects shape ({K}, {X.shape[1]}), got {coef.shape}")
    settings = clf._settings(X.shape[0], multilabel)
    model = _model_from(coef, [] if intercept is None else intercept, np.arange(K), {})
    X_input, _ = _compressed(X)
    costs = clf._costs(X, sample_weight, Y, y_index, X.dtype.type)
    return _call(_core.evaluate, X_input, _class_sets(Y, y_index, K), settings, model, costs)

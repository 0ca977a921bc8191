"""The Python package checked by optimality and against the command-line tools.

Every fit is judged by its certificate (relative duality gap <= tol) or by agreeing with another
path to the same optimum, not by an accuracy any half-converged model reaches.
"""
import _thread
import json
import pickle
import signal
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import sparsemc
from sparsemc import (CrammerSingerSVC, PDSparseClassifier, SparseLinearClassifier, SparseLogisticRegression,
                      regularization_path)

from conftest import tool


def _fit_allocation_peak(clf, X, y):
    """Fits clf on (X, y); returns the peak of Python's allocations during the fit (tracemalloc)."""
    tracemalloc.start()
    try:
        clf.fit(X, y)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@parametrize_with_checks([SparseLinearClassifier(), SparseLogisticRegression(), CrammerSingerSVC(),
                          PDSparseClassifier()])
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


# One (solver, loss, penalty, lambda, mu, intercept) per solver family of the registry.
FAMILIES = [
    ("bcd-ls", "squared-hinge", "l1l2", 1e-3, 0.0, False),
    ("bcd-cst", "logistic", "l1", 1e-3, 1e-4, False),
    ("fista", "logistic", "l1l2", 1e-3, 1e-4, True),
    ("scd", "ovr-squared-hinge", "l1", 1e-3, 0.0, False),
    ("fcbcfw", "crammer-singer", "l1", 1e-3, 1e-3, False),
    ("fbpd", "squared-hinge", "l1", 1e-3, 0.0, False),
    ("sdm", "crammer-singer", "l1", 0.0, 1e-3, False),
    ("gls", "logistic", "none", 0.0, 1e-3, False),
]


def registered(solver):
    return any(s["name"] == solver for s in sparsemc.solvers())


@pytest.mark.parametrize("solver,loss,penalty,lam,mu,intercept", FAMILIES)
def test_same_objective_as_the_command_line(tmp_path, dna, train_tool, solver, loss, penalty, lam, mu, intercept):
    """The same fit through sparsemc-train and through Python: the same objective to 1e-10."""
    if not registered(solver):
        pytest.skip(f"SKIPPED: solver {solver} is not registered")
    X, y, _, _ = dna
    args = [str(train_tool), "--quiet", "--json", "--solver", solver, "--loss", loss, "--penalty", penalty,
            "--lambda", repr(lam), "--mu", repr(mu), "--tol", "1e-6"]
    if intercept:
        args.append("--intercept")
    out = subprocess.run(args + [str(tool_data("dna.scale")), str(tmp_path / "model")], check=True,
                         capture_output=True, text=True)
    expected = json.loads(out.stdout)
    clf = SparseLinearClassifier(loss=loss, penalty=penalty, alpha=lam, l2=mu, solver=solver, tol=1e-6,
                                 fit_intercept=intercept).fit(X, y)
    assert clf.solver_ == solver
    assert clf.objective_ == pytest.approx(expected["objective"], rel=1e-10)
    assert clf.n_iter_ == expected["epochs"]


def tool_data(name):
    from conftest import DATA
    return DATA / name


def test_certificate_and_solvers_agree(dna):
    """Two solvers of (1) certified at 1e-8 reach the same objective (their gaps bound the difference)."""
    X, y, _, _ = dna
    a = SparseLinearClassifier(loss="logistic", penalty="l1l2", alpha=1e-3, l2=1e-4, solver="bcd-ls", tol=1e-8).fit(X, y)
    b = SparseLinearClassifier(loss="logistic", penalty="l1l2", alpha=1e-3, l2=1e-4, solver="fista", tol=1e-8,
                               max_iter=100000).fit(X, y)
    for clf in (a, b):
        assert clf.status_ == "converged"
        assert clf.relative_gap_ <= 1e-8
    assert abs(a.objective_ - b.objective_) <= a.duality_gap_ + b.duality_gap_


def test_ridge_logistic_is_not_zero(dna):
    """Plain ridge multinomial logistic regression (the issue's 'W = 0 converged' case)."""
    X, y, X_test, y_test = dna
    clf = SparseLogisticRegression(penalty="none", l2=1e-3, fit_intercept=False).fit(X, y)
    assert clf.status_ == "converged" and clf.relative_gap_ <= 1e-3
    assert 0 < clf.gap_seconds_ <= clf.fit_seconds_  # the certificate was evaluated, its time is part of the fit
    assert clf.coef_.nnz > 0
    P = clf.predict_proba(X_test)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X_test))


def test_zero_copy(dna):
    """A canonical CSR (or CSC) reaches the solver as the caller's buffers: the C++ side holds the
    very data pointer, and no numpy allocation of X's size happens during the fit."""
    X, y, _, _ = dna
    X = sp.vstack([X] * 20, format="csr")  # 40 000 samples: X.data is 29 MB
    y = np.tile(y, 20)
    for layout, solver in (("csr", "fista"), ("csc", "bcd-ls")):
        Z = X.asformat(layout)
        handle, used = sparsemc._estimators._compressed(Z)
        assert used is Z and handle.data_pointer == Z.data.ctypes.data
        clf = SparseLinearClassifier(loss="squared-hinge", penalty="l1", alpha=1e-2, solver=solver, max_iter=3)
        peak = _fit_allocation_peak(clf, Z, y)
        assert peak < Z.data.nbytes / 4, f"{layout}: {peak} bytes of Python allocations for X of {Z.data.nbytes}"


def test_dense_arrays_reach_fista_without_a_copy(dna):
    """A C-contiguous array is fista's dense design (auto's choice on tall data for the coupled
    losses): no numpy allocation of X's size, the CSR fit's objective, warm starts; solvers that
    take a column-major X get the array in Fortran order."""
    X, y, _, _ = dna
    D, Y = np.tile(X.toarray(), (10, 1)), np.tile(y, 10)  # 20 000 samples: 29 MB
    settings = SparseLinearClassifier(loss="logistic")._settings(D.shape[0], False)
    assert sparsemc._core.dense_layout(settings, "auto", *D.shape) == "C"
    assert sparsemc._core.dense_layout(settings, "bcd-ls", *D.shape) == "F"
    clf = SparseLinearClassifier(loss="logistic", alpha=1e-3, max_iter=3)
    peak = _fit_allocation_peak(clf, D, Y)
    assert clf.solver_ == "fista"
    assert peak < D.nbytes / 4, f"{peak} bytes of Python allocations for X of {D.nbytes}"
    for loss, penalty in (("logistic", "l1l2"), ("squared-hinge", "l1")):
        params = dict(loss=loss, penalty=penalty, alpha=1e-3, tol=1e-8, solver="fista")
        sparse_fit = SparseLinearClassifier(**params).fit(X, y)
        for dense in (X.toarray(), np.asfortranarray(X.toarray()), X.toarray().astype(np.float32)):
            dense_fit = SparseLinearClassifier(**params, dtype=np.float64).fit(dense, y)
            assert dense_fit.status_ == "converged"
            assert dense_fit.objective_ == pytest.approx(sparse_fit.objective_, rel=1e-9)
    warm = SparseLinearClassifier(loss="logistic", alpha=1e-3, tol=1e-6, warm_start=True).fit(X.toarray(), y)
    epochs = warm.n_iter_
    warm.fit(X.toarray(), y)
    assert warm.status_ == "converged" and warm.n_iter_ < epochs
    other = SparseLinearClassifier(loss="logistic", alpha=1e-3, tol=1e-6, solver="bcd-ls").fit(X.toarray(), y)
    assert other.status_ == "converged" and other.solver_ == "bcd-ls"


# Solvers that walk a dense array's rows by their nonzeros, with an estimator auto gives them
# and how close their dense fit is to the CSR one: sdm's and fcbcfw's arithmetic is the CSR
# fit's, fbpd's power method and certificate take matrix products on a dense X.
DENSE_ROW_SOLVERS = [
    ("sdm", lambda **kw: CrammerSingerSVC(C=1.0, **kw), 0.0),
    ("fbpd", lambda **kw: SparseLinearClassifier(loss="crammer-singer", penalty="l1l2", alpha=1e-3, l2=1e-3,
                                                 fit_intercept=False, **kw), 1e-9),
    ("fcbcfw", lambda **kw: SparseLinearClassifier(loss="crammer-singer", penalty="l1", alpha=1e-4, l2=1e-3,
                                                   fit_intercept=False, **kw), 0.0),
]


@pytest.mark.parametrize("solver,make,rel", DENSE_ROW_SOLVERS, ids=[s[0] for s in DENSE_ROW_SOLVERS])
def test_dense_arrays_reach_row_solvers_without_a_copy(dna, solver, make, rel):
    """auto's sdm (ridge-only Crammer-Singer), fbpd (with l1l2) and fcbcfw (with l1) walk a
    C-contiguous array's rows by their nonzeros: no numpy allocation of X's size, and the CSR
    fit's model."""
    X, y, _, _ = dna
    D, Y = np.tile(X.toarray(), (10, 1)), np.tile(y, 10)  # 20 000 samples: 29 MB
    clf = make(max_iter=2)
    assert sparsemc._core.dense_layout(clf._settings(D.shape[0], False), "auto", *D.shape) == "C"
    peak = _fit_allocation_peak(clf, D, Y)
    assert clf.solver_ == solver
    assert peak < D.nbytes / 4, f"{peak} bytes of Python allocations for X of {D.nbytes}"
    for dtype in (np.float64, np.float32):
        # 50 epochs each, whatever the gaps say: the same epochs on both sides.
        sparse_fit = make(tol=1e-12, max_iter=50, dtype=dtype).fit(X.astype(dtype), y)
        dense_fit = make(tol=1e-12, max_iter=50, dtype=dtype).fit(X.toarray().astype(dtype), y)
        assert dense_fit.solver_ == solver and dense_fit.n_iter_ == 50
        if rel == 0.0:
            assert dense_fit.objective_ == sparse_fit.objective_ and dense_fit.n_iter_ == sparse_fit.n_iter_
            assert (dense_fit.coef_ != sparse_fit.coef_).nnz == 0
        else:
            assert dense_fit.objective_ == pytest.approx(sparse_fit.objective_, rel=rel if dtype == np.float64 else 1e-5)


# The coordinate solvers, which walk a Fortran-ordered array's columns in place (zeros included).
DENSE_COLUMN_SOLVERS = [
    ("bcd-ls", dict(loss="squared-hinge", penalty="l1l2", alpha=1e-2, fit_intercept=True)),
    ("bcd-cst", dict(loss="logistic", penalty="l1", alpha=1e-2, l2=1e-3)),
    ("scd-ls", dict(loss="ovr-squared-hinge", penalty="l1", alpha=1e-2, fit_intercept=True)),
]


@pytest.mark.parametrize("solver,params", DENSE_COLUMN_SOLVERS, ids=[s[0] for s in DENSE_COLUMN_SOLVERS])
def test_dense_arrays_reach_column_solvers_without_a_copy(dna, solver, params):
    """bcd-ls, bcd-cst and scd-ls read a Fortran-ordered array's columns in place: no numpy
    allocation of X's size, and the certified optimum of the CSC fit; a C-ordered array is
    copied once into Fortran order and gives the same fit."""
    X, y, _, _ = dna
    D, Y = np.asfortranarray(np.tile(X.toarray(), (10, 1))), np.tile(y, 10)  # 20 000 samples: 29 MB
    clf = SparseLinearClassifier(**params, solver=solver, max_iter=2)
    assert sparsemc._core.dense_layout(clf._settings(D.shape[0], False), solver, *D.shape) == "F"
    peak = _fit_allocation_peak(clf, D, Y)
    assert clf.solver_ == solver
    assert peak < D.nbytes / 4, f"{peak} bytes of Python allocations for X of {D.nbytes}"
    for dtype, tol in ((np.float64, 1e-6), (np.float32, 1e-3)):
        make = lambda: SparseLinearClassifier(**params, solver=solver, tol=tol, dtype=dtype, random_state=0)
        sparse_fit = make().fit(X.astype(dtype), y)
        dense_fit = make().fit(np.asfortranarray(X.toarray().astype(dtype)), y)
        assert dense_fit.solver_ == solver and dense_fit.status_ == sparse_fit.status_ == "converged"
        assert dense_fit.objective_ == pytest.approx(sparse_fit.objective_, rel=2 * tol)
        from_c = make().fit(X.toarray().astype(dtype), y)
        assert from_c.objective_ == dense_fit.objective_ and (from_c.coef_ != dense_fit.coef_).nnz == 0


def test_float32_and_int64_indices(dna):
    X, y, _, _ = dna
    base = SparseLinearClassifier(alpha=1e-3, tol=1e-6, fit_intercept=False).fit(X, y)
    wide = X.copy()
    wide.indptr, wide.indices = wide.indptr.astype(np.int64), wide.indices.astype(np.int64)
    handle, used = sparsemc._estimators._compressed(wide)
    assert used.indices.dtype == np.int64 and handle.data_pointer == wide.data.ctypes.data
    wide_fit = SparseLinearClassifier(alpha=1e-3, tol=1e-6, fit_intercept=False).fit(wide, y)
    assert wide_fit.objective_ == base.objective_  # the same arithmetic, other index type
    single = SparseLinearClassifier(alpha=1e-3, tol=1e-3, fit_intercept=False).fit(X.astype(np.float32), y)
    assert single.coef_.dtype == np.float32 and single.status_ == "converged"
    assert single.objective_ == pytest.approx(base.objective_, rel=2e-3)
    as_double = SparseLinearClassifier(alpha=1e-3, tol=1e-4, dtype=np.float64, fit_intercept=False).fit(X.astype(np.float32), y)
    assert as_double.coef_.dtype == np.float64
    # With an intercept, float32 certifies too (its part of the gap is summed in double).
    with_b = SparseLinearClassifier(alpha=1e-3, tol=1e-3).fit(X, y)
    single_b = SparseLinearClassifier(alpha=1e-3, tol=1e-3).fit(X.astype(np.float32), y)
    assert single_b.intercept_.dtype == np.float32 and single_b.status_ == "converged"
    assert single_b.objective_ == pytest.approx(with_b.objective_, rel=2e-3)


def test_pickle_save_and_load(tmp_path, dna):
    X, y, X_test, _ = dna
    clf = SparseLinearClassifier(loss="logistic", penalty="l1l2", alpha=1e-3, l2=1e-4, fit_intercept=True).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(X_test), clf.decision_function(X_test))
    for fmt in ("native", "liblinear"):
        clf.save(tmp_path / f"m.{fmt}", format=fmt)
        loaded = sparsemc.load(tmp_path / f"m.{fmt}")
        np.testing.assert_array_equal(loaded.classes_, clf.classes_)
        np.testing.assert_allclose(loaded.decision_function(X_test), clf.decision_function(X_test), rtol=1e-12,
                                   atol=1e-12)
    with pytest.raises(ValueError, match="format"):
        clf.save(tmp_path / "m.x", format="svmlight")


def test_models_cross_with_the_command_line(tmp_path, dna, train_tool):
    """A model trained in Python predicts with sparsemc-predict, and one from sparsemc-train in Python."""
    predict_tool = tool("sparsemc-predict")
    if predict_tool is None:
        pytest.skip("SKIPPED: sparsemc-predict is not built")
    X, y, X_test, _ = dna
    clf = SparseLinearClassifier(alpha=1e-3, fit_intercept=False).fit(X, y)  # sparsemc-train's default
    clf.save(tmp_path / "python.model")
    subprocess.run([str(predict_tool), str(tool_data("dna.scale.t")), str(tmp_path / "python.model"),
                    str(tmp_path / "out")], check=True, capture_output=True)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "out", dtype=int), clf.predict(X_test))
    subprocess.run([str(train_tool), "--quiet", "--lambda", "1e-3", str(tool_data("dna.scale")),
                    str(tmp_path / "cli.model")], check=True, capture_output=True)
    loaded = sparsemc.load(tmp_path / "cli.model")
    np.testing.assert_array_equal(loaded.predict(X_test), clf.predict(X_test))


def test_a_loss_of_the_registry_reaches_python(dna):
    """The estimators take their losses from the compiled registry: the Huberised hinge, added as a
    library loss, fits by every solver family whose concept it meets, to one certified optimum."""
    X, y, _, _ = dna
    assert "huber-hinge" in sparsemc._core.losses()
    fits = [SparseLinearClassifier(loss="huber-hinge", penalty="l1", alpha=1e-3, solver=solver, tol=1e-6,
                                   fit_intercept=False).fit(X, y) for solver in ("bcd-ls", "scd-ls", "fista")]
    for clf in fits:
        assert clf.status_ == "converged" and clf.relative_gap_ <= 1e-6
    for a, b in zip(fits, fits[1:]):
        assert abs(a.objective_ - b.objective_) <= a.duality_gap_ + b.duality_gap_


def test_multilabel():
    X, Y = make_multilabel_classification(n_samples=300, n_features=40, n_classes=6, random_state=0)
    X = sp.csr_matrix(X / X.max())
    fits = [SparseLinearClassifier(loss=loss, penalty="l1l2", alpha=1e-3, l2=1e-3, solver=solver, tol=1e-7,
                                   max_iter=100000).fit(X, Y)
            for loss, solver in (("ovr-squared-hinge", "bcd-ls"), ("ovr-squared-hinge", "fista"))]
    for clf in fits:
        assert clf.multilabel_ and clf.status_ == "converged"
        assert clf.predict(X).shape == Y.shape
    assert abs(fits[0].objective_ - fits[1].objective_) <= fits[0].duality_gap_ + fits[1].duality_gap_
    with pytest.raises(ValueError, match="loss='squared-hinge' does not support multilabel"):
        SparseLinearClassifier(loss="squared-hinge").fit(X, Y)


def test_warm_start_and_path(dna):
    X, y, _, _ = dna
    alphas, coefs, gaps, statuses = regularization_path(X, y, loss="squared-hinge", penalty="l1l2", n_alphas=5,
                                                        tol=1e-5)
    assert np.all(np.diff(alphas) < 0)
    assert coefs[0].nnz == 0  # alpha_max: W = 0 is optimal
    assert coefs[-1].nnz > 0
    assert all(s == "converged" for s in statuses)
    last = SparseLinearClassifier(alpha=alphas[-1], tol=1e-5).fit(X, y)
    assert abs(last.objective_ - last.duality_gap_) <= last.objective_  # sanity
    warm = SparseLinearClassifier(alpha=alphas[-1], tol=1e-5, warm_start=True).fit(X, y)
    warm.set_params(alpha=alphas[-1] * 0.99).fit(X, y)
    assert warm.status_ == "converged"


def test_interrupt_stops_the_fit(monkeypatch):
    """Ctrl-C (a SIGINT to the main thread) stops a long fit and raises KeyboardInterrupt.

    The interrupt is sent once the solver runs (after its first progress line), and SIGINT is
    given Python's handler for the test: a process started in the background by a shell ignores
    SIGINT, and then `interrupt_main` is ignored too and the fit (tol=1e-14) would run for hours."""
    rng = np.random.default_rng(0)
    X = sp.random(20000, 2000, density=0.01, format="csr", random_state=1)
    y = rng.integers(0, 20, size=20000)
    clf = SparseLinearClassifier(loss="logistic", penalty="l1", alpha=1e-6, solver="fista", tol=1e-14,
                                 max_iter=10 ** 7, verbose=1)
    running = threading.Event()

    class FirstLineSignals:
        def write(self, text):
            running.set()
            return len(text)

        def flush(self):
            pass

    def interrupt_once_running():
        if running.wait(timeout=120):
            _thread.interrupt_main()

    monkeypatch.setattr(sys, "stdout", FirstLineSignals())
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupter = threading.Thread(target=interrupt_once_running)
    interrupter.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            clf.fit(X, y)
    finally:
        interrupter.join()
        signal.signal(signal.SIGINT, previous)
    assert running.is_set()


def test_verbose_goes_to_sys_stdout(capsys, dna):
    X, y, _, _ = dna
    SparseLinearClassifier(alpha=1e-3, verbose=2).fit(X, y)
    assert "epoch 1" in capsys.readouterr().out


def test_errors_name_the_parameter(dna):
    X, y, _, _ = dna
    with pytest.raises(ValueError, match="loss: expects one of"):
        SparseLinearClassifier(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        SparseLinearClassifier(alpha=-1).fit(X, y)
    with pytest.raises(ValueError, match="solver=fcbcfw"):
        SparseLinearClassifier(loss="logistic", solver="fcbcfw").fit(X, y)
    with pytest.raises(ValueError, match="solver: expects one of auto"):
        SparseLinearClassifier(solver="newton").fit(X, y)
    with pytest.raises(ValueError, match="n_jobs"):
        SparseLinearClassifier(n_jobs=0).fit(X, y)


def test_n_jobs(dna):
    """A thread count splits the work, not the answer: FISTA's iterates are the same at 1 and 2
    threads, one-vs-rest BCD over class ranges reaches the same certified optimum."""
    X, y, _, _ = dna
    fista = [SparseLogisticRegression(penalty="l1l2", alpha=1e-3, l2=1e-4, solver="fista", n_jobs=n).fit(X, y)
             for n in (1, 2, -1, None)]
    for clf in fista[1:]:
        assert clf.n_iter_ == fista[0].n_iter_
        assert (clf.coef_ != fista[0].coef_).nnz == 0
        np.testing.assert_array_equal(clf.intercept_, fista[0].intercept_)
    ovr = [SparseLinearClassifier(loss="ovr-squared-hinge", penalty="l1", alpha=1e-3, solver="bcd-ls", n_jobs=n,
                                  tol=1e-6).fit(X, y) for n in (1, 2)]
    for clf in ovr:
        assert clf.status_ == "converged" and clf.relative_gap_ <= 1e-6
    assert abs(ovr[0].objective_ - ovr[1].objective_) <= ovr[0].duality_gap_ + ovr[1].duality_gap_
    # n_jobs is every OpenMP region's team during the fit (Eigen's products too, as
    # sparsemc-train --threads sets it), and the caller's team comes back after it.
    callers = sparsemc._core.openmp_threads()
    seen = []
    clf = SparseLogisticRegression(penalty="none", l2=1e-3, solver="gls", n_jobs=1, verbose=2)
    clf._progress = lambda: ((lambda line: seen.append(sparsemc._core.openmp_threads())), True)
    clf.fit(X, y)
    assert seen and set(seen) == {1}
    assert sparsemc._core.openmp_threads() == callers


def test_grid_search_and_pipeline(dna):
    X, y, X_test, y_test = dna
    search = GridSearchCV(make_pipeline(MaxAbsScaler(), SparseLinearClassifier()),
                          {"sparselinearclassifier__alpha": [1e-2, 1e-3]}, cv=3).fit(X, y)
    assert search.best_params_["sparselinearclassifier__alpha"] in (1e-2, 1e-3)
    assert 0.0 <= search.score(X_test, y_test) <= 1.0


def test_string_labels_and_class_weight(dna):
    X, y, X_test, _ = dna
    names = np.array(["exon-intron", "intron-exon", "neither"])[y - 1]
    clf = SparseLinearClassifier(class_weight="balanced").fit(X, names)
    assert set(clf.predict(X_test)) <= set(names)
    with pytest.raises(ValueError, match="integer labels"):
        clf.save("/tmp/never-written.model")


def test_crammer_singer_and_pdsparse(dna):
    X, y, _, _ = dna
    cs = CrammerSingerSVC(C=1.0, tol=1e-6).fit(X, y)
    assert cs.status_ == "converged" and cs.relative_gap_ <= 1e-6
    pd = PDSparseClassifier(C=1.0, l1=0.1, random_state=0).fit(X, y)
    assert pd.solver_ == "fcbcfw" and pd.coef_.nnz > 0


def test_evaluate_certifies_any_model(dna):
    """sparsemc.evaluate recomputes a fit's objective and bounds any model's suboptimality."""
    X, y, _, _ = dna
    params = dict(loss="logistic", penalty="l1", alpha=1e-3, l2=0.0)
    clf = SparseLinearClassifier(tol=1e-6, **params).fit(X, y)
    report = sparsemc.evaluate(X, y, clf.coef_, clf.intercept_, **params)
    assert report["objective"] == pytest.approx(clf.objective_, rel=1e-12)
    assert report["duality_gap"] <= 1e-6 * report["objective"] * 1.0001
    worse = sparsemc.evaluate(X, y, clf.coef_ * 0.5, clf.intercept_, **params)
    assert worse["objective"] > report["objective"]
    assert worse["objective"] - worse["duality_gap"] <= report["objective"]  # D(A) <= F*

"""GLSClassifier: generalized least squares, calibrated and stagewise chains (Agarwal et al. 2014).

The staged models (gls-cal, stagewise, gls on random features) are checked against the
command-line tools: the same fit (same objective to 1e-10, same scores), and model files that
cross between Python and sparsemc-predict in both directions.
"""
import json
import pickle
import subprocess
import tracemalloc

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import sparsemc
from sparsemc import GLSClassifier, SparseLinearClassifier

from conftest import DATA, tool


@parametrize_with_checks([GLSClassifier(n_components=40), GLSClassifier(method="calibrated", n_components=40),
                          GLSClassifier(method="stagewise", n_stages=2, n_components=20, max_iter=20)])
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


# (estimator, the same fit's sparsemc-train arguments) per method.
FITS = [
    (dict(n_components=200, l2=1e-3, random_state=3, tol=1e-8),
     ["--solver", "gls", "--loss", "logistic", "--mu", "1e-3", "--features", "rff:200", "--seed", "3",
      "--tol", "1e-8", "--intercept"]),
    (dict(method="calibrated", n_components=150, bandwidth=4.0, l2=1e-3, max_iter=10, random_state=5),
     ["--solver", "gls-cal", "--loss", "least-squares", "--mu", "1e-3", "--features", "rff:150:4.0", "--seed", "5",
      "--max-epochs", "10", "--intercept"]),
    (dict(method="stagewise", n_stages=3, n_components=60, l2=1e-3, max_iter=20, random_state=7),
     ["--solver", "stagewise", "--loss", "logistic", "--mu", "1e-3", "--stages", "3", "--block-size", "60",
      "--max-epochs", "20", "--seed", "7", "--intercept"]),
    (dict(method="stagewise", loss="least-squares", features="frequent", calibrate=True, n_stages=2, n_components=90,
          l2=1e-3),
     ["--solver", "stagewise", "--loss", "least-squares", "--mu", "1e-3", "--features", "frequent", "--calibrate",
      "--stages", "2", "--block-size", "90", "--intercept"]),
]


@pytest.mark.parametrize("params,args", FITS, ids=["gls-rff", "gls-cal", "stagewise", "stagewise-calibrated"])
def test_same_fit_as_the_command_line(tmp_path, dna, train_tool, params, args):
    """The same staged fit through sparsemc-train and Python: same objective, same scores."""
    X, y, X_test, _ = dna
    out = subprocess.run([str(train_tool), "--quiet", "--json", "--penalty", "none", *args, str(DATA / "dna.scale"),
                          str(tmp_path / "cli.model")], check=True, capture_output=True, text=True)
    expected = json.loads(out.stdout)
    clf = GLSClassifier(**params).fit(X, y)
    assert clf.solver_ == expected["solver"] and clf.status_ == expected["status"]
    assert clf.objective_ == pytest.approx(expected["objective"], rel=1e-10)
    assert clf.n_iter_ == expected["epochs"]
    assert not hasattr(clf, "coef_") and clf.n_stages_ >= 1
    loaded = sparsemc.load(tmp_path / "cli.model")
    assert isinstance(loaded, GLSClassifier) and loaded.solver_ == clf.solver_
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    S = clf.decision_function(X_test)
    np.testing.assert_allclose(loaded.decision_function(X_test), S, rtol=1e-9, atol=1e-9 * np.abs(S).max())


def test_staged_models_pickle_save_and_predict_with_the_tool(tmp_path, dna):
    predict_tool = tool("sparsemc-predict")
    X, y, X_test, _ = dna
    for params in (dict(n_components=100), dict(method="calibrated", n_components=100)):
        clf = GLSClassifier(**params).fit(X, y + 10)  # labels 11, 12, 13
        again = pickle.loads(pickle.dumps(clf))
        np.testing.assert_array_equal(again.decision_function(X_test), clf.decision_function(X_test))
        P = clf.predict_proba(X_test)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        assert np.all(P >= 0)
        np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X_test))
        clf.save(tmp_path / "python.model")
        loaded = sparsemc.load(tmp_path / "python.model")
        np.testing.assert_array_equal(loaded.classes_, clf.classes_)
        np.testing.assert_array_equal(loaded.predict(X_test), clf.predict(X_test))
        with pytest.raises(ValueError, match="format"):
            clf.save(tmp_path / "m.liblinear", format="liblinear")
        if predict_tool is None:
            continue  # the Python side is checked; the tool's side needs it built
        subprocess.run([str(predict_tool), str(DATA / "dna.scale.t"), str(tmp_path / "python.model"),
                        str(tmp_path / "out")], check=True, capture_output=True)
        np.testing.assert_array_equal(np.loadtxt(tmp_path / "out", dtype=int) - 10, clf.predict(X_test) - 10)
    if predict_tool is None:
        pytest.skip("SKIPPED: sparsemc-predict is not built; the tool's side of the file is not checked")


def test_float32_int64_and_dense_inputs(dna):
    X, y, X_test, _ = dna
    base = GLSClassifier(method="calibrated", n_components=80).fit(X, y)
    wide = X.copy()
    wide.indptr, wide.indices = wide.indptr.astype(np.int64), wide.indices.astype(np.int64)
    assert GLSClassifier(method="calibrated", n_components=80).fit(wide, y).objective_ == base.objective_
    dense = GLSClassifier(method="calibrated", n_components=80).fit(X.toarray(), y)  # the dense design
    S = base.decision_function(X_test)
    np.testing.assert_allclose(dense.decision_function(X_test.toarray()), S, rtol=1e-8, atol=1e-8 * np.abs(S).max())
    np.testing.assert_allclose(dense.decision_function(X_test), S, rtol=1e-8, atol=1e-8 * np.abs(S).max())
    single = GLSClassifier(method="calibrated", n_components=80).fit(X.astype(np.float32), y)
    assert single.decision_function(X_test).dtype == np.float32
    again = pickle.loads(pickle.dumps(single))  # the staged-model text keeps the precision
    np.testing.assert_array_equal(again.decision_function(X_test), single.decision_function(X_test))
    assert again.decision_function(X_test).dtype == np.float32
    assert single.objective_ == pytest.approx(base.objective_, rel=1e-3)


def test_gls_on_the_original_features_is_the_certified_linear_fit(dna):
    """method="gls" on features="original" is objective (1) with the ridge: a linear model whose
    duality gap certifies it, the same fit as SparseLinearClassifier(solver="gls")."""
    X, y, _, _ = dna
    clf = GLSClassifier(features="original", l2=1e-3, tol=1e-8).fit(X, y)
    assert clf.status_ == "converged" and clf.relative_gap_ <= 1e-8
    assert clf.coef_.shape == (3, 180) and not hasattr(clf, "n_stages_")
    same = SparseLinearClassifier(loss="logistic", penalty="none", alpha=0.0, l2=1e-3, solver="gls", tol=1e-8).fit(X, y)
    assert clf.objective_ == same.objective_
    # Refitted as a staged model, the linear attributes go, and back.
    clf.set_params(method="calibrated", loss="least-squares", features="rff", n_components=50).fit(X, y)
    assert not hasattr(clf, "coef_") and clf.n_stages_ >= 1 and hasattr(clf, "predict_proba")
    clf.set_params(method="gls", loss="least-squares", features="original", n_components=None).fit(X, y)
    assert hasattr(clf, "coef_") and not hasattr(clf, "n_stages_") and not hasattr(clf, "predict_proba")


def test_errors_name_the_parameter(dna):
    X, y, _, _ = dna
    for params, message in (
        (dict(method="newton"), "method: expects one of"),
        (dict(features="sample"), "features: method='gls' takes one of rff, original"),
        (dict(method="stagewise", features="original"), "features: method='stagewise'"),
        (dict(n_components=0), "n_components"),
        (dict(features="original", n_components=10), "n_components: not with features='original'"),
        (dict(bandwidth=-1.0), "bandwidth"),
        (dict(method="stagewise", features="sample", bandwidth=1.0), "bandwidth: only with features='rff'"),
        (dict(n_stages=2), "n_stages: only with method='stagewise'"),
        (dict(method="stagewise", calibrate=True), "calibrate=True needs loss=least-squares"),
        (dict(method="calibrated", loss="logistic"), "loss=logistic"),
        (dict(l2=-1.0), "l2"),
    ):
        with pytest.raises(ValueError, match=message):
            GLSClassifier(**params).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        GLSClassifier(n_components=20).fit(X, y).decision_function(X[:, :10])


def test_dense_arrays_reach_the_solver_without_a_copy(dna):
    """A C-contiguous array is the solver's dense design: no numpy allocation of X's size during
    the fit, and the same fit as on the CSR matrix."""
    X, y, _, _ = dna
    D, Y = np.tile(X.toarray(), (10, 1)), np.tile(y, 10)  # 20 000 samples: 29 MB
    weights = np.ones(len(Y))
    for params in (dict(features="original", l2=1e-3), dict(method="calibrated", n_components=50, max_iter=3),
                   dict(method="stagewise", features="frequent", n_stages=2, n_components=60, max_iter=5)):
        clf = GLSClassifier(**params)
        tracemalloc.start()
        clf.fit(D, Y, sample_weight=weights)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < D.nbytes / 4, f"{params}: {peak} bytes of Python allocations for X of {D.nbytes}"
    sparse_fit = GLSClassifier(features="original", l2=1e-3, tol=1e-8).fit(X, y)
    for dense in (X.toarray(), np.asfortranarray(X.toarray())):  # F order: copied once into C order
        dense_fit = GLSClassifier(features="original", l2=1e-3, tol=1e-8).fit(dense, y)
        assert dense_fit.status_ == "converged"
        assert dense_fit.objective_ == pytest.approx(sparse_fit.objective_, rel=1e-9)
    with pytest.raises(ValueError, match="2-D"):
        sparsemc._core.fit_dense(np.zeros(3), sparsemc._estimators._class_sets(None, np.zeros(3, int), 2),
                                 {"loss": "logistic", "penalty": "none"}, "gls", None, None, None, False)
    with pytest.raises(ValueError, match="sample_weight"):
        GLSClassifier(features="original").fit(X.toarray(), y, sample_weight=-np.ones(len(y)))

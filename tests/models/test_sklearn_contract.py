"""scikit-learn's shared estimator checks (clone, get_params, input handling, ...)."""
import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from regbayes import BayesianSVC

# ``predict`` is the posterior-mean discriminant and ``predict_proba`` the vote fractions
# of the Gibbs classifier (DESIGN.md). They may part near the decision boundary; the
# test below bounds how often, on check_classifiers_train's data. Vote fractions are
# step functions of x that saturate at 0 and 1 away from the boundary, so their ranks tie
# where the discriminant's do not: check_decision_proba_consistency cannot hold. Where
# the votes of two classes tie (25 of 50 draws each), argmax(predict_proba) takes the
# first while the mean discriminant may favour the other, so check_classifiers_train's
# argmax(predict_proba) == predict fails at such points; the test below runs its other
# assertions.
EXPECTED_FAILURES = {
    "check_classifiers_train": "argmax of the vote fractions may part from the posterior-mean "
    "prediction where votes tie; see test_classifiers_train_accuracy_and_vote_agreement",
    "check_decision_proba_consistency": "predict_proba is a vote fraction over posterior draws: "
    "it ties at 0 and 1 where decision_function (the posterior-mean discriminant) does not",
}


@parametrize_with_checks([BayesianSVC(n_draws=50, n_warmup=50)], expected_failed_checks=lambda est: EXPECTED_FAILURES)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_classifiers_train_accuracy_and_vote_agreement():
    # check_classifiers_train's data: 3 blobs, 300 points, standardised
    X, y = make_blobs(n_samples=300, random_state=0)
    X = StandardScaler().fit_transform(X)
    clf = BayesianSVC(n_draws=50, n_warmup=50).fit(X, y)
    pred = clf.predict(X)
    assert pred.shape == (300,)
    assert np.mean(pred == y) > 0.83
    proba = clf.predict_proba(X)
    assert proba.shape == (300, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # the two rules may part only near the boundary: a few per cent of the points at most
    assert np.mean(np.argmax(proba, axis=1) == pred) >= 0.95
    decision = clf.decision_function(X)
    np.testing.assert_array_equal(clf.classes_[np.argmax(decision, axis=1)], pred)
    for method in (clf.predict, clf.predict_proba, clf.decision_function):
        with pytest.raises(ValueError, match="features"):
            method(X[:, :1])
    # binary: one decision value per row, its sign is the prediction
    yb = (y == 1).astype(int)
    clf = BayesianSVC(n_draws=50, n_warmup=50).fit(X, yb)
    decision = clf.decision_function(X)
    assert decision.shape == (300,)
    np.testing.assert_array_equal(clf.classes_[(decision > 0).astype(int)], clf.predict(X))
    assert np.mean(clf.predict(X) == yb) > 0.83

"""scikit-learn's shared estimator checks (clone, get_params, input handling, ...)."""
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from regbayes import BayesianSVC


@parametrize_with_checks([BayesianSVC(n_draws=50, n_warmup=50)])
def test_sklearn_compatible(estimator, check):
    check(estimator)

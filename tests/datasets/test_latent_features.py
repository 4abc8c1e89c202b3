"""The latent-feature generators: shapes, the planted structure, seeds and bad input."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import cross_val_score

from regbayes.datasets.latent_features import (
    make_latent_classification,
    make_latent_multilabel,
    make_latent_multitask_regression,
)


def test_classification_labels_follow_the_latent_features():
    data = make_latent_classification(n_samples=800, random_state=0)
    assert data.X.shape == (800, 40) and data.Z.shape == (800, 8) and data.loadings.shape == (40, 8)
    assert set(np.unique(data.y)) == {0, 1, 2}
    assert set(np.unique(data.Z)) <= {0.0, 1.0}
    # the labels are a function of Z (up to 5 % noise): a linear model on the true Z is near perfect
    acc_z = cross_val_score(LogisticRegression(C=100.0, max_iter=2000), data.Z, data.y, cv=3).mean()
    assert acc_z > 0.85
    # later latent features explain less input variance (the loadings shrink with k)
    norms = np.linalg.norm(data.loadings, axis=0)
    assert norms[:4].mean() > 2 * norms[4:].mean()


def test_multilabel_density_and_projection():
    data = make_latent_multilabel(n_samples=500, density=0.3, random_state=1)
    assert data.y.shape == (500, 6) and data.y.dtype == np.int64
    np.testing.assert_allclose(data.y.mean(axis=0), 0.3, atol=0.01)
    assert np.all(data.Z.sum(axis=0) >= 1)  # every latent column is used


def test_multitask_regression_tasks_and_signal():
    data = make_latent_multitask_regression(n_tasks=5, n_per_task=200, random_state=2)
    assert data.X.shape == (1000, 20) and data.tasks.shape == (1000,)
    np.testing.assert_array_equal(np.bincount(data.tasks), 200)
    task = data.tasks == 0
    r2 = cross_val_score(Ridge(alpha=1.0), data.X[task] @ data.Z, data.y[task], cv=3).mean()
    assert r2 > 0.5


def test_same_seed_same_data():
    a = make_latent_multilabel(random_state=3)
    b = make_latent_multilabel(random_state=3)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_samples=1), "n_samples"),
    (dict(alpha=0.0), "alpha"),
    (dict(label_noise=1.5), "label_noise"),
    (dict(n_classes=1), "n_classes"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_latent_classification(**kwargs)


def test_bad_density():
    with pytest.raises(ValueError, match="density"):
        make_latent_multilabel(density=1.0)

"""Paper 002's experiment data and scores against scikit-learn's definitions."""
import numpy as np
import pytest
from sklearn.metrics import f1_score, hamming_loss, jaccard_score, r2_score

from regbayes.experiments import latent_data


def test_multilabel_scores_match_scikit_learn():
    rng = np.random.default_rng(0)
    Y = (rng.random((200, 6)) < 0.3).astype(int)
    P = np.where(rng.random((200, 6)) < 0.2, 1 - Y, Y)
    P[0] = 0
    Y[0] = 0  # a row with both label sets empty counts as right
    got = latent_data.multilabel_scores(Y, P)
    assert got["hamming_accuracy"] == pytest.approx(1 - hamming_loss(Y, P))
    assert got["example_accuracy"] == pytest.approx(jaccard_score(Y, P, average="samples", zero_division=1))
    assert got["micro_f1"] == pytest.approx(f1_score(Y, P, average="micro"))
    assert got["macro_f1"] == pytest.approx(f1_score(Y, P, average="macro"))


def test_explained_variance_is_test_r2_in_percent():
    rng = np.random.default_rng(1)
    y = rng.normal(size=50)
    pred = y + 0.3 * rng.normal(size=50)
    assert latent_data.explained_variance(y, pred) == pytest.approx(100 * r2_score(y, pred))


def test_synthetic_stand_ins_are_named_and_standardised():
    for split in (latent_data.multiview_data("synthetic", quick=True), latent_data.yeast_data("synthetic", quick=True),
                  latent_data.school_data("synthetic", quick=True)):
        assert split.stand_in and split.name.startswith("stand-in")
        np.testing.assert_allclose(split.X_train.mean(axis=0), 0.0, atol=1e-10)
        assert len(split.X_train) == len(split.y_train) and len(split.X_test) == len(split.y_test)
    school = latent_data.school_data("synthetic", quick=True)
    assert set(np.unique(school.tasks_test)) <= set(np.unique(school.tasks_train))


def test_training_fraction_keeps_the_first_rows_of_each_school():
    full = latent_data.school_data("synthetic", quick=True)
    half = latent_data.school_data("synthetic", quick=True, train_fraction=0.5)
    assert len(half.y_train) < 0.6 * len(full.y_train)
    np.testing.assert_array_equal(half.y_test, full.y_test)


def test_unknown_data_choice():
    with pytest.raises(ValueError, match="data must be"):
        latent_data.yeast_data("web")

"""What every estimator shares: parameter checks, labels, keys, vote fractions, settings.

Estimators are thin: they validate input, build a model's potential or algorithm state,
call the driver (:mod:`regbayes.inference`) and store results. This base owns the parts
that would otherwise be written once per estimator:

* parameters are checked by scikit-learn's ``_parameter_constraints`` (one declarative
  place per class; errors name the parameter and what it must be);
* labels are encoded once (``classes_``), and one class is refused with a clear error;
* ``random_state`` becomes one JAX key per ``fit`` (:func:`regbayes.rng.make_key`); every
  random stream of the fit is split from it;
* ``save(path)`` writes the estimator without pickle (:mod:`regbayes.persistence`);
* the estimators that run the host loop take ``checkpoint`` and ``checkpoint_every``
  (:data:`CHECKPOINT_CONSTRAINTS`); :meth:`RegBayesEstimator._host_checkpoint` is the
  fit's checkpoint, which every run of the fit writes to and resumes from;
* the settings a fit resolves (defaults that depend on the data) are stored as fitted
  attributes with a trailing underscore, so that callers read them instead of
  re-deriving them.
"""
from __future__ import annotations

import os
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import Interval

from .. import persistence
from ..inference.host_checkpoint import HostCheckpoint
from ..rng import make_key
from ..validation import check_labels

#: ``checkpoint`` (a file path or None) and ``checkpoint_every`` (seconds between writes):
#: the parameters of every estimator that runs the host loop.
CHECKPOINT_CONSTRAINTS = {
    "checkpoint": [str, os.PathLike, None],
    "checkpoint_every": [Interval(Real, 0, None, closed="left")],
}
#: Parameters that do not change a fit's results, left out of its checkpoint's fingerprint
#: (a fit resumed with a progress bar, or another callback, continues).
NOT_FINGERPRINTED = ("checkpoint", "checkpoint_every", "progress", "callback", "n_jobs")


class RegBayesEstimator(BaseEstimator):
    """Base of the library's estimators (see the module docstring)."""

    _parameter_constraints: dict = {}
    #: caches rebuilt on first use: not saved by :meth:`save`, set to these values on load
    _unsaved_attributes: dict = {}

    def save(self, path):
        """Write this estimator to ``path`` without pickle: plain arrays and JSON metadata
        (:mod:`regbayes.persistence` describes the format); read it with
        :func:`regbayes.load`. An unfitted estimator saves its parameters only."""
        return persistence.save(self, path)

    def _fit_key(self):
        """The one JAX key of this fit, from ``random_state``."""
        return make_key(self.random_state)

    def _host_checkpoint(self):
        """The checkpoint of this fit's host-loop runs (pass it to every
        :func:`~regbayes.inference.run` of the fit, in order), or None without ``checkpoint``.
        Its fingerprint holds the class and the parameters that change results.

        The parameters, as the estimators document them: ``checkpoint``, a file where the
        fit writes a checkpoint every ``checkpoint_every`` seconds (0: every iteration),
        atomically: its runs' states, seed positions, draws, traces and running sums. A fit
        interrupted and started again with the same arguments and data continues from the
        last checkpoint to the fitted attributes of an uninterrupted fit (timings apart); a
        finished fit's runs are read back. A checkpoint of another fit, or a damaged file,
        raises :class:`~regbayes.inference.checkpoint.CheckpointError`
        (:mod:`regbayes.inference.host_checkpoint`)."""
        if getattr(self, "checkpoint", None) is None:
            return None
        params = self.get_params(deep=False)
        settings = [type(self).__name__, *((k, params[k]) for k in sorted(params) if k not in NOT_FINGERPRINTED)]
        return HostCheckpoint(self.checkpoint, self.checkpoint_every, settings)

    def _encode_labels(self, y) -> np.ndarray:
        """Set ``classes_`` and return integer codes 0..K-1; refuse fewer than two classes."""
        check_labels(y)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        if len(self.classes_) < 2:
            raise ValueError(
                f"y has 1 class ({self.classes_[0]!r}); a classifier needs at least two"
            )
        return encoder.transform(y)

    def _store_settings(self, **settings):
        """Store resolved settings as fitted attributes ``name_``."""
        for name, value in settings.items():
            setattr(self, f"{name}_", value)


def vote_fractions(winners: np.ndarray, n_classes: int) -> np.ndarray:
    """Share of posterior draws voting for each class: ``winners`` (draws, rows) of class
    indices -> (rows, n_classes), the Gibbs classifier's ``predict_proba``."""
    winners = np.asarray(winners)
    votes = np.zeros((winners.shape[1], n_classes))
    rows = np.arange(winners.shape[1])
    for w in winners:
        np.add.at(votes, (rows, w), 1.0)
    return votes / winners.shape[0]

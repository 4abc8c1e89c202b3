"""``IBPFeatures``: binary latent features of the linear-Gaussian IBP model (paper 002,
section 4.2 without the classifier; Appendix D.2 with no labels)."""
from __future__ import annotations

from sklearn.base import TransformerMixin

from .latent_base import LatentFeatureModel


class IBPFeatures(TransformerMixin, LatentFeatureModel):
    """Unsupervised infinite latent features: the linear-Gaussian IBP factor model by
    truncated mean field.

    The model (section 4.2)::

        x_n | z_n, W ~ N(W z_n, sigma_n0^2 I),   w_dk ~ N(0, sigma_0^2),   Z ~ IBP(alpha),

    with the stick-breaking IBP truncated at ``truncation`` columns, fitted by Algorithm 3
    of Appendix D.2 without labels (``C = 0``, no dual step): coordinate ascent of the
    ELBO over ``q(nu)``, ``q(W)`` and ``q(Z)``
    (:mod:`regbayes.algorithms.ilsvm`, :mod:`regbayes.potentials.ibp_factor`). ``transform``
    returns ``E_q[z_n] = psi_n`` of new rows with ``q(W)`` and ``q(nu)`` fixed.

    ``make_pipeline(IBPFeatures(), LinearSVC())`` is the IBP+SVM baseline of the paper's
    section 5.1 (the features are learned without the labels, then a linear SVM on them);
    :class:`~regbayes.models.ilsvm.InfiniteLatentSVC` learns the features and the
    classifier together.

    Parameters
    ----------
    truncation : int, default=50
        K, the number of feature columns of the truncated IBP.
    alpha : float, default=1.0
        IBP concentration (about ``alpha H_N`` features are expected a priori).
    n_iter : int, default=20
        Outer iterations at most (T' of Algorithm 3).
    n_inner : int, default=10
        Mean-field iterations per outer iteration at most (T).
    tol : float, default=1e-4
        Stop when the relative change of the objective (``-ELBO``) is at most ``tol``
        (tau'); otherwise a :class:`~sklearn.exceptions.ConvergenceWarning` after ``n_iter``.
    inner_tol : float, default=1e-3
        Relative change of the ELBO that ends a mean-field phase (tau).
    noise_variance : float or None, default=None
        sigma_n0^2, shared by all rows; None: the probabilistic-PCA estimate described in
        :mod:`regbayes.models.latent_base` (``noise_variance_``).
    loading_variance : float, default=1.0
        sigma_0^2, the prior variance of the loadings (the start with ``estimate_variances``).
    estimate_variances : bool, default=False
        Update sigma_0^2 by eq. 35 and the noise variance by eq. 36 (its mean over rows)
        after every outer iteration.
    random_state : None, int or RandomState
        Seeds the noise of the start ``psi = 1/2 + epsilon`` (Algorithm 3, line 3).
    progress : bool, default=False
        Show a progress bar over outer iterations.
    checkpoint : str or path-like, default=None
        A file where the fit writes a checkpoint, atomically, every ``checkpoint_every``
        seconds (0: every iteration); a fit interrupted and started again with the same
        arguments and data continues from it to the fitted attributes of an uninterrupted
        fit (:meth:`regbayes.models.base.RegBayesEstimator._host_checkpoint`).
    checkpoint_every : float, default=60.0

    Attributes
    ----------
    components_ : (K, n_features) ``Phi^T``, the posterior means of the loadings
    component_variances_ : (K,) sigma_k^2
    sticks_ : (K, 2) the Beta parameters ``gamma_k`` of ``q(nu_k)``
    n_active_features_ : int, features with mean activation above 0.01 on the training rows
        (:data:`regbayes.algorithms.ilsvm.ACTIVE_THRESHOLD`)
    noise_variance_, loading_variance_ : float, the values used (or estimated) last
    elbo_ : (n_iter_,) the ELBO after every outer iteration
    objective_ : (n_iter_ + 1,) ``-ELBO`` at the start and after every outer iteration
    n_iter_ : int
    converged_ : bool
    trace_ : dict of per-iteration records of the driver
    """

    def fit(self, X, y=None):
        """Fit the IBP factor model to X (n_samples, n_features); ``y`` is ignored."""
        self._validate_params()
        X = self._check_X(X, reset=True)
        self._fit_latent(X, name="IBP")
        return self

    def transform(self, X):
        """``psi``: (n_samples, truncation) posterior means of the binary latent features of
        the rows of X, inferred with ``q(W)`` and ``q(nu)`` fixed
        (:func:`regbayes.algorithms.ilsvm.infer_features`)."""
        return self._latent_features(X)

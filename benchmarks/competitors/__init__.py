"""The other libraries the benchmarks measure regbayes against, one module each:

* :mod:`competitors.blackjax_sgld` -- ``blackjax.sgld`` on regbayes' minibatch potential;
* :mod:`competitors.numpyro_nuts` -- NumPyro's NUTS on regbayes' full-data potential;
* :mod:`competitors.sklearn_linear_svc` -- scikit-learn's LinearSVC (the posterior mode)
  and the scikit-learn classifiers of the DP-mixture benchmark;
* :mod:`competitors.lda_package` -- the ``lda`` package's collapsed Gibbs sweep (Cython);
* :mod:`competitors.jax_collapsed_lda` -- collapsed LDA as a plain JAX token loop.
"""

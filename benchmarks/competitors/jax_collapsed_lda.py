"""Collapsed LDA as a jitted JAX ``fori_loop`` over tokens: the best plain-JAX form of the
token loop, against which the numba kernels are measured (DESIGN.md's numba-vs-JAX choice)."""
from __future__ import annotations

import time

import numpy as np
from regbayes.algorithms import lda_kernels


def jax_collapsed_sweep(X, K, alpha, beta, seed):
    """Collapsed LDA as a jitted JAX ``fori_loop`` over tokens (float32 counts, data passed
    as arguments, one uniform per token drawn before the loop). Compiled here, outside
    the timed calls; returns ``(one_sweep, tokens per call, compile seconds)``."""
    import jax
    import jax.numpy as jnp

    doc_ptr, words = lda_kernels.tokens_from_counts(X.tocsr())
    D, V = X.shape
    docs = np.repeat(np.arange(D, dtype=np.int32), np.diff(doc_ptr))
    N = words.shape[0]

    def sweep(key, words, docs, z, ndk, nwk, nk):
        u = jax.random.uniform(key, (N,))

        def body(i, carry):
            z, ndk, nwk, nk = carry
            w, d, old = words[i], docs[i], z[i]
            ndk = ndk.at[d, old].add(-1.0)
            nwk = nwk.at[w, old].add(-1.0)
            nk = nk.at[old].add(-1.0)
            p = (ndk[d] + alpha) * (nwk[w] + beta) / (nk + V * beta)
            c = jnp.cumsum(p)
            new = jnp.minimum(jnp.sum(c < u[i] * c[-1]), K - 1).astype(z.dtype)
            return (z.at[i].set(new), ndk.at[d, new].add(1.0), nwk.at[w, new].add(1.0), nk.at[new].add(1.0))

        return jax.lax.fori_loop(0, N, body, (z, ndk, nwk, nk))

    rng = np.random.default_rng(seed)
    z0 = rng.integers(0, K, size=N).astype(np.int32)
    ndk = np.zeros((D, K), np.float32)
    np.add.at(ndk, (docs, z0), 1.0)
    nwk = np.zeros((V, K), np.float32)
    np.add.at(nwk, (words, z0), 1.0)
    nk = np.bincount(z0, minlength=K).astype(np.float32)
    state = [tuple(jnp.asarray(a) for a in (z0, ndk, nwk, nk))]
    data = (jnp.asarray(words), jnp.asarray(docs))
    key = [jax.random.key(seed)]
    start = time.perf_counter()
    compiled = jax.jit(sweep, donate_argnums=(3, 4, 5, 6)).lower(key[0], *data, *state[0]).compile()
    compile_s = time.perf_counter() - start

    def one_sweep():
        key[0], sub = jax.random.split(key[0])
        state[0] = jax.block_until_ready(compiled(sub, *data, *state[0]))

    return one_sweep, N, compile_s

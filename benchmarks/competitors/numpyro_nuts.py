"""NumPyro's NUTS (functional ``numpyro.infer.hmc.hmc(potential_fn_gen=...)``) on regbayes'
full-data potential ``U`` (``jax.grad`` of a piecewise-linear hinge is a valid subgradient
almost everywhere), abandoned as soon as its projected time exceeds a limit."""
from __future__ import annotations

import math
import time

import numpy as np
from regbayes.potentials.linear_svm import value_and_subgrad as full_data_value_and_subgrad


def run_numpyro_nuts(data, *, n_warmup, n_samples, seed, init_step, limit_s, chunk=25):
    """NumPyro NUTS (functional API) on regbayes' full-data potential.

    Gives up (returns ``skipped`` with the projection) as soon as the chunks run so far
    project the whole run past ``limit_s`` seconds.
    """
    import jax
    import jax.numpy as jnp
    from numpyro.infer.hmc import hmc

    value_and_subgrad = full_data_value_and_subgrad()

    def potential_fn_gen(data):
        return lambda eta: value_and_subgrad(eta, data)[0]

    init_kernel, sample_kernel = hmc(potential_fn_gen=potential_fn_gen, algo="NUTS")
    start = time.perf_counter()
    state = init_kernel(
        jnp.zeros(data.X.shape[1], data.X.dtype),
        n_warmup,
        step_size=init_step,
        model_args=(data,),
        rng_key=jax.random.key(seed),
    )
    jax.block_until_ready(state.z)
    init_s = time.perf_counter() - start  # mostly tracing/compiling the init functions

    def program(state, data):
        def body(state, _):
            state = sample_kernel(state, model_args=(data,))
            return state, (state.z, state.num_steps, state.diverging)

        return jax.lax.scan(body, state, None, length=chunk)

    start = time.perf_counter()
    compiled = jax.jit(program).lower(state, data).compile()
    compile_s = init_s + time.perf_counter() - start

    total = n_warmup + n_samples
    n_chunks = math.ceil(total / chunk)
    zs, steps, div, wall, elapsed = [], [], [], [], 0.0
    for i in range(n_chunks):
        start = time.perf_counter()
        state, (z, num_steps, diverging) = compiled(state, data)
        jax.block_until_ready(z)
        seconds = time.perf_counter() - start
        projected = (elapsed + seconds) * n_chunks / (i + 1)
        if projected > limit_s:  # checked after every chunk: warm-up trees can grow
            return {"skipped": True, "projected_s": projected, "after_s": elapsed + seconds, "compile_s": compile_s}
        zs.append(np.asarray(z))
        steps.append(np.asarray(num_steps))
        div.append(np.asarray(diverging))
        wall.append(elapsed + seconds * np.arange(1, chunk + 1) / chunk)
        elapsed += seconds
    z = np.concatenate(zs)[:total].astype(np.float64)
    num_steps = np.concatenate(steps)[:total]
    wall = np.concatenate(wall)[:total]
    sampling_s = elapsed * total / (n_chunks * chunk)
    diverging = np.concatenate(div)[:total]
    return {
        "draws": z[n_warmup:],
        "wall": wall[n_warmup:],
        "compile_s": compile_s,
        "sampling_s": sampling_s,
        "n_iter": total,
        "extra": {
            "mean_leapfrog_steps": float(num_steps[n_warmup:].mean()),
            "gradient_evals_per_s": float(num_steps.sum() / sampling_s),
            "divergences_after_warmup": int(diverging[n_warmup:].sum()),
            "step_size": float(state.adapt_state.step_size),
        },
    }

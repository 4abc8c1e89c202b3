"""``bayes_svm.py --profile``: where a regbayes SSGLD step spends its time relative to
``blackjax.sgld`` on the same potential and batch size."""
from __future__ import annotations

import time

import numpy as np
from competitors.blackjax_sgld import sgld_on_potential
from harness import interleaved, markdown_header, markdown_row
from regbayes.schedules import as_schedule
from svm_data import make_data, svm_data


def profile_step_cost(n, repeats, batch_size=100, n_saved=1000, thin=10):
    """Where does a regbayes SSGLD step spend its time relative to blackjax.sgld?

    The same potential and batch size throughout; each variant is one jitted program of
    ``n_saved * thin`` steps, called ``repeats`` times interleaved; time per
    step: wall time (best, median) and process CPU time (median; it counts every thread,
    so XLA's second thread inflates it on 2 cores).
    Variants: BlackJAX with threefry and with rbg keys; regbayes' SSGLD kernel (AdaGrad,
    dense whitening T) in a plain scan with its per-step info dropped, carried or
    stacked; the same vmapped over one chain; the same without the minibatch potential
    value; and the public driver ``regbayes.inference.sample``.
    """
    import functools

    import jax
    import jax.numpy as jnp

    from regbayes.inference import sample
    from regbayes.potentials import build_potential
    from regbayes.samplers import ssgld

    X, y, _, _, _ = make_data(n, 10, 0)
    data = svm_data(X, y, 1.0, 1.0, 1.0)
    dim = data.X.shape[1]
    potential = build_potential(batch_size)
    steps = n_saved * thin
    schedule = as_schedule(0.5)
    progs = {}

    sgld = sgld_on_potential(potential)

    def bj(pos, key, data):
        def inner(c, _):
            p, k = c
            k, sub = jax.random.split(k)
            kb, kn = jax.random.split(sub)
            return (sgld.step(kn, p, (kb, data), jnp.float32(1e-5)), k), None

        def outer(c, _):
            c, _ = jax.lax.scan(inner, c, None, length=thin)
            return c, c[0]

        return jax.lax.scan(outer, (pos, key), None, length=n_saved)

    for impl in ("threefry2x32", "rbg"):
        key0 = jax.random.key(1, impl=impl)
        c = jax.jit(bj).lower(jnp.zeros(dim), key0, data).compile()
        progs[f"blackjax.sgld, {impl} keys"] = functools.partial(lambda c, k: c(jnp.zeros(dim), k, data), c, key0)

    kernel = ssgld(potential, "adagrad")
    state = kernel.init(jax.random.key(0), jnp.zeros(dim), data)
    if getattr(kernel, "adapt", None) is not None:
        state = kernel.adapt(state, 0.01 * jnp.eye(dim))

    def plain(mode, kern):
        def prog(st, key, data):
            def inner(c, t):
                s, k, info_c, acc = c
                k, sub = jax.random.split(k)
                s, info = kern.step(sub, s, data, schedule(t))
                if mode == "carry":
                    return (s, k, info, acc + info.potential), None
                return (s, k, info_c, acc), (info if mode == "stack" else None)

            def outer(c, t0):
                s, k = c
                shape = jax.eval_shape(lambda s_, k_: kern.step(k_, s_, data, schedule(0.0))[1], s, k)
                info0 = jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape, x.dtype), shape)
                (s, k, info, acc), infos = jax.lax.scan(inner, (s, k, info0, jnp.zeros(())), t0 + jnp.arange(thin))
                if mode == "stack":
                    info = jax.tree_util.tree_map(lambda x: x[-1], infos)
                return (s, k), (s.position, info if mode != "none" else None)

            return jax.lax.scan(outer, (st, key), jnp.arange(n_saved) * thin * 1.0)

        return prog

    for mode in ("none", "carry", "stack"):
        c = jax.jit(plain(mode, kernel)).lower(state, jax.random.key(1), data).compile()
        progs[f"regbayes SSGLD kernel, info {mode}"] = functools.partial(lambda c: c(state, jax.random.key(1), data), c)
    state1 = jax.tree_util.tree_map(lambda x: x[None], state)
    keys1 = jax.random.split(jax.random.key(1), 1)
    c_vmap = jax.jit(jax.vmap(plain("carry", kernel), in_axes=(0, 0, None))).lower(state1, keys1, data).compile()
    progs["  ... info carry, vmap over 1 chain"] = lambda: c_vmap(state1, keys1, data)

    def step_no_value(key, st, data, h):
        st, info = kernel.step(key, st, data, h)
        return st, info._replace(potential=jnp.full((), jnp.nan, info.potential.dtype))

    c_nov = jax.jit(plain("carry", kernel._replace(step=step_no_value))).lower(state, jax.random.key(1), data).compile()
    progs["  ... info carry, no minibatch U value"] = lambda: c_nov(state, jax.random.key(1), data)
    init = jnp.zeros((1, dim))
    run_driver = lambda: sample(kernel, data, init, jax.random.key(0), n_warmup=0, n_draws=n_saved, thin=thin, step_size=0.5).positions  # noqa: E731
    run_driver()  # warm the compilation cache
    progs["regbayes.inference.sample (the driver)"] = run_driver
    rbg = jax.random.key(0, impl="rbg")
    run_driver_rbg = lambda: sample(kernel, data, init, rbg, n_warmup=0, n_draws=n_saved, thin=thin, step_size=0.5).positions  # noqa: E731
    run_driver_rbg()
    progs["  ... with rbg keys"] = run_driver_rbg

    def wall_and_cpu(f):
        def call(_round):
            start, cpu0 = time.perf_counter(), time.process_time()
            jax.block_until_ready(f())
            return time.perf_counter() - start, time.process_time() - cpu0

        return call

    timings = interleaved({k: wall_and_cpu(f) for k, f in progs.items()}, repeats, warmup=0)
    wall = {k: [w for w, _ in v] for k, v in timings.items()}
    cpu = {k: [c for _, c in v] for k, v in timings.items()}
    lines = [
        f"Per-step time, N = {n:,}, batch {batch_size}, {dim} coordinates, {steps:,} steps per call, "
        f"{repeats} interleaved repeats (wall: best and median; process CPU: median, all threads)\n",
        markdown_header(["variant", "wall best µs/step", "wall median µs/step", "CPU median µs/step"]),
    ]
    for k in progs:
        lines.append(
            markdown_row([k, f"{1e6 * min(wall[k]) / steps:.1f}", f"{1e6 * np.median(wall[k]) / steps:.1f}", f"{1e6 * np.median(cpu[k]) / steps:.1f}"])
        )
    return "\n".join(lines)

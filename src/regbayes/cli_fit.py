"""``regbayes fit``: fit an estimator to a data file (or data read block by block) and save it."""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

from .cli import BAYES_SVC_OPTIONS, MODELS, _error, _load_svmlight, _write_model, build_parser


def _cmd_fit(args) -> int:
    import numpy as np

    from . import BayesianSVC
    from .inference import diagnostics

    if args.n_warmup is not None and args.n_warmup < 0:
        return _error("fit", f"--n-warmup must be >= 0, got {args.n_warmup}")
    streamed = _read_by_blocks(args.data)
    sharded_medlda = args.model == "medlda" and args.scheduler is not None
    if streamed and not sharded_medlda:
        if args.model != "bayes-svc" or args.checkpoint is not None:
            return _error("fit", f"{args.data} is read block by block, which --model bayes-svc does without a "
                          "checkpoint, and --model medlda on Dask workers (--scheduler); for another model pass "
                          "one svmlight file")
        from .datasets import open_row_blocks

        try:
            X, y = open_row_blocks(args.data, args.label), None
        except (ValueError, OSError, ImportError) as exc:
            hint = " (--label NAME)" if "name of the label" in str(exc) else ""
            return _error("fit", f"{exc}{hint}")
    elif streamed:  # MedLDA's workers read the blocks (regbayes.models.medlda_shards)
        X, y = args.data, args.label
    elif not Path(args.data).is_file():
        return _error("fit", f"no such file: {args.data}")
    else:
        try:
            X, y = _load_svmlight(args.data)
        except (ValueError, OSError) as exc:
            return _error("fit", str(exc))
    params = _parse_params(args.param)
    if isinstance(params, str):
        return _error("fit", params)
    if args.scheduler is not None:
        if args.model not in ("bayes-svc", "medlda"):
            return _error("fit", f"--scheduler spreads the chains of --model bayes-svc, or the documents of --model "
                          f"medlda, over Dask workers; {args.model} runs in this process")
        if args.model == "medlda":
            params["chain_method"] = "dask"
        from .inference.distributed import ClusterError, resolve_client

        try:  # the client made here is Dask's current one, which chain_method="dask" uses
            resolve_client(None if args.scheduler == "local" else args.scheduler)
        except (ClusterError, ImportError) as exc:
            return _error("fit", str(exc))
    if args.model != "bayes-svc":
        return _fit_model(args, X, y, params)
    model = BayesianSVC(
        C=args.C, prior_scale=args.prior_scale, sampler=args.sampler, n_draws=args.n_draws,
        n_warmup=args.n_warmup, n_chains=args.n_chains, thin=args.thin, batch_size=args.batch_size,
        step_size=args.step_size, schedule=args.schedule, fit_intercept=not args.no_intercept,
        random_state=args.seed, progress=not args.no_progress, checkpoint=args.checkpoint,
        checkpoint_every=args.checkpoint_every, chain_method="vectorized" if args.scheduler is None else "dask",
    )
    start = time.perf_counter()
    try:
        model.set_params(**params).fit(X, y)
    except (ValueError, FloatingPointError) as exc:
        print(f"regbayes fit: error: {exc}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - start
    diag = diagnostics(model.idata_, "eta")
    trace = model.trace_
    iteration = np.asarray(trace["iteration"]).astype(int)
    thin = int(iteration[1] - iteration[0]) if len(iteration) > 1 else (args.thin or 1)
    n_warmup = int(iteration[0]) + 1 - thin
    out = _write_model(model, args.model_out, args.format)
    coef = np.asarray(model.coef_)
    shown = np.array2string(coef.ravel()[:10], precision=3, separator=", ")
    n_rows = X.n_rows if streamed else X.shape[0]
    print(f"BayesianSVC(sampler={args.sampler!r}) fitted on {args.data}: {n_rows} rows x {model.n_features_in_} "
          f"features, classes {list(model.classes_)}" + (f", read in {len(X.block_sizes)} blocks" if streamed else ""))
    print(f"  draws: {args.n_chains} chain(s) x {args.n_draws} (warm-up {n_warmup}, thin {thin}); "
          f"fit {seconds:.2f} s (compile {trace['compile_seconds']:.2f} s, sampling {trace['sampling_seconds']:.2f} s)")
    print(f"  training accuracy: {_blockwise_score(model, X) if streamed else model.score(X, y):.4f}")
    print(f"  min ESS: {diag['min_ess']:.1f}   max R-hat: {diag['max_rhat']:.3f}" +
          ("" if args.n_chains > 1 else " (R-hat needs 2+ chains)"))
    print(f"  posterior-mean weights{' (first 10)' if coef.size > 10 else ''}: {shown}")
    print(f"  posterior-mean intercept: {np.array2string(np.asarray(model.intercept_), precision=3)}")
    print(f"model saved to {out} ({'pickle' if args.format == 'pickle' else 'regbayes model file'})")
    return 0


def _read_by_blocks(data: str) -> bool:
    """Whether ``regbayes fit`` reads DATA block by block: anything but one svmlight file."""
    path = Path(data)
    if path.is_dir() or any(ch in data for ch in "*?["):
        return True
    return path.suffix in (".parquet", ".parq", ".pq", ".zarr")


def _blockwise_score(model, blocks) -> float:
    """``model``'s accuracy on :class:`~regbayes.datasets.RowBlocks`, one block in memory at a time."""
    import numpy as np

    correct = 0
    for i in np.flatnonzero(blocks.block_sizes):
        X, y = blocks.read(int(i))
        with warnings.catch_warnings():  # the blocks' columns are the fit's, in its order
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            correct += int(np.sum(model.predict(X) == np.asarray(y)))
    return correct / blocks.n_rows


def _parse_params(items):
    """``--param NAME=VALUE`` items as a dict (VALUE as JSON, else the string), or an error message."""
    params = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep:
            return f"--param takes NAME=VALUE, got {item!r}"
        try:
            params[name] = json.loads(text)
        except ValueError:
            params[name] = text
    return params


def _fit_model(args, X, y, params) -> int:
    """``regbayes fit --model NAME --param ...``: an estimator of :data:`MODELS` other than BayesianSVC."""
    import regbayes

    defaults = build_parser().parse_args(["fit", "DATA", "--model-out", "M"])
    given = [f"--{o.replace('_', '-')}" for o in BAYES_SVC_OPTIONS if getattr(args, o) != getattr(defaults, o)]
    if given:
        return _error("fit", f"{', '.join(given)} set(s) parameters of --model bayes-svc; set those of {args.model} "
                      "with --param NAME=VALUE")
    cls = getattr(regbayes, MODELS[args.model])
    known = cls().get_params(deep=False)
    unknown = sorted(set(params) - set(known))
    if unknown:
        return _error("fit", f"{cls.__name__} has no parameter {', '.join(unknown)}; it has {', '.join(sorted(known))}")
    streamed = isinstance(X, str)  # MedLDA's documents, read by the Dask workers
    if not streamed and not cls().__sklearn_tags__().input_tags.sparse:
        X = X.toarray()
    params.update(random_state=args.seed, checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every)
    if "progress" in known:
        params["progress"] = not args.no_progress
    start = time.perf_counter()
    try:
        model = cls(**params).fit(X, y)
        scored = hasattr(model, "score") and hasattr(model, "predict") and not streamed
        score = model.score(X, y) if scored else None
    except (ValueError, FloatingPointError, ImportError, OSError) as exc:
        print(f"regbayes fit: error: {exc}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - start
    out = _write_model(model, args.model_out, args.format)
    if streamed:
        shards = model.trace_["shard_documents"]
        print(f"{cls.__name__} fitted on {args.data}: {sum(shards)} documents in {len(shards)} shards on Dask workers "
              f"in {seconds:.2f} s")
    else:
        print(f"{cls.__name__} fitted on {args.data}: {X.shape[0]} rows x {X.shape[1]} features in {seconds:.2f} s")
    if score is not None:
        print(f"  training {'accuracy' if hasattr(model, 'classes_') else 'R^2'}: {score:.4f}")
    print(f"model saved to {out} ({'pickle' if args.format == 'pickle' else 'regbayes model file'})")
    return 0

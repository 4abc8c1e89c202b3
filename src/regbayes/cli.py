"""Command-line interface: ``regbayes {demo, reproduce, fit, predict, datasets, bench}``.

Examples::

    regbayes demo --out results/demo
    regbayes reproduce --list
    regbayes reproduce fig5 --n 100000 --seed 1 --out results/fig5
    regbayes reproduce fig4 --quick
    regbayes reproduce fig5 --data higgs --data realsim --paper-settings
    regbayes reproduce isvm-table2 --data ijcnn1 --data protein_train.svm,protein_test.svm
    regbayes reproduce medlda-fig8 --data 20news --paper-settings
    regbayes fit train.svm --sampler ssgld --model-out model.npz
    regbayes fit train.svm --model infinite-svc --param n_iter=500 --checkpoint fit.ckpt --model-out isvm.npz
    regbayes predict model.npz test.svm --proba
    regbayes datasets
    regbayes bench

``fit`` saves the model in regbayes's own format (arrays and JSON metadata, read without
pickle: :mod:`regbayes.persistence`); ``--format pickle`` writes and reads a pickle instead,
for scikit-learn tooling that expects one (load pickles from trusted sources only).

Every command returns an exit status from :func:`main` (0 on success, 1 on a failed
run, 2 on a usage error) instead of calling ``sys.exit`` itself, except for argparse's
own ``--help`` and syntax errors.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import pickle
import sys
from pathlib import Path

__all__ = ["main", "build_parser"]

SAMPLERS = ("gibbs", "shmc", "ssgld", "ssgnht", "srwm")
#: ``regbayes fit --model``: the estimators fitted on an svmlight file (topic models on a count matrix)
MODELS = {"bayes-svc": "BayesianSVC", "infinite-svc": "InfiniteSVC", "dpmnl": "DPMNLClassifier", "m2dpm": "M2DPM",
          "dpmeans-svc": "DPMeansSVC", "medlda": "MedLDA", "pa-medlda": "PassiveAggressiveMedLDA",
          "medlda-regressor": "MedLDARegressor", "ibp-features": "IBPFeatures", "ilsvm": "InfiniteLatentSVC"}
#: the options of ``fit`` that set BayesianSVC's parameters (other models take --param)
BAYES_SVC_OPTIONS = ("sampler", "n_draws", "n_warmup", "n_chains", "thin", "batch_size", "C", "prior_scale", "schedule",
                     "step_size", "no_intercept")
FORMATS = ("npz", "pickle")


def _positive_int(text: str) -> int:
    try:
        value = int(float(text)) if "e" in text.lower() else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="regbayes",
        description="Bayesian max-margin learning with stochastic subgradient MCMC (JAX).",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("demo", help="Gibbs vs SSGLD vs SSGNHT on breast cancer (about a minute)",
                       description="Fit the Bayesian linear SVM on standardised breast cancer with the "
                       "gibbs, ssgld and ssgnht samplers (2 chains each), print a comparison table and "
                       "write a posterior plot.")
    p.add_argument("--out", default=os.path.join("results", "demo"), help="output folder (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="fewer draws (a smoke test)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")

    p = sub.add_parser("reproduce", help="reproduce a paper's table or figure (see --list)",
                       description="Run one registered experiment; writes NAME.png, NAME.json and "
                       "results.md into --out.")
    p.add_argument("name", nargs="?", metavar="NAME", help="experiment name (see --list)")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument("--out", default=None, help="output folder (default: results/NAME)")
    p.add_argument("--n", type=_positive_int, default=None, help="data size (rows) where the experiment has one")
    p.add_argument("--quick", action="store_true", help="small data and short runs")
    p.add_argument("--n-datasets", type=_positive_int, default=None, help="random data sets per setting (sva-table1)")
    p.add_argument("--k", type=_positive_int, default=None, help="number of topics K (medlda-fig8, medlda-topics)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: the experiment's own)")
    p.add_argument("--data", action="append", metavar="NAME|PATH", default=None,
                   help="the paper's data instead of the offline stand-in: a registered data set (see 'regbayes "
                   "datasets'; downloaded into the cache when missing), an svmlight/LIBSVM file, or TRAIN,TEST "
                   "files; for medlda-*: 20news, a folder of the 20news-bydate files or scikit-learn's "
                   "20news-bydate_py3.pkz, or wordnet-nouns / fortunes (Debian packages wordnet-base, fortunes). "
                   "Repeat for several data sets (fig5, fig6, fig7, isvm-table2)")
    p.add_argument("--paper-settings", action="store_true",
                   help="the hyper-parameters the paper prints (fig5-7, isvm-table2, medlda-*; each experiment's "
                   "docstring lists them; recorded in its JSON)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")

    p = sub.add_parser("fit", help="fit a BayesianSVC (or another model) to an svmlight file and save it",
                       description="Fit BayesianSVC (or the --model) to DATA (svmlight/LIBSVM, optionally compressed) "
                       "and save the fitted estimator to --model-out: a regbayes model file (arrays and JSON "
                       "metadata in an .npz, loaded without pickle by regbayes.load), or a pickle with --format pickle.")
    p.add_argument("data", metavar="DATA",
                   help="svmlight/LIBSVM training file (word counts for the topic models), read into memory; or data "
                   "larger than memory, read block by block (bayes-svc with ssgld/ssgnht; needs regbayes[outofcore] "
                   "for Parquet and Zarr): a Parquet file, directory or glob (--label names the label column), a "
                   "Zarr group with arrays X and y, or a directory or glob of svmlight files")
    p.add_argument("--label", metavar="NAME", default=None,
                   help="the label column of Parquet data, or the label array of a Zarr group (default there: y)")
    p.add_argument("--model", choices=tuple(MODELS), default="bayes-svc",
                   help="the estimator (default: %(default)s); the options --sampler to --no-intercept set "
                   "bayes-svc's parameters, --param those of any model")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="an estimator parameter (VALUE read as JSON, else as a string), e.g. n_iter=500; repeatable")
    p.add_argument("--sampler", choices=SAMPLERS, default="ssgld", help="default: %(default)s")
    p.add_argument("--model-out", required=True, metavar="FILE", help="where to save the fitted model")
    p.add_argument("--format", choices=FORMATS, default="npz",
                   help="npz: regbayes's model file, read without pickle (default); pickle: for scikit-learn tooling")
    p.add_argument("--n-draws", type=_positive_int, default=1000, help="draws per chain (default: %(default)s)")
    p.add_argument("--n-warmup", type=int, default=None,
                   help="warm-up steps (default: the estimator's per-sampler default)")
    p.add_argument("--n-chains", type=_positive_int, default=1, help="chains (default: %(default)s)")
    p.add_argument("--thin", type=_positive_int, default=None,
                   help="thinning interval (default: the estimator's per-sampler default)")
    p.add_argument("--batch-size", type=_positive_int, default=100, help="minibatch size (default: %(default)s)")
    p.add_argument("--C", dest="C", type=_positive_float, default=1.0, help="hinge scale c (default: %(default)s)")
    p.add_argument("--prior-scale", type=_positive_float, default=1.0, help="prior std nu (default: %(default)s)")
    p.add_argument("--schedule", choices=("adagrad", "polynomial", "constant"), default="adagrad")
    p.add_argument("--step-size", type=_positive_float, default=None, help="step size (default: automatic)")
    p.add_argument("--no-intercept", action="store_true", help="fit without an intercept")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("--checkpoint", metavar="FILE", default=None,
                   help="write a checkpoint of the run there; the same command run again after an interruption "
                   "continues from it, with the draws of an uninterrupted run")
    p.add_argument("--checkpoint-every", type=float, default=60.0, metavar="SECONDS",
                   help="seconds between checkpoints (default: %(default)s; 0: after every chunk of steps, or "
                   "every iteration of the other models)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--scheduler", metavar="ADDRESS|local", default=None,
                   help="spread the chains over the workers of a Dask cluster: a scheduler's address, or 'local' "
                        "for a local cluster of one worker per core (BayesianSVC; needs regbayes[dask]); with data "
                        "read block by block, the blocks are shards on the workers and the chains move between them. "
                        "--model medlda: the documents are sharded over the workers (sampler ssgrld), each reading "
                        "its own blocks of data read block by block")

    p = sub.add_parser("predict", help="predict with a saved model",
                       description="Print one prediction per row of DATA (svmlight). With --proba, "
                       "print the Gibbs-classifier vote fraction of every class instead. When DATA has "
                       "labels, the accuracy goes to stderr.")
    p.add_argument("model", metavar="MODEL", help="file written by 'regbayes fit'")
    p.add_argument("--format", choices=FORMATS, default="npz",
                   help="format of MODEL (default: %(default)s); a pickle can run code: load trusted files only")
    p.add_argument("data", metavar="DATA", help="svmlight/LIBSVM file")
    p.add_argument("--proba", action="store_true", help="print class probabilities (vote fractions)")
    p.add_argument("--output", default=None, metavar="FILE", help="write predictions here instead of stdout")

    p = sub.add_parser("datasets", help="list the public data sets regbayes can fetch")
    p.add_argument("--json", action="store_true", help="print the registry as JSON")

    p = sub.add_parser("bench", help="how fast each BayesianSVC sampler runs on this machine",
                       description="Fit every BayesianSVC sampler on HIGGS-shaped synthetic data and print "
                       "steps/s, compile seconds and test accuracy. The comparisons with other libraries are "
                       "the scripts in the repository's benchmarks/ folder.")
    p.add_argument("--n", type=int, default=20_000, help="training rows (default 20000)")
    p.add_argument("--samplers", default=",".join(("ssgld", "ssgnht", "srwm", "gibbs", "shmc")),
                   help="comma-separated samplers")
    p.add_argument("--n-draws", type=int, default=200, help="draws kept per fit (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--progress", action="store_true", help="show progress bars")
    return parser


# --------------------------------------------------------------------------- commands
def _error(command: str, message: str) -> int:
    print(f"regbayes {command}: error: {message}", file=sys.stderr)
    return 2


def _cmd_demo(args) -> int:
    from .experiments import demo

    print(f"regbayes demo: writing to {args.out}", file=sys.stderr)
    result = demo.run(args.out, quick=args.quick, seed=args.seed, progress=not args.no_progress)
    print(result["table"])
    print(f"\nfigure: {result['png']}\nnumbers: {result['json']}\ntable: {result['markdown']}")
    print(f"total time: {result['seconds']:.1f} s")
    return 0


def _cmd_reproduce(args) -> int:
    from .experiments import EXPERIMENTS, describe

    if args.list:
        width = max(len(n) for n in EXPERIMENTS)
        for name, title in describe().items():
            print(f"{name:<{width}}  {title}")
        return 0
    if not args.name:
        return _error("reproduce", f"give an experiment NAME or --list; known: {', '.join(sorted(EXPERIMENTS))}")
    if args.name not in EXPERIMENTS:
        return _error("reproduce", f"unknown experiment {args.name!r}; known: {', '.join(sorted(EXPERIMENTS))}")
    out = args.out or os.path.join("results", args.name)
    options = dict(quick=args.quick, progress=not args.no_progress)
    if args.seed is not None:
        options["seed"] = args.seed
    if args.n is not None:
        options["n"] = args.n
    if args.k is not None:
        options["k"] = args.k
    if args.n_datasets is not None:
        options["n_datasets"] = args.n_datasets
    accepted = inspect.signature(EXPERIMENTS[args.name].run).parameters
    for option in ("n", "k", "n_datasets"):
        if option in options and option not in accepted:
            flag = "--" + option.replace("_", "-")
            return _error("reproduce", f"experiment {args.name!r} has no {flag} option")
    if args.paper_settings:
        if "paper_settings" not in accepted:
            return _error("reproduce", f"experiment {args.name!r} has no --paper-settings option (the paper fixes "
                          "no hyper-parameters for it beyond the experiment's defaults)")
        options["paper_settings"] = True
    from .experiments.data_option import DataError, cli_value

    try:
        if args.data:
            options["data"] = cli_value(args.name, args.data, accepted)
        print(f"regbayes reproduce {args.name}: writing to {out}", file=sys.stderr)
        result = EXPERIMENTS[args.name].run(out, **options)
    except DataError as exc:
        return _error("reproduce", str(exc))
    except ModuleNotFoundError as exc:
        if options.get("data") != "real":
            raise
        return _error("reproduce", f"--data {' '.join(args.data)}: {exc}")
    print(result["table"])
    print(f"\nfigure: {result['png']}\nnumbers: {result['json']}\ntable: {result['markdown']}")
    print(f"total time: {result['seconds']:.1f} s")
    return 0


def _load_svmlight(path, n_features=None):
    from .datasets import load_svmlight

    return load_svmlight(path, n_features=n_features)


def _write_model(model, path, file_format):
    """Save ``model`` to ``path`` (its folder made if missing): the library's model file, or
    a pickle with ``--format pickle``; returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if file_format == "pickle":
        with open(out, "wb") as f:
            pickle.dump(model, f, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        model.save(out)
    return out


def _cmd_predict(args) -> int:
    import numpy as np

    if not Path(args.model).is_file():
        return _error("predict", f"no such model file: {args.model}")
    if not Path(args.data).is_file():
        return _error("predict", f"no such file: {args.data}")
    if args.format == "pickle":
        try:
            with open(args.model, "rb") as f:
                model = pickle.load(f)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
            return _error("predict", f"{args.model} is not a model saved by 'regbayes fit --format pickle' ({exc})")
    else:
        from .persistence import ModelFileError, load

        try:
            model = load(args.model)
        except ModelFileError as exc:
            hint = "; pass --format pickle if you trust it" if "a pickle" in str(exc) else ""
            return _error("predict", f"{exc}{hint}")
    if not hasattr(model, "predict") or not hasattr(model, "n_features_in_"):
        return _error("predict", f"{args.model} does not hold a fitted classifier")
    try:
        X, y = _load_svmlight(args.data, n_features=model.n_features_in_)
    except ValueError as exc:
        return _error("predict", f"{exc} (the model expects {model.n_features_in_} features)")
    except OSError as exc:
        return _error("predict", str(exc))
    if not model.__sklearn_tags__().input_tags.sparse:
        X = X.toarray()
    stream = open(args.output, "w") if args.output else sys.stdout
    try:
        if args.proba:
            proba = model.predict_proba(X)
            print(" ".join(f"p({c})" for c in model.classes_), file=stream)
            for row in proba:
                print(" ".join(f"{p:.4f}" for p in row), file=stream)
        else:
            for label in model.predict(X):
                print(label, file=stream)
    finally:
        if args.output:
            stream.close()
    known = np.isin(y, model.classes_)
    if known.all():
        accuracy = float(np.mean(model.predict(X) == y))
        print(f"accuracy on {args.data}: {accuracy:.4f} ({len(y)} rows)", file=sys.stderr)
    return 0


def _cmd_datasets(args) -> int:
    try:
        from . import datasets
    except ImportError as exc:  # pragma: no cover - the package ships datasets
        return _error("datasets", f"regbayes.datasets is not available ({exc})")
    lister = getattr(datasets, "list_datasets", None)
    if lister is None:
        return _error("datasets", "regbayes.datasets has no fetcher registry (list_datasets)")
    registry = lister()
    if args.json:
        print(json.dumps({k: (v.to_dict() if hasattr(v, "to_dict") else str(v)) for k, v in registry.items()}, indent=2))
        return 0
    home = getattr(datasets, "get_data_home", None)
    width = max((len(k) for k in registry), default=4)
    for name, spec in registry.items():
        print(f"{name:<{width}}  {getattr(spec, 'description', spec)}")
    if home is not None:
        try:
            print(f"\ncache folder: {home()} (set $REGBAYES_DATA to change it)")
        except Exception:  # noqa: BLE001 - informational only
            pass
    print("fetch with regbayes.datasets.fetch_<name>() or fetch_dataset_files(name); run an experiment on one "
          "with 'regbayes reproduce NAME --data <data set>'; synthetic generators: "
          "make_bayes_svm_2d, make_higgs_like, make_dp_mixture_svm, load_breast_cancer_standardized")
    return 0


def _cmd_bench(args) -> int:
    from .experiments import bench

    samplers = [name.strip() for name in args.samplers.split(",") if name.strip()]
    unknown = sorted(set(samplers) - set(bench.SAMPLERS))
    if unknown:
        return _error("bench", f"unknown sampler(s) {', '.join(unknown)}; choose from {', '.join(bench.SAMPLERS)}")
    try:
        rows = bench.run(n=args.n, samplers=samplers, n_draws=args.n_draws, seed=args.seed, progress=args.progress)
    except ValueError as exc:
        return _error("bench", str(exc))
    print(bench.markdown(rows))
    return 0


from .cli_fit import _cmd_fit  # noqa: E402 - it reads this module's helpers

COMMANDS = {
    "demo": _cmd_demo,
    "reproduce": _cmd_reproduce,
    "fit": _cmd_fit,
    "predict": _cmd_predict,
    "datasets": _cmd_datasets,
    "bench": _cmd_bench,
}


def main(argv=None) -> int:
    """Entry point of the ``regbayes`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from . import __version__

        print(f"regbayes {__version__}")
        return 0
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    _compilation_cache()
    return COMMANDS[args.command](args)


def _compilation_cache() -> None:
    """JAX's persistent compilation cache for the command's programs
    (:mod:`regbayes.compilation_cache`), unless ``REGBAYES_COMPILATION_CACHE=0``."""
    from .compilation_cache import ENV_VAR, enable_compilation_cache, turned_off

    if turned_off():
        return
    try:
        enable_compilation_cache()
    except OSError as error:  # an unwritable home folder: run without the cache
        print(f"regbayes: running without JAX's compilation cache ({error}); set {ENV_VAR} to a writable folder",
              file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

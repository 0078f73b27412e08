"""Command line: run one of the book's studies and write its result into a folder.

    python -m curvlab reproduce --scale small --out DIR
    python -m curvlab depth --out DIR
    python -m curvlab --help

The command line is a registry (:data:`STUDIES`): one entry per study, each with a ``name``, a
``help`` line, its ``scales``, ``add_arguments(parser)`` for its own options and
``run(args)``, which returns a :class:`curvlab.studies.result.StudyResult`.  Every study gets
the common options, defined once (:func:`add_common_arguments`):

    --scale {...}       the study's size (its own scales)
    --out DIR           the folder to write the result into (created; nothing written without)
    --device {auto,cpu,cuda}
    --cache-dir DIR     the run cache ($CURVLAB_CACHE, else .curvlab-cache/)
    --refresh           recompute cached runs
    --jobs N            worker processes for the runs missing from the cache (one per core;
                        not for poole and ensemble-benchmark, which compute in one process)
    --no-progress       hide the progress bar

A study that caches nothing (``cached = False``) has no ``--cache-dir`` or ``--refresh``.
The studies: ``reproduce`` (Part II: DIR/runs.csv, loss_curves.csv, effects.csv,
claims.json with T1 to T5 and E1 to E3, correlations.json, meta.json and the figures),
``pilot`` (DIR/pilot.csv, pilot_summary.csv), ``sweep`` (DIR/sweep.csv), ``boundaries``
(DIR/boundaries.csv: the trained models the chapters draw, cached), ``depth``
(DIR/depth.csv), ``poole`` (DIR/poole.csv, Poole et al.'s random tanh anchor of the depth
study), ``lm`` (the language-model study: DIR/runs.csv, loss_curves.csv, claims.json),
``ensemble-benchmark`` (DIR/ensemble_benchmark.csv) and ``realdata`` (Part II's
models on scikit-learn's bundled datasets: DIR/runs.csv, effects.csv with the near-linear
protocol, claims.json with E1, E2 or E2-linear and E3 per dataset); each also writes meta.json.

A command is dispatched to its own entry and to nothing else.  The exit status is 0 on success
and 2 on a bad argument (argparse's convention), with the error message naming the argument.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

__all__ = ["STUDIES", "add_common_arguments", "build_parser", "main"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _task_list(text: str) -> list[str]:
    from curvlab.data.tasks import TASKS

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in TASKS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected names from {', '.join(TASKS)}, got {text!r}")
    return names


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def _number(value, spec: str) -> str:
    """``value`` formatted by ``spec``, or "n/a" where a claim has none (an interval not given
    at few seeds, an mde of a spread that is zero).

    >>> _number(0.25, "+.4g"), _number(None, "+.4g")
    ('+0.25', 'n/a')
    """
    return "n/a" if value is None else format(value, spec)


def _interval(claim, spec: str) -> str:
    """A claim's effect and interval, as ``+e [+lo, +hi]``."""
    low, high = _number(claim["ci_low"], spec), _number(claim["ci_high"], spec)
    return f"{_number(claim['effect'], spec)} [{low}, {high}]"


class _Study:
    """A registry entry: the defaults of ``scales``, ``add_arguments`` and ``write``."""

    name = ""
    help = ""
    cached = True
    parallel = True  # computes its cells in worker processes (--jobs)
    device = "auto"  # the --device default

    def scales(self) -> Sequence[str]:
        from curvlab.studies.protocol import REPRODUCTION_SCALES

        return list(REPRODUCTION_SCALES)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The study's own options (none by default)."""

    def run(self, args: argparse.Namespace):
        raise NotImplementedError

    def write(self, result, out) -> None:
        """Write ``result`` into the folder ``out``."""
        result.write(out)

    def _options(self, args) -> dict:
        return {
            "device": args.device,
            "directory": args.cache_dir,
            "refresh": args.refresh,
            "progress": not args.no_progress,
            "jobs": args.jobs,
        }


class _Reproduce(_Study):
    name = "reproduce"
    help = "the Part II reproduction: runs, the claims table T1-T5 and E1-E3, figures"

    def add_arguments(self, parser):
        parser.add_argument("--seeds", type=_positive_int, default=None, help="number of seeds")
        parser.add_argument(
            "--epochs",
            type=_positive_int,
            default=None,
            help="starting epochs of both studies (a run that does not converge is retrained at "
            "twice its budget, up to the protocol's number of doublings)",
        )
        parser.add_argument("--tasks", type=_task_list, default=None, help="comma-separated")
        parser.add_argument(
            "--confirmatory-seeds",
            type=int,
            default=None,
            help="the confirmatory study on the plan's first N fresh seeds (N >= 3; 0: none; "
            "default: all of the plan's)",
        )

    def run(self, args):
        from curvlab.studies.reproduce import reproduce

        overrides = {}
        if args.epochs is not None:
            overrides["epochs"] = args.epochs
        if args.tasks is not None:
            overrides["tasks"] = args.tasks
        count = args.confirmatory_seeds
        confirmatory = True if count is None else (False if count == 0 else count)
        result = reproduce(
            args.scale,
            seeds=args.seeds,
            confirmatory=confirmatory,
            **self._options(args),
            **overrides,
        )
        for claim in result.claims:
            if "checks" in claim:
                evidence = f"{claim['passed']} of {claim['n_checks']} checks"
            else:
                p = claim["p_holm"] if claim["p_holm"] is not None else claim["p"]
                evidence = (
                    f"effect {_interval(claim, '+.4g')}  p {_number(p, '.3g')}  "
                    f"mde80 {_number(claim['mde_80'], '.3g')}"
                )
            study = claim.get("study", "geometric")
            _say(f"{claim['claim']:>14} {study:>12} {claim['verdict']:>14}  {evidence}")
        return result

    def write(self, result, out):
        from curvlab.plotting import write_figures

        result.write(out)
        write_figures(result.runs, result.curves, {"effects": result.effects}, out)


class _Pilot(_Study):
    name = "pilot"
    help = "convergence pilot: the epoch budget chosen by convergence and baseline"

    def run(self, args):
        from curvlab.studies.pilot import pilot
        from curvlab.studies.result import StudyResult

        chosen = pilot(args.scale, **self._options(args))
        for row in chosen["summary"]:
            _say(json.dumps(row))
        _say(f"chosen epochs: {chosen['chosen']} (protocol: {chosen['epochs']}, {chosen['rule']})")
        meta = {k: chosen[k] for k in ("chosen", "epochs", "rule", "plan")}
        return StudyResult(
            runs=chosen["rows"],
            curves=chosen["summary"],
            meta={"scale": args.scale, **meta},
            names={"runs": "pilot.csv", "curves": "pilot_summary.csv"},
        )


class _Sweep(_Study):
    name = "sweep"
    help = "one factor at a time around small: d_model, depth, tokens, n_train"

    def run(self, args):
        from curvlab.studies.result import StudyResult
        from curvlab.studies.sweep import stable_factors, sweep

        rows = sweep(args.scale, **self._options(args))
        for row in rows:
            _say(json.dumps(row))
        meta = {"scale": args.scale, "stable_factors": stable_factors(rows)}
        return StudyResult(runs=rows, meta=meta, names={"runs": "sweep.csv"})


class _Boundaries(_Study):
    name = "boundaries"
    help = "the trained models the chapters draw (runs of reproduce, retrained and cached)"

    def run(self, args):
        from curvlab.studies.drawn_models import retrain_book_runs
        from curvlab.studies.result import StudyResult

        records = retrain_book_runs(args.scale, **self._options(args))
        for row in records:
            _say(f"{row['task']:>10} {row['model']:>18} seed {row['seed']}: {row['epochs']} epochs")
        return StudyResult(
            runs=records, meta={"scale": args.scale}, names={"runs": "boundaries.csv"}
        )


class _Depth(_Study):
    name = "depth"
    help = "curvature against depth of attention stacks (DIR/depth.csv)"

    def scales(self):
        from curvlab.studies.depth import SCALES

        return list(SCALES)

    def add_arguments(self, parser):
        parser.add_argument("--seeds", type=_positive_int, default=None, help="seeds 0..n-1")
        parser.add_argument(
            "--depths",
            type=_positive_int,
            nargs="+",
            default=None,
            help="depths L (default: the scale's)",
        )

    def run(self, args):
        from curvlab.studies.depth import depth_config, depth_study, growth_laws
        from curvlab.studies.result import StudyResult

        overrides = {}
        if args.seeds is not None:
            overrides["seeds"] = list(range(args.seeds))
        if args.depths is not None:
            overrides["depths"] = list(args.depths)
        config = depth_config(args.scale, **overrides)  # a bad setting fails before any run
        options = self._options(args)
        options["device"] = None if args.device == "auto" else args.device
        start = time.perf_counter()
        records = depth_study(args.scale, **options, **overrides)
        laws = growth_laws(records)
        for row in laws:
            if row["flat"] or row["exponent"] is None:
                law = "flat" if row["flat"] else "no fit (one depth)"
            else:
                law = f"L^{row['exponent']:.2f} (r² {row['r_squared']:.2f})"
            means = ", ".join(f"{m:.3g}" for m in row["means"])
            _say(f"{row['regime']:>10} {row['model']:>15} {row['phase']:>7}: ∫|K|dA {law}; {means}")
        meta = {"scale": args.scale, "config": config, "growth_laws": laws}
        meta["seconds"] = time.perf_counter() - start
        return StudyResult(runs=records, meta=meta, names={"runs": "depth.csv"})


class _Poole(_Study):
    name = "poole"
    parallel = False
    help = "Poole et al.'s random tanh anchor of the depth study (DIR/poole.csv)"

    def scales(self):
        from curvlab.studies.poole import SCALES

        return list(SCALES)

    def add_arguments(self, parser):
        parser.add_argument("--seeds", type=_positive_int, default=None, help="seeds 0..n-1")

    def run(self, args):
        from curvlab.studies.poole import poole_config, poole_study
        from curvlab.studies.result import StudyResult

        overrides = {} if args.seeds is None else {"poole_seeds": list(range(args.seeds))}
        config = poole_config(args.scale, **overrides)
        records = poole_study(
            args.scale, directory=args.cache_dir, refresh=args.refresh, **overrides
        )
        _say(f"{len(records)} Poole anchor records")
        meta = {"scale": args.scale, "config": config}
        return StudyResult(runs=records, meta=meta, names={"runs": "poole.csv"})


class _LanguageModel(_Study):
    name = "lm"
    help = (
        "a small transformer language model per variant and seed: loss, stability, sink, curvature"
    )

    def scales(self):
        from curvlab.studies.protocol import LM_SCALES

        return list(LM_SCALES)

    def add_arguments(self, parser):
        parser.add_argument("--seeds", type=_positive_int, default=None, help="number of seeds")
        parser.add_argument("--steps", type=_positive_int, default=None, help="training steps")

    def run(self, args):
        from curvlab.studies.lm import lm

        overrides = {}
        if args.seeds is not None:
            overrides["seeds"] = list(range(args.seeds))
        if args.steps is not None:
            overrides["steps"] = args.steps
        result = lm(args.scale, **self._options(args), **overrides)
        for claim in result.claims:
            _say(
                f"{claim['claim']:>44} {claim['verdict']:>13}  effect {_interval(claim, '+.4g')}"
                f"  p_holm {_number(claim['p_holm'], '.3g')}"
            )
        return result


class _EnsembleBenchmark(_Study):
    name = "ensemble-benchmark"
    help = "per-seed loop vs vmap and einsum ensembles, one run"
    cached = False
    parallel = False
    device = "cpu"

    def scales(self):
        return ["small"]

    def add_arguments(self, parser):
        parser.add_argument("--seeds", type=_positive_int, default=20)
        parser.add_argument("--d-model", type=_positive_int, default=4)
        parser.add_argument("--epochs", type=_positive_int, default=100)

    def run(self, args):
        from curvlab.studies.ensemble_benchmark import benchmark_ensemble
        from curvlab.studies.result import StudyResult

        timed = benchmark_ensemble(
            seeds=args.seeds, d_model=args.d_model, epochs=args.epochs, device=args.device
        )
        print(json.dumps(timed, indent=1))
        return StudyResult(
            runs=[timed], meta={"scale": args.scale}, names={"runs": "ensemble_benchmark.csv"}
        )


def _dataset_list(text: str) -> list[str]:
    from curvlab.data.realdata import DATASETS

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in DATASETS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected names from {', '.join(DATASETS)}, got {text!r}")
    return names


class _RealData(_Study):
    name = "realdata"
    help = "Part II's models on scikit-learn's bundled datasets: E1-E3 per dataset (exploratory)"

    def scales(self):
        from curvlab.studies.protocol import REALDATA_SCALES

        return list(REALDATA_SCALES)

    def add_arguments(self, parser):
        parser.add_argument("--seeds", type=_positive_int, default=None, help="number of seeds")
        parser.add_argument("--epochs", type=_positive_int, default=None, help="fixed budget")
        parser.add_argument("--datasets", type=_dataset_list, default=None, help="comma-separated")

    def run(self, args):
        from curvlab.studies.realdata import realdata

        overrides = {}
        if args.seeds is not None:
            overrides["seeds"] = list(range(args.seeds))
        if args.epochs is not None:
            overrides["epochs"] = args.epochs
        if args.datasets is not None:
            overrides["datasets"] = args.datasets
        result = realdata(args.scale, **self._options(args), **overrides)
        for claim in result.claims:
            _say(
                f"{claim['dataset']:>14} {claim['claim']:>9}: {_interval(claim, '+.4f')} "
                f"{claim['verdict']}"
            )
        return result


STUDIES: dict[str, _Study] = {
    study.name: study
    for study in (
        _Reproduce(),
        _Pilot(),
        _Sweep(),
        _Boundaries(),
        _Depth(),
        _Poole(),
        _LanguageModel(),
        _EnsembleBenchmark(),
        _RealData(),
    )
}
"""The registry: one entry per subcommand of ``python -m curvlab``."""


def add_common_arguments(parser: argparse.ArgumentParser, study: _Study) -> None:
    """The options every study has (module docstring), with the study's scales and defaults."""
    parser.add_argument("--scale", choices=list(study.scales()), default="small", help="size")
    parser.add_argument("--out", metavar="DIR", default=None, help="folder to write into")
    parser.add_argument(
        "--device",
        choices=["auto", "cpu", "cuda"],
        default=study.device,
        help=f"auto: cuda if present (default {study.device})",
    )
    if study.cached:
        parser.add_argument("--cache-dir", default=None, help="cache directory ($CURVLAB_CACHE)")
        parser.add_argument("--refresh", action="store_true", help="recompute cached runs")
    if study.parallel:
        from curvlab.studies.pool import available_cores

        cores = available_cores()
        parser.add_argument(
            "--jobs",
            type=_positive_int,
            default=cores,
            help="worker processes computing the runs missing from the cache, each on one "
            f"thread (default: one per core, {cores})",
        )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: one subcommand per entry of :data:`STUDIES`.

    >>> args = build_parser().parse_args(["depth", "--scale", "small", "--seeds", "2"])
    >>> args.command, args.scale, args.seeds, args.out
    ('depth', 'small', 2, None)
    """
    parser = argparse.ArgumentParser(
        prog="python -m curvlab", description="Run a study of the book and write its result."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="STUDY")
    for name, study in STUDIES.items():
        sub = commands.add_parser(name, help=study.help, description=study.help)
        add_common_arguments(sub, study)
        study.add_arguments(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: sys.argv[1:]), run the study, write its result into ``--out``;
    the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    study = STUDIES[args.command]
    start = time.perf_counter()
    try:
        result = study.run(args)
    except ValueError as error:
        parser.error(str(error))
    seconds = time.perf_counter() - start
    if args.out is None:
        _say(f"{args.command}: done in {seconds:.1f} s (use --out DIR to write the result)")
        return 0
    study.write(result, args.out)
    _say(f"wrote {args.out} ({', '.join(result.files()[k] for k in _written(result))})")
    return 0


def _written(result) -> list[str]:
    tables = ("runs", "curves", "claims", "effects", "correlations")
    return [name for name in tables if getattr(result, name)] + ["meta"]


if __name__ == "__main__":
    raise SystemExit(main())

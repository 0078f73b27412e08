"""Command line: run one of the book's studies and write its result into a folder.

    python -m curvlab reproduce --scale small --out DIR
    python -m curvlab depth --out DIR
    python -m curvlab --help

The command line is a table of studies (:data:`STUDIES`): each entry is a
:class:`curvlab.studies.study.Study`, run by the one driver,
:func:`curvlab.studies.study.run_study`, which returns a
:class:`curvlab.studies.result.StudyResult`.  A study's own options (``Study.arguments``) are
overrides of its settings; every study gets the common options, defined once
(:func:`add_common_arguments`), which make its :class:`~curvlab.studies.study.Options`:

    --scale {...}       the study's size (its own scales)
    --out DIR           the folder to write the result into (created; nothing written without)
    --device {auto,cpu,cuda}
    --cache-dir DIR     the run cache ($CURVLAB_CACHE, else .curvlab-cache/)
    --refresh           recompute cached runs
    --jobs N            worker processes for the runs missing from the cache (one per core;
                        not for poole and the benchmarks, which compute in one process)
    --no-progress       hide the progress bar

A study that caches nothing (``caches``) has no ``--cache-dir`` or ``--refresh``, one that
computes in one process (``parallel``) no ``--jobs``.
The studies: ``reproduce`` (Part II: DIR/runs.csv, loss_curves.csv, effects.csv,
claims.json with T1 to T5 and E1 to E3, correlations.json, meta.json and the figures),
``pilot`` (DIR/pilot.csv, pilot_summary.csv), ``sweep`` (DIR/sweep.csv), ``boundaries``
(DIR/boundaries.csv: the trained models the chapters draw, cached), ``depth``
(DIR/depth.csv), ``poole`` (DIR/poole.csv, Poole et al.'s random tanh anchor of the depth
study), ``lm`` (the language-model study: DIR/runs.csv, loss_curves.csv, claims.json),
``ensemble-benchmark`` (DIR/ensemble_benchmark.csv), ``adaptive-benchmark``
(DIR/adaptive_benchmark.csv: a confirmatory cell's adaptive integrals one member at a time
and all at once) and ``realdata`` (Part II's
models on scikit-learn's bundled datasets: DIR/runs.csv, effects.csv with the near-linear
protocol, claims.json with E1, E2 or E2-linear and E3 per dataset); each also writes meta.json.

A command is dispatched to its own entry and to nothing else.  The exit status is 0 on success
and 2 on a bad argument (argparse's convention), with the error message naming the argument.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

from curvlab.studies.adaptive_benchmark import ADAPTIVE_BENCHMARK
from curvlab.studies.depth import DEPTH
from curvlab.studies.drawn_models import BOUNDARIES
from curvlab.studies.ensemble_benchmark import ENSEMBLE_BENCHMARK
from curvlab.studies.lm import LM
from curvlab.studies.pilot import PILOT
from curvlab.studies.pool import available_cores
from curvlab.studies.poole import POOLE
from curvlab.studies.realdata import REALDATA
from curvlab.studies.reproduce import REPRODUCE
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Options, Study, positive_int, run_study
from curvlab.studies.sweep import SWEEP

__all__ = ["STUDIES", "WRITERS", "add_common_arguments", "build_parser", "main"]

STUDIES: dict[str, Study] = {
    study.name: study
    for study in (
        REPRODUCE,
        PILOT,
        SWEEP,
        BOUNDARIES,
        DEPTH,
        POOLE,
        LM,
        ENSEMBLE_BENCHMARK,
        ADAPTIVE_BENCHMARK,
        REALDATA,
    )
}
"""The table: one subcommand of ``python -m curvlab`` per study."""


def _write_reproduction(result: StudyResult, out) -> None:
    from curvlab.plotting import write_figures

    result.write(out)
    write_figures(result.runs, result.curves, {"effects": result.effects}, out)


WRITERS: dict[str, Callable[[StudyResult, object], object]] = {"reproduce": _write_reproduction}
"""How a study's result is written where it is more than :meth:`StudyResult.write`: the
reproduction also draws its figures into the folder."""


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def add_common_arguments(parser: argparse.ArgumentParser, study: Study) -> None:
    """The options every study has (module docstring), with the study's scales."""
    parser.add_argument("--scale", choices=list(study.scales), default="small", help="size")
    parser.add_argument("--out", metavar="DIR", default=None, help="folder to write into")
    parser.add_argument(
        "--device",
        choices=["auto", "cpu", "cuda"],
        default="auto",
        help="auto: cuda if present (default auto)",
    )
    if study.caches:
        parser.add_argument("--cache-dir", default=None, help="cache directory ($CURVLAB_CACHE)")
        parser.add_argument("--refresh", action="store_true", help="recompute cached runs")
    if study.parallel:
        cores = available_cores()
        parser.add_argument(
            "--jobs",
            type=positive_int,
            default=cores,
            help="worker processes computing the runs missing from the cache, each on one "
            f"thread (default: one per core, {cores})",
        )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: one subcommand per entry of :data:`STUDIES`, each with the common
    options and the study's own (each named after the override it sets).

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
        for argument in study.arguments:
            sub.add_argument(
                argument.flag,
                type=argument.parse,
                nargs=argument.nargs,
                default=None,
                help=argument.help,
            )
    return parser


def options_of(args: argparse.Namespace) -> Options:
    """The run's :class:`~curvlab.studies.study.Options` from the common options."""
    return Options(
        device=args.device,
        directory=getattr(args, "cache_dir", None),
        refresh=getattr(args, "refresh", False),
        progress=not args.no_progress,
        jobs=getattr(args, "jobs", 1),
    )


def overrides_of(study: Study, args: argparse.Namespace) -> dict:
    """The settings the study's own options override (those given)."""
    overrides = {}
    for argument in study.arguments:
        value = getattr(args, argument.flag.removeprefix("--").replace("-", "_"))
        if value is not None:
            overrides[argument.override] = argument.convert(value)
    return overrides


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: sys.argv[1:]), run the study, write its result into ``--out``;
    the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    study = STUDIES[args.command]
    start = time.perf_counter()
    try:
        result = run_study(study, args.scale, options_of(args), **overrides_of(study, args))
    except ValueError as error:
        parser.error(str(error))
    for line in study.report(result) if study.report else []:
        _say(line)
    seconds = time.perf_counter() - start
    if args.out is None:
        _say(f"{args.command}: done in {seconds:.1f} s (use --out DIR to write the result)")
        return 0
    WRITERS.get(study.name, StudyResult.write)(result, args.out)
    _say(f"wrote {args.out} ({', '.join(result.files()[k] for k in _written(result))})")
    return 0


def _written(result) -> list[str]:
    tables = ("runs", "curves", "claims", "effects", "correlations")
    return [name for name in tables if getattr(result, name)] + ["meta"]


if __name__ == "__main__":
    raise SystemExit(main())

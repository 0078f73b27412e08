"""Command line: run one of the book's studies and write its table of records as CSV.

    python -m curvlab decision --scale small --out results.csv
    python -m curvlab depth ...        (when curvlab.experiments.depth is installed)

Subcommands (argparse):

- ``decision``  :func:`curvlab.experiments.decision.decision_study`; options ``--scale``
  (small|medium|large), ``--out`` (CSV path), ``--seeds`` (how many, 0..n−1, overriding the
  scale), ``--epochs``, ``--tasks`` (comma-separated), ``--device``, ``--cache-dir``,
  ``--refresh``, ``--no-progress``.
- ``depth``  registered when the module :mod:`curvlab.experiments.depth` exists: that module's
  optional ``add_cli_arguments(parser)`` adds its options to the common ones (``--scale``,
  ``--out``, ``--device``, ``--cache-dir``, ``--refresh``, ``--no-progress``), and its
  ``run_cli(args)`` runs the study and returns its records (a list of dicts), written to
  ``--out`` when given.

The exit status is 0 on success and 2 on a bad argument (argparse's convention), with the
error message naming the argument.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _task_list(text: str) -> list[str]:
    from curvlab.tasks import TASKS

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in TASKS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected names from {', '.join(TASKS)}, got {text!r}")
    return names


def _common_arguments(parser: argparse.ArgumentParser, scales: Sequence[str]) -> None:
    parser.add_argument("--scale", choices=list(scales), default="small", help="study size")
    parser.add_argument("--out", default=None, help="CSV file to write the records to")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if present)")
    parser.add_argument("--cache-dir", default=None, help="cache directory ($CURVLAB_CACHE)")
    parser.add_argument("--refresh", action="store_true", help="recompute cached runs")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _depth_module():
    if importlib.util.find_spec("curvlab.experiments.depth") is None:
        return None
    return importlib.import_module("curvlab.experiments.depth")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one subcommand per available study.

    >>> args = build_parser().parse_args(["decision", "--scale", "small", "--seeds", "2"])
    >>> args.command, args.scale, args.seeds
    ('decision', 'small', 2)
    """
    from curvlab.experiments.decision import SCALES

    parser = argparse.ArgumentParser(
        prog="python -m curvlab", description="Run a study of the book and write its table."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="STUDY")
    decision = commands.add_parser(
        "decision", help="gated vs ungated attention on linear and nonlinear 2-D tasks"
    )
    _common_arguments(decision, SCALES)
    decision.add_argument("--seeds", type=_positive_int, default=None, help="number of seeds")
    decision.add_argument("--epochs", type=_positive_int, default=None, help="training epochs")
    decision.add_argument(
        "--tasks", type=_task_list, default=None, help="comma-separated task names (default: all)"
    )
    depth = _depth_module()
    if depth is not None:
        depth_parser = commands.add_parser("depth", help="curvature against depth")
        _common_arguments(depth_parser, getattr(depth, "SCALES", SCALES))
        if hasattr(depth, "add_cli_arguments"):
            depth.add_cli_arguments(depth_parser)
    return parser


def _run_decision(args) -> list[dict]:
    from curvlab.experiments.decision import decision_study

    overrides = {}
    if args.seeds is not None:
        overrides["seeds"] = list(range(args.seeds))
    if args.epochs is not None:
        overrides["epochs"] = args.epochs
    if args.tasks is not None:
        overrides["tasks"] = args.tasks
    return decision_study(
        args.scale,
        directory=args.cache_dir,
        refresh=args.refresh,
        progress=not args.no_progress,
        device=args.device,
        **overrides,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: sys.argv[1:]), run the study, write the CSV; the exit status."""
    from curvlab.experiments import write_csv

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "decision":
            records = _run_decision(args)
        else:
            records = _depth_module().run_cli(args)
    except ValueError as error:
        parser.error(str(error))
    if args.out is not None:
        path = write_csv(records, args.out)
        print(f"wrote {len(records)} records to {path}", file=sys.stderr)
    else:
        print(f"{len(records)} records (use --out FILE.csv to write them)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

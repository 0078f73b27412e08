"""Command line: run one of the book's studies and write its results.

    python -m curvlab reproduce --scale small --out DIR
    python -m curvlab depth ...
    python -m curvlab ensemble-benchmark

Subcommands (argparse):

- ``reproduce``  :func:`curvlab.studies.reproduce.reproduce`: trains every model of the
  Part II study and writes DIR/runs.csv, DIR/claims.json, the other tables and the figures;
  options ``--scale`` (small|medium|large), ``--out`` (directory, required), ``--device``
  (auto|cpu|cuda), ``--seeds`` (how many), ``--epochs``, ``--tasks``, ``--cache-dir``,
  ``--refresh``, ``--no-progress`` (otherwise a progress bar with ETA).
- ``depth``  :mod:`curvlab.studies.depth`: its ``add_cli_arguments(parser)`` adds its own
  options to the common ones, its ``run_cli(args)`` runs it and returns its records.
- ``pilot``, ``sweep``  :func:`curvlab.studies.pilot.pilot` (DIR/pilot.csv,
  DIR/pilot_summary.csv) and :func:`curvlab.studies.sweep.sweep` (DIR/sweep.csv); options
  ``--scale``, ``--out``, ``--device``, ``--cache-dir``, ``--refresh``, ``--no-progress``.
- ``ensemble-benchmark``  per-seed loop against the vmap and einsum ensembles, one run.

The exit status is 0 on success and 2 on a bad argument (argparse's convention), with the
error message naming the argument.
"""

from __future__ import annotations

import argparse
import json
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
    from curvlab.models.tasks import TASKS

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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one subcommand per available study.

    >>> args = build_parser().parse_args(["depth", "--scale", "small", "--seeds", "2"])
    >>> args.command, args.scale, args.seeds
    ('depth', 'small', 2)
    """
    parser = argparse.ArgumentParser(
        prog="python -m curvlab", description="Run a study of the book and write its table."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="STUDY")
    from curvlab.studies import depth

    depth_parser = commands.add_parser("depth", help="curvature against depth")
    _common_arguments(depth_parser, depth.SCALES)
    depth.add_cli_arguments(depth_parser)

    from curvlab.studies.reproduce import SCALES as REPRODUCE_SCALES

    reproduce = commands.add_parser(
        "reproduce", help="the Part II reproduction: runs.csv, claims.json and figures"
    )
    reproduce.add_argument("--scale", choices=list(REPRODUCE_SCALES), default="small")
    reproduce.add_argument("--out", required=True, help="directory to write the results into")
    reproduce.add_argument(
        "--device", choices=["auto", "cpu", "cuda"], default="auto", help="auto: cuda if present"
    )
    reproduce.add_argument("--seeds", type=_positive_int, default=None, help="number of seeds")
    reproduce.add_argument(
        "--epochs",
        type=_positive_int,
        default=None,
        help="starting epochs (a run that does not converge is retrained at 2x, 4x, 8x)",
    )
    reproduce.add_argument("--tasks", type=_task_list, default=None, help="comma-separated")
    reproduce.add_argument("--cache-dir", default=None, help="cache directory ($CURVLAB_CACHE)")
    reproduce.add_argument("--refresh", action="store_true", help="recompute cached runs")
    reproduce.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    _add_pilot_and_sweep(commands)

    bench = commands.add_parser(
        "ensemble-benchmark", help="per-seed loop vs vmap and einsum ensembles"
    )
    bench.add_argument("--seeds", type=_positive_int, default=20)
    bench.add_argument("--d-model", type=_positive_int, default=4)
    bench.add_argument("--epochs", type=_positive_int, default=100)
    bench.add_argument(
        "--device", choices=["auto", "cpu", "cuda"], default="cpu", help="where all three train"
    )
    return parser


# --- pilot and sweep (curvlab.studies.pilot, curvlab.studies.sweep) ----------------


def _add_pilot_and_sweep(commands) -> None:
    for name, text in (
        ("pilot", "convergence pilot: the epoch budget chosen by convergence and baseline"),
        ("sweep", "one factor at a time around small: d_model, depth, tokens, n_train"),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--scale", choices=["small", "medium", "large"], default="small")
        sub.add_argument("--out", required=True, help="directory to write the results into")
        sub.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
        sub.add_argument("--cache-dir", default=None, help="cache directory ($CURVLAB_CACHE)")
        sub.add_argument("--refresh", action="store_true", help="recompute cached runs")
        sub.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _run_pilot_or_sweep(args) -> None:
    options = dict(
        device=args.device,
        directory=args.cache_dir,
        refresh=args.refresh,
        progress=not args.no_progress,
    )
    if args.command == "pilot":
        from curvlab.studies.pilot import pilot

        result = pilot(args.scale, args.out, **options)
        for row in result["summary"]:
            print(json.dumps(row), file=sys.stderr)
        print(f"chosen epochs: {result['chosen']}", file=sys.stderr)
    else:
        from curvlab.studies.sweep import sweep

        for row in sweep(args.scale, args.out, **options):
            print(json.dumps(row), file=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)


# --- end pilot and sweep ---------------------------------------------------------------------


def _run_reproduce(args) -> None:
    from curvlab.studies.reproduce import reproduce

    overrides = {}
    if args.epochs is not None:
        overrides["epochs"] = args.epochs
    if args.tasks is not None:
        overrides["tasks"] = args.tasks
    result = reproduce(
        args.scale,
        args.out,
        device=args.device,
        seeds=args.seeds,
        progress=not args.no_progress,
        directory=args.cache_dir,
        refresh=args.refresh,
        **overrides,
    )
    from curvlab.plotting import write_figures

    write_figures(result["runs"], result["loss_curves"], result["analysis"], args.out)
    for claim in result["claims"]:
        print(
            f"{claim['claim']:>14} {claim['verdict']:>12}  effect {claim['effect']:+.4g} "
            f"[{claim['ci_low']:+.4g}, {claim['ci_high']:+.4g}]  p {claim['p']:.3g}  "
            f"mde80 {claim['mde_80']:.3g}",
            file=sys.stderr,
        )
    print(f"wrote {args.out} in {result['seconds']:.1f} s", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: sys.argv[1:]), run the study, write the CSV; the exit status."""
    from curvlab.studies import write_csv

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "reproduce":
            _run_reproduce(args)
            return 0
        if args.command in ("pilot", "sweep"):
            _run_pilot_or_sweep(args)
            return 0
        if args.command == "ensemble-benchmark":
            from curvlab.studies.ensemble_benchmark import benchmark_ensemble

            result = benchmark_ensemble(
                seeds=args.seeds, d_model=args.d_model, epochs=args.epochs, device=args.device
            )
            print(json.dumps(result, indent=1))
            return 0
        from curvlab.studies import depth

        records = depth.run_cli(args)
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

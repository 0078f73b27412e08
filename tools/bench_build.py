"""Benchmark the book build: clean, no change, after an edit to one chapter, and under load.

    python -m tools.bench_build                 # steps 1-3, on book/geometry/fisher-rao.md
    python -m tools.bench_build --chapter book/experiments/reproduction.md
    python -m tools.bench_build --skip-clean    # reuse the current _build (no clean build)
    python -m tools.bench_build --load 2        # also a clean build beside 2 busy processes
    python -m tools.bench_build --only-load --load 2   # that step alone
    python -m tools.bench_build --load 2 --dry-run     # print the steps, run nothing

Each step is a real ``make book`` from the repository root, timed by wall clock:

1. clean build: ``make clean``, then ``make book`` (every study trained into an empty run cache
   of its own, ``$CURVLAB_CACHE`` in a temporary folder, and every chapter executed);
2. no change: ``make book`` again (Make finds nothing to do);
3. one chapter: a comment-only code cell is appended to ``--chapter`` (its code changes, so
   jupyter-cache misses for it and only it), ``make book``; the chapter's own execution time is
   read from the execution cache for comparison. The chapter is then restored byte for byte and
   the book rebuilt (timed too: it is served from the cache);
4. under load (``--load N``, N > 0): ``make clean``, then ``make book`` (again from an empty run
   cache of its own) while N CPU-bound
   processes (``while True: pass``) run beside it, as other builds on a shared machine would.
   Whether that build passed is recorded with its time (a failure does not stop the benchmark).

The figures depend on the machine and its load: report the CPU count and load with them. The
results are printed as a Markdown table and written as JSON to ``artifacts/bench-build.json``;
the build logs go to ``artifacts/bench-build-<step>.log``. ``--directory`` and ``--make-option``
run the steps on another book (a scratch book driven by this Makefile, say).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
ARTIFACTS = REPOSITORY / "artifacts"
EDIT = "\n```{code-cell} ipython3\n# an edit made by tools/bench_build.py\n```\n"
BUSY = "while True:\n    pass\n"


class Steps:
    """Runs (or, dry, prints) ``make <target>`` in ``directory``, each step logged."""

    def __init__(self, directory: Path, options: list[str], dry_run: bool = False) -> None:
        self.directory = directory
        self.options = options
        self.dry_run = dry_run

    def command(self, target: str) -> list[str]:
        return ["make", "--no-print-directory", *self.options, target]

    def make(
        self, target: str, step: str, check: bool = True, run_cache: Path | None = None
    ) -> tuple[float, int]:
        """Run ``make <target>``: (wall-clock seconds, exit status); raise if it fails and check.
        ``run_cache``: the studies' run cache for this step ($CURVLAB_CACHE), else the caller's."""
        command = self.command(target)
        environment = dict(os.environ)
        if run_cache is not None:
            environment["CURVLAB_CACHE"] = str(run_cache)
        if self.dry_run:
            prefix = f"CURVLAB_CACHE={shlex.quote(str(run_cache))} " if run_cache else ""
            where = shlex.quote(str(self.directory))
            print(f"[{step}] cd {where} && {prefix}{shlex.join(command)}")
            return 0.0, 0
        log = ARTIFACTS / f"bench-build-{step}.log"
        start = time.perf_counter()
        with log.open("w", encoding="utf-8") as output:
            result = subprocess.run(
                command,
                cwd=self.directory,
                stdout=output,
                stderr=subprocess.STDOUT,
                env=environment,
            )
        seconds = time.perf_counter() - start
        if result.returncode and check:
            raise SystemExit(f"`make {target}` failed in step {step!r}: see {log}")
        return seconds, result.returncode


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[list[subprocess.Popen]]:
    """``count`` CPU-bound Python processes for the duration of the block, then stopped."""
    processes = [
        subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]
    try:
        yield processes
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()


def executions(chapter: Path, directory: Path = REPOSITORY) -> list[float]:
    """Execution seconds recorded for ``chapter`` in the execution caches, oldest first."""
    from jupyter_cache import get_cache

    records = []
    for path in sorted((directory / "_build" / ".jupyter_cache").glob("*/global.db")):
        for record in get_cache(path.parent).list_cache_records():
            if Path(record.uri).resolve() == chapter.resolve():
                records.append((record.created, record.data.get("execution_seconds")))
    return [seconds for _, seconds in sorted(records) if seconds is not None]


def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench_build", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--chapter", type=Path, default=Path("book/geometry/fisher-rao.md"))
    parser.add_argument("--skip-clean", action="store_true", help="no clean build")
    parser.add_argument(
        "--load",
        type=int,
        default=0,
        metavar="N",
        help="also time a clean build beside N CPU-bound busy processes",
    )
    parser.add_argument("--only-load", action="store_true", help="only the step under --load")
    parser.add_argument("--dry-run", action="store_true", help="print the steps, run nothing")
    parser.add_argument("--directory", type=Path, default=REPOSITORY, help="where make runs")
    parser.add_argument(
        "--make-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="an extra argument to every make (repeatable), e.g. --make-option=-f/path/Makefile",
    )
    parser.add_argument("--out", type=Path, default=ARTIFACTS / "bench-build.json")
    options = parser.parse_args(arguments)
    if options.load < 0:
        parser.error("--load: expected a number of processes, 0 or more")
    if options.only_load and not options.load:
        parser.error("--only-load needs --load N with N > 0")
    directory = options.directory.resolve()
    chapter = (directory / options.chapter).resolve()
    if not options.only_load and not chapter.is_file():
        raise SystemExit(f"--chapter: no such chapter {options.chapter}")
    steps = Steps(directory, options.make_option, dry_run=options.dry_run)
    # every clean build starts from an empty run cache of its own, so that it trains every
    # study (a `make clean` alone keeps the studies' cached runs)
    scratch = Path(tempfile.gettempdir() if options.dry_run else tempfile.mkdtemp(prefix="bench-"))
    fresh_cache = {"clean": scratch / "clean", "load": scratch / "under-load"}
    if not options.dry_run:
        ARTIFACTS.mkdir(exist_ok=True)
    results: dict[str, object] = {
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg()[0],
        "chapter": options.chapter.as_posix(),
    }
    if not options.only_load:
        if not options.skip_clean:
            steps.make("clean", "clean")
            results["clean_build_s"] = steps.make(
                "book", "clean-build", run_cache=fresh_cache["clean"]
            )[0]
        else:
            steps.make("book", "warm-up")
        warm = None if options.skip_clean else fresh_cache["clean"]
        results["no_change_s"] = steps.make("book", "no-change", run_cache=warm)[0]
        original = chapter.read_bytes()
        try:
            if not options.dry_run:
                chapter.write_bytes(original + EDIT.encode())
            results["one_chapter_s"] = steps.make("book", "one-chapter", run_cache=warm)[0]
            times = [] if options.dry_run else executions(chapter, directory)
            results["chapter_execution_s"] = times[-1] if times else None
        finally:
            if not options.dry_run:
                chapter.write_bytes(original)
        results["after_restoring_the_chapter_s"] = steps.make("book", "restore", run_cache=warm)[0]
    if options.load:
        steps.make("clean", "clean-before-load")
        if options.dry_run:
            print(f"[under-load] {options.load} busy processes: {sys.executable} -c {BUSY!r}")
        with busy_processes(0 if options.dry_run else options.load):
            results["load_average_before_the_loaded_build"] = os.getloadavg()[0]
            seconds, status = steps.make(
                "book", "under-load", check=False, run_cache=fresh_cache["load"]
            )
        results["load_processes"] = options.load
        results["clean_build_under_load_s"] = seconds
        results["clean_build_under_load_passed"] = status == 0
    results["load_average_at_end"] = os.getloadavg()[0]
    if options.dry_run:
        return 0
    options.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

    print("| step | seconds |\n| --- | ---: |")
    for key, label in [
        ("clean_build_s", "clean `make book`"),
        ("no_change_s", "no-change `make book`"),
        ("one_chapter_s", f"`make book` after editing {options.chapter.as_posix()}"),
        ("chapter_execution_s", "  of which that chapter's execution (from the cache record)"),
        ("after_restoring_the_chapter_s", "`make book` after restoring it (cached)"),
        ("clean_build_under_load_s", f"clean `make book` beside {options.load} busy processes"),
    ]:
        if results.get(key) is not None:
            print(f"| {label} | {results[key]:.1f} |")
    if options.load:
        verdict = "passed" if results["clean_build_under_load_passed"] else "FAILED"
        print(f"\nThe build under load {verdict} (log: artifacts/bench-build-under-load.log).")
    print(
        f"\n{results['cpus']} CPUs, load average {results['load_average_at_start']:.1f} at the "
        f"start and {results['load_average_at_end']:.1f} at the end; written to {options.out}"
    )
    return 0 if results.get("clean_build_under_load_passed", True) else 1


if __name__ == "__main__":
    sys.exit(main())

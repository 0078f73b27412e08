"""Benchmark the book build: clean, no change, and after an edit to one chapter.

    python tools/bench_build.py                 # all three steps, on book/geometry/fisher-rao.md
    python tools/bench_build.py --chapter book/experiments/reproduction.md
    python tools/bench_build.py --skip-clean    # reuse the current _build (no clean build)

Each step is a real ``make book`` from the repository root, timed by wall clock:

1. clean build: ``make clean``, then ``make book`` (every chapter executed);
2. no change: ``make book`` again (Make finds nothing to do);
3. one chapter: a comment-only code cell is appended to ``--chapter`` (its code changes, so
   jupyter-cache misses for it and only it), ``make book``; the chapter's own execution time is
   read from the execution cache for comparison. The chapter is then restored byte for byte and
   the book rebuilt (timed too: it is served from the cache).

The figures depend on the machine and its load: report the CPU count and load with them. The
results are printed as a Markdown table and written as JSON to ``artifacts/bench-build.json``;
the build logs go to ``artifacts/bench-build-<step>.log``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
ARTIFACTS = REPOSITORY / "artifacts"
EDIT = "\n```{code-cell} ipython3\n# an edit made by tools/bench_build.py\n```\n"


def make(target: str, step: str) -> float:
    """Run ``make <target>`` and return its wall-clock seconds; raise if it fails."""
    log = ARTIFACTS / f"bench-build-{step}.log"
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as output:
        result = subprocess.run(
            ["make", "--no-print-directory", target],
            cwd=REPOSITORY,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    seconds = time.perf_counter() - start
    if result.returncode:
        raise SystemExit(f"`make {target}` failed in step {step!r}: see {log}")
    return seconds


def executions(chapter: Path) -> list[float]:
    """Execution seconds recorded for ``chapter`` in the execution caches, oldest first."""
    from jupyter_cache import get_cache

    records = []
    for path in sorted((REPOSITORY / "_build" / ".jupyter_cache").glob("*/global.db")):
        for record in get_cache(path.parent).list_cache_records():
            if Path(record.uri).resolve() == chapter.resolve():
                records.append((record.created, record.data.get("execution_seconds")))
    return [seconds for _, seconds in sorted(records) if seconds is not None]


def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", type=Path, default=Path("book/geometry/fisher-rao.md"))
    parser.add_argument("--skip-clean", action="store_true", help="no clean build")
    parser.add_argument("--out", type=Path, default=ARTIFACTS / "bench-build.json")
    options = parser.parse_args(arguments)
    chapter = (REPOSITORY / options.chapter).resolve()
    if not chapter.is_file():
        raise SystemExit(f"--chapter: no such chapter {options.chapter}")
    ARTIFACTS.mkdir(exist_ok=True)
    results: dict[str, object] = {
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg()[0],
        "chapter": options.chapter.as_posix(),
    }
    if not options.skip_clean:
        make("clean", "clean")
        results["clean_build_s"] = make("book", "clean-build")
    else:
        make("book", "warm-up")
    results["no_change_s"] = make("book", "no-change")
    original = chapter.read_bytes()
    try:
        chapter.write_bytes(original + EDIT.encode())
        results["one_chapter_s"] = make("book", "one-chapter")
        times = executions(chapter)
        results["chapter_execution_s"] = times[-1] if times else None
    finally:
        chapter.write_bytes(original)
    results["after_restoring_the_chapter_s"] = make("book", "restore")
    results["load_average_at_end"] = os.getloadavg()[0]
    options.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

    print("| step | seconds |\n| --- | ---: |")
    for key, label in [
        ("clean_build_s", "clean `make book`"),
        ("no_change_s", "no-change `make book`"),
        ("one_chapter_s", f"`make book` after editing {options.chapter.as_posix()}"),
        ("chapter_execution_s", "  of which that chapter's execution (from the cache record)"),
        ("after_restoring_the_chapter_s", "`make book` after restoring it (cached)"),
    ]:
        if results.get(key) is not None:
            print(f"| {label} | {results[key]:.1f} |")
    print(
        f"\n{results['cpus']} CPUs, load average {results['load_average_at_start']:.1f} at the "
        f"start and {results['load_average_at_end']:.1f} at the end; written to {options.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

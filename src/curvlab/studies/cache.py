"""An on-disk cache for experiment results, keyed by configuration and code version.

A result is stored as one JSON file ``<name>-<key>.json`` in the cache directory, where::

    key = sha256(canonical JSON of {"config": config, "code": code_version(modules)})[:20]
    code_version(modules) = sha256 of the source files of the named curvlab modules

so a rebuild with the same configuration and the same code reuses the result, and any change
to the configuration or to the source of a module the result depends on computes it afresh
(old files are left in place; delete the directory to clear it).

The directory is ``$CURVLAB_CACHE`` when set, else ``.curvlab-cache/`` at the repository root
(the folder holding ``pyproject.toml`` above this file), else ``.curvlab-cache/`` in the current
directory.  Results must be JSON-serialisable (dicts, lists, strings, finite numbers, None);
floats round-trip exactly.  Writes are atomic (a temporary file, then ``os.replace``).

Use :func:`cached` for one call, or :func:`cache_result` as a decorator::

    record = cached(run_one, config, name="decision", modules=("curvlab.models.attention",))
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["cache_dir", "cache_key", "cache_result", "cached", "code_version"]

_ENVIRONMENT_VARIABLE = "CURVLAB_CACHE"
_DIRECTORY_NAME = ".curvlab-cache"


def cache_dir(directory=None) -> Path:
    """The cache directory: ``directory``, else $CURVLAB_CACHE, else the repository default.

    >>> cache_dir("/tmp/some-cache").name
    'some-cache'
    """
    if directory is not None:
        return Path(directory)
    if os.environ.get(_ENVIRONMENT_VARIABLE):
        return Path(os.environ[_ENVIRONMENT_VARIABLE])
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file():
            return parent / _DIRECTORY_NAME
    return Path.cwd() / _DIRECTORY_NAME


@functools.cache
def _source_digest(name: str) -> bytes:
    """sha256 of one module's source, read once per process (the code that is running)."""
    module = importlib.import_module(name)
    return hashlib.sha256(name.encode() + b"\0" + inspect.getsource(module).encode()).digest()


def code_version(modules: Iterable[str]) -> str:
    """sha256 (hex) of the source code of the named modules, in sorted order of their names.

    Each module's source is read the first time it is asked for in a process and remembered,
    so an edit made while a study runs does not relabel results computed by the old code
    (call ``_source_digest.cache_clear()`` after reloading a module).

    >>> v = code_version(["curvlab.models.tasks"])
    >>> len(v), v == code_version(["curvlab.models.tasks"])
    (64, True)
    """
    names = list(modules) if not isinstance(modules, str) else [modules]
    if not names:
        raise ValueError("modules: expected at least one module name")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"modules: expected module names (str), got {name!r}")
    digest = hashlib.sha256()
    for name in sorted(set(names)):
        digest.update(_source_digest(name))
    return digest.hexdigest()


def _canonical(config) -> str:
    try:
        return json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"config: expected a JSON-serialisable value with finite numbers ({error})"
        ) from error


def cache_key(config, modules: Iterable[str]) -> str:
    """The 20-hex-digit key of ``config`` under the current source of ``modules``.

    >>> tasks = ["curvlab.models.tasks"]
    >>> cache_key({"a": 1}, tasks) == cache_key({"a": 1}, tasks)
    True
    >>> cache_key({"a": 1}, tasks) == cache_key({"a": 2}, tasks)
    False
    """
    payload = _canonical({"config": config, "code": code_version(modules)})
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(
            f"name: expected a nonempty string of letters, digits, '-', '_', got {name!r}"
        )
    return name


def cached(
    fn: Callable,
    config,
    *,
    name: str,
    modules: Iterable[str],
    directory=None,
    refresh: bool = False,
):
    """``fn(config)``, read from the cache when present, else computed and stored.

    ``name`` prefixes the file name; ``modules`` are the curvlab modules whose source the
    result depends on (the module defining ``fn`` is always included); ``refresh`` recomputes
    and overwrites.  The stored value is what is returned, so a hit and a miss give equal
    results.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     first = cached(lambda c: {"double": 2 * c["x"]}, {"x": 3}, name="demo",
    ...                    modules=["curvlab.models.tasks"], directory=d)
    ...     again = cached(lambda c: {"double": -1}, {"x": 3}, name="demo",
    ...                    modules=["curvlab.models.tasks"], directory=d)
    >>> first, again
    ({'double': 6}, {'double': 6})
    """
    if not callable(fn):
        raise TypeError(f"fn: expected a callable taking the config, got {type(fn)!r}")
    modules = set(modules)
    defining = getattr(fn, "__module__", None)
    if defining and defining.startswith("curvlab"):
        modules.add(defining)
    path = cache_dir(directory) / f"{_check_name(name)}-{cache_key(config, modules)}.json"
    if path.is_file() and not refresh:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)["result"]
    result = fn(config)
    text = json.dumps({"config": config, "result": result}, allow_nan=False, indent=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, suffix=".tmp", delete=False
    ) as handle:
        handle.write(text)
    os.replace(handle.name, path)
    return json.loads(text)["result"]


def cache_result(*, name: str, modules: Iterable[str]):
    """Decorator: ``f(config, directory=None, refresh=False)`` cached as by :func:`cached`.

    >>> @cache_result(name="square", modules=["curvlab.models.tasks"])
    ... def square(config):
    ...     return config["x"] ** 2
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     square({"x": 4}, directory=d)
    16
    """
    modules = tuple(modules)

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(config, *, directory=None, refresh=False):
            return cached(
                fn, config, name=name, modules=modules, directory=directory, refresh=refresh
            )

        return wrapper

    return decorate

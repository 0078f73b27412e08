"""The language model's corpus: the docstrings of the installed, pinned SymPy release.

Extraction reads source, never imports it: every ``.py`` file of the ``sympy`` package
directory (found with :func:`importlib.util.find_spec`, which locates without importing),
except those under a ``tests`` or ``benchmarks`` directory, in sorted order of their POSIX
paths relative to the package; each file is parsed with :mod:`ast`, and the docstrings of the
module, its classes and its functions (nested ones too) are taken in source order, cleaned by
this module's own rule (:func:`clean_docstring`, so the text does not depend on the Python
release's ``inspect.cleandoc``) and each followed by a blank line.  A file's text is the
concatenation of its docstrings; the corpus text is the concatenation of the files' texts in
file order.  The version is read from the package's metadata.

- Split by source file: a file is in the validation split iff the SHA-256 of its relative path,
  read as an integer, is divisible by :data:`VALIDATION_MODULUS` (one file in ten, the same
  file whatever else is installed); all other files train.
- The character vocabulary is the sorted set of the corpus's characters (both splits).
- :class:`CorpusFingerprint`: the SymPy version, the SHA-256 of the file list (the paths, one a
  line, each ended by a newline) and the SHA-256 of the corpus text (UTF-8).
  :func:`check_corpus` refuses a corpus whose fingerprint differs from the expected one and
  says what differs: the version, the file list, or (with both equal) the text.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import torch

__all__ = [
    "EXCLUDED_DIRECTORIES",
    "VALIDATION_MODULUS",
    "Corpus",
    "CorpusFingerprint",
    "check_corpus",
    "clean_docstring",
    "docstrings",
    "extract_docstring_corpus",
    "is_validation_file",
    "sympy_docstring_corpus",
    "validation_windows",
]

EXCLUDED_DIRECTORIES: frozenset[str] = frozenset({"tests", "benchmarks"})
"""Directories whose files are not part of the corpus (test and benchmark code)."""

VALIDATION_MODULUS = 10
"""A file validates iff int(SHA-256 of its relative path) is divisible by this."""

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def clean_docstring(raw: str) -> str:
    """A docstring's text: tabs expanded, the first line's leading blanks, the other lines'
    common indentation and every line's trailing blanks removed, blank lines at either end
    dropped.

    >>> clean_docstring("  Sum.\\n\\n    Examples\\n      >>> 1\\n    ")
    'Sum.\\n\\nExamples\\n  >>> 1'
    """
    lines = raw.expandtabs().split("\n")
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    margin = min(indents, default=0)
    lines = [lines[0].lstrip()] + [line[margin:].rstrip() for line in lines[1:]]
    lines[0] = lines[0].rstrip()
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def docstrings(source: str) -> list[str]:
    """The cleaned, non-empty docstrings of a module's ``source``, module first, then classes
    and functions in source order (nested ones included).

    >>> docstrings("'''Mod.'''\\ndef f():\\n    '''F.'''\\nclass C:\\n    def g(self): 'G.'")
    ['Mod.', 'F.', 'G.']
    """
    tree = ast.parse(source)
    nodes = [node for node in ast.walk(tree) if isinstance(node, _DOCUMENTED)]
    nodes.sort(key=lambda node: (getattr(node, "lineno", 0), getattr(node, "col_offset", -1)))
    texts = (ast.get_docstring(node, clean=False) for node in nodes)
    return [text for text in (clean_docstring(raw) for raw in texts if raw) if text]


def is_validation_file(path: str) -> bool:
    """Whether the file at relative POSIX ``path`` is in the validation split.

    >>> [is_validation_file(p) for p in ("core/add.py", "simplify/simplify.py")]
    [False, True]
    """
    return int(hashlib.sha256(path.encode("utf-8")).hexdigest(), 16) % VALIDATION_MODULUS == 0


@dataclass(frozen=True)
class CorpusFingerprint:
    """What identifies a corpus: the SymPy version and the SHA-256 of file list and text."""

    sympy_version: str
    files_sha256: str
    text_sha256: str


@dataclass(frozen=True)
class Corpus:
    """Docstring text per source file (``files`` sorted, ``texts`` aligned with them).

    >>> corpus = Corpus("1.0", ("a.py", "b.py"), ("ab\\n\\n", "ba\\n\\n"))
    >>> corpus.vocabulary, corpus.decode(corpus.encode("ba"))
    ('\\nab', 'ba')
    """

    sympy_version: str
    files: tuple[str, ...]
    texts: tuple[str, ...]

    def __post_init__(self):
        if len(self.files) != len(self.texts):
            raise ValueError(
                f"texts: expected one per file ({len(self.files)}), got {len(self.texts)}"
            )
        if list(self.files) != sorted(set(self.files)):
            raise ValueError("files: expected distinct paths in sorted order")

    @cached_property
    def text(self) -> str:
        """The whole corpus text, the files' texts in file order."""
        return "".join(self.texts)

    @cached_property
    def vocabulary(self) -> str:
        """The corpus's characters, sorted by code point; a character's id is its index."""
        return "".join(sorted(set(self.text)))

    @cached_property
    def _ids(self) -> dict[str, int]:
        return {character: i for i, character in enumerate(self.vocabulary)}

    def split_files(self, split: str) -> tuple[str, ...]:
        """The files of ``split`` ("train" or "validation"), in file order."""
        if split not in ("train", "validation"):
            raise ValueError(f"split: expected 'train' or 'validation', got {split!r}")
        return tuple(f for f in self.files if is_validation_file(f) == (split == "validation"))

    def split_text(self, split: str) -> str:
        """The text of ``split``'s files, concatenated in file order."""
        chosen = set(self.split_files(split))
        return "".join(t for f, t in zip(self.files, self.texts, strict=True) if f in chosen)

    @cached_property
    def fingerprint(self) -> CorpusFingerprint:
        """The version and the SHA-256 of the file list and of the text (module docstring)."""
        files = "".join(f"{path}\n" for path in self.files)
        return CorpusFingerprint(self.sympy_version, _sha256(files), _sha256(self.text))

    def encode(self, text: str) -> torch.Tensor:
        """Character ids of ``text``, a long tensor (len(text),)."""
        unknown = sorted(set(text) - set(self.vocabulary))
        if unknown:
            raise ValueError(f"text: characters outside the vocabulary: {unknown[:5]!r}")
        return torch.tensor([self._ids[c] for c in text], dtype=torch.long)

    def decode(self, ids) -> str:
        """The text of character ids (a sequence or a 1-D tensor)."""
        return "".join(self.vocabulary[int(i)] for i in ids)


def extract_docstring_corpus(root, version: str) -> Corpus:
    """The docstring corpus of the package directory ``root`` (the module docstring's rule).

    Raises ValueError naming ``root`` if it is not a directory with ``.py`` files.
    """
    root = Path(root)
    paths = sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if not EXCLUDED_DIRECTORIES.intersection(path.relative_to(root).parts[:-1])
    )
    if not paths:
        raise ValueError(f"root: expected a package directory with .py files, got {root}")
    texts = []
    for path in paths:
        source = (root / path).read_text(encoding="utf-8")
        texts.append("".join(f"{doc}\n\n" for doc in docstrings(source)))
    return Corpus(version, tuple(paths), tuple(texts))


def sympy_docstring_corpus() -> Corpus:
    """The corpus of the installed ``sympy`` (located and read, not imported)."""
    spec = importlib.util.find_spec("sympy")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("sympy: the package is not installed")
    root = spec.submodule_search_locations[0]
    return extract_docstring_corpus(root, importlib.metadata.version("sympy"))


def check_corpus(corpus: Corpus, expected: CorpusFingerprint) -> Corpus:
    """``corpus`` if its fingerprint is ``expected``; else ValueError saying what differs.

    >>> corpus = Corpus("1.0", ("a.py",), ("x\\n\\n",))
    >>> check_corpus(corpus, corpus.fingerprint) is corpus
    True
    """
    if not isinstance(expected, CorpusFingerprint):
        raise ValueError(f"expected: a CorpusFingerprint, got {expected!r}")
    found = corpus.fingerprint
    if found == expected:
        return corpus
    reasons = []
    if found.sympy_version != expected.sympy_version:
        reasons.append(
            f"the sympy version differs (found {found.sympy_version}, "
            f"expected {expected.sympy_version})"
        )
    if found.files_sha256 != expected.files_sha256:
        reasons.append(
            f"the file list differs ({len(corpus.files)} files, SHA-256 "
            f"{found.files_sha256[:12]}…, expected {expected.files_sha256[:12]}…)"
        )
    if not reasons:
        reasons.append(
            f"the text differs with the same sympy version and file list (SHA-256 "
            f"{found.text_sha256[:12]}…, expected {expected.text_sha256[:12]}…): "
            "the files were edited or the extraction rule changed"
        )
    raise ValueError("corpus: " + "; ".join(reasons))


def validation_windows(ids: torch.Tensor, count: int, context: int) -> torch.Tensor:
    """``count`` windows of context + 1 ids, window i at offset ⌊i · span / count⌋ with
    span = len(ids) − context − 1: spread over the whole split, (count, context + 1).

    >>> validation_windows(torch.arange(10), 3, 2)
    tensor([[0, 1, 2],
            [2, 3, 4],
            [4, 5, 6]])
    """
    span = ids.numel() - (context + 1)
    if span < 0:
        raise ValueError(f"ids: expected at least context + 1 = {context + 1} ids")
    return torch.stack([ids[i * span // count :][: context + 1] for i in range(count)])

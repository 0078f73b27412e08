"""Laws of the docstring corpus: source order without tests or benchmarks, no code run, the
same corpus whatever the order the files were written in, a split by whole files, a character
vocabulary, and a fingerprint check that says what differs."""

import dataclasses
import hashlib
import re
from pathlib import Path

import pytest

from curvlab.data.corpus import (
    VALIDATION_MODULUS,
    Corpus,
    check_corpus,
    extract_docstring_corpus,
    sympy_docstring_corpus,
)

REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements.txt"

MODULE = '''"""The module.

    Indented under the first line.
"""
import os


class Shape:
    """A shape."""

    def area(self):
        """Its area.

        Examples
        ========

        >>> 1 + 1
        2
        """

        def helper():
            "Nested."

        return 0


async def fetch():
    """Fetch."""


def undocumented():
    return os.sep
'''


def _write_package(root: Path, order=1) -> Path:
    files = {
        "alpha.py": MODULE,
        "empty.py": "x = 1\n",
        "sub/beta.py": '"""Beta."""\n',
        "tests/test_alpha.py": '"""Not corpus."""\n',
        "sub/benchmarks/bench.py": '"""Not corpus either."""\n',
        "trap.py": '"""Trap."""\nimport pathlib\npathlib.Path(__file__).with_name("RAN").touch()\n',
    }
    files |= {f"many/m{i:02d}.py": f'"""Module {i}."""\n' for i in range(40)}
    for name in sorted(files)[::order]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(files[name], encoding="utf-8")
    return root


@pytest.fixture
def package(tmp_path):
    return _write_package(tmp_path / "pkg")


def test_docstrings_in_source_order_cleaned_without_tests_or_benchmarks(package):
    corpus = extract_docstring_corpus(package, "9.9")
    assert "tests/test_alpha.py" not in corpus.files
    assert not any("benchmarks" in f for f in corpus.files)
    assert corpus.files == tuple(sorted(corpus.files))
    text = dict(zip(corpus.files, corpus.texts, strict=True))
    assert text["alpha.py"] == (
        "The module.\n\nIndented under the first line.\n\n"
        "A shape.\n\n"
        "Its area.\n\nExamples\n========\n\n>>> 1 + 1\n2\n\n"
        "Nested.\n\n"
        "Fetch.\n\n"
    )
    assert text["empty.py"] == "" and text["sub/beta.py"] == "Beta.\n\n"
    assert not (package / "RAN").exists()  # read, never imported: trap.py did not run


def test_extraction_does_not_depend_on_the_order_files_were_written(tmp_path):
    forward = extract_docstring_corpus(_write_package(tmp_path / "a", order=1), "9.9")
    backward = extract_docstring_corpus(_write_package(tmp_path / "b", order=-1), "9.9")
    assert forward == backward and forward.fingerprint == backward.fingerprint
    assert forward.fingerprint.text_sha256 == hashlib.sha256(forward.text.encode()).hexdigest()
    listing = "".join(f"{f}\n" for f in forward.files).encode()
    assert forward.fingerprint.files_sha256 == hashlib.sha256(listing).hexdigest()


def test_split_is_by_whole_files_and_follows_the_stated_rule(package):
    corpus = extract_docstring_corpus(package, "9.9")
    train, validation = corpus.split_files("train"), corpus.split_files("validation")
    assert not set(train) & set(validation)
    assert sorted(train + validation) == list(corpus.files)
    assert validation and train  # both non-empty on 43 files
    for path in corpus.files:
        digest = int(hashlib.sha256(path.encode()).hexdigest(), 16)
        assert (path in validation) == (digest % VALIDATION_MODULUS == 0)
    text = dict(zip(corpus.files, corpus.texts, strict=True))
    assert corpus.split_text("validation") == "".join(text[f] for f in validation)
    assert len(corpus.split_text("train")) + len(corpus.split_text("validation")) == len(
        corpus.text
    )
    with pytest.raises(ValueError, match="split"):
        corpus.split_files("test")


def test_vocabulary_is_the_sorted_characters_and_round_trips(package):
    corpus = extract_docstring_corpus(package, "9.9")
    assert corpus.vocabulary == "".join(sorted(set(corpus.text)))
    ids = corpus.encode(corpus.text)
    assert ids.shape == (len(corpus.text),) and int(ids.max()) < len(corpus.vocabulary)
    assert corpus.decode(ids) == corpus.text
    with pytest.raises(ValueError, match="text"):
        corpus.encode("€")


def test_check_accepts_the_expected_corpus_and_refuses_a_tampered_one(package):
    corpus = extract_docstring_corpus(package, "9.9")
    expected = corpus.fingerprint
    assert check_corpus(extract_docstring_corpus(package, "9.9"), expected) == corpus

    texts = list(corpus.texts)
    texts[0] = texts[0].replace("shape", "shope")
    edited = dataclasses.replace(corpus, texts=tuple(texts))
    with pytest.raises(ValueError, match="the text differs with the same sympy version") as error:
        check_corpus(edited, expected)
    assert "file list differs" not in str(error.value)
    assert "version differs" not in str(error.value)

    (package / "sub" / "gamma.py").write_text('"""Gamma."""\n')
    with pytest.raises(ValueError, match="file list differs") as error:
        check_corpus(extract_docstring_corpus(package, "9.9"), expected)
    assert "version" not in str(error.value)

    newer = dataclasses.replace(corpus, sympy_version="10.0")
    with pytest.raises(ValueError, match=re.escape("version differs (found 10.0, expected 9.9)")):
        check_corpus(newer, expected)
    with pytest.raises(ValueError, match="version differs.*file list differs"):
        check_corpus(extract_docstring_corpus(package, "10.0"), expected)
    with pytest.raises(ValueError, match="expected"):
        check_corpus(corpus, dataclasses.asdict(expected))


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(ValueError, match="root"):
        extract_docstring_corpus(tmp_path, "1.0")
    with pytest.raises(ValueError, match="texts"):
        Corpus("1.0", ("a.py", "b.py"), ("x",))
    with pytest.raises(ValueError, match="files"):
        Corpus("1.0", ("b.py", "a.py"), ("x", "y"))


@pytest.mark.slow
def test_installed_sympy_gives_the_pinned_release_corpus():
    pinned = re.search(r"^sympy==(\S+)$", REQUIREMENTS.read_text(), re.MULTILINE).group(1)
    corpus = sympy_docstring_corpus()
    assert corpus.sympy_version == pinned
    assert "core/basic.py" in corpus.files and "core/tests/test_basic.py" not in corpus.files
    validation = corpus.split_files("validation")
    # about one file in ten validates, and the split's text is a real share of the corpus
    assert 0.05 < len(validation) / len(corpus.files) < 0.15
    assert 0.05 < len(corpus.split_text("validation")) / len(corpus.text) < 0.25

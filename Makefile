# One command builds the book, one runs the tests; both set up .venv first.
#   make book    install everything into .venv and build the executed book into _build/html
#   make test    install, lint, build the book if its sources changed, run the whole test suite
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The notebook kernel must be this environment's own, never a user-level "python3" kernelspec.
export JUPYTER_PATH := $(abspath $(VENV))/share/jupyter
export MPLBACKEND := Agg

BOOK_SOURCES := _config.yml _toc.yml $(shell find book src -type f \( -name '*.md' -o -name '*.py' -o -name '*.bib' -o -name '*.yml' -o -name '*.css' -o -name '*.js' -o -name '*.svg' -o -name '*.json' \) -not -path '*/__pycache__/*' 2>/dev/null)

.PHONY: book test test-fast lint clean venv bench

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (curvlab)" >/dev/null
	touch $@

_build/html/index.html: $(STAMP) $(BOOK_SOURCES)
	$(BIN)/jupyter-book build . -W -n --keep-going
	touch $@

book: _build/html/index.html

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

test: lint book
	$(BIN)/python -m pytest --doctest-modules src tests

test-fast: $(STAMP)
	$(BIN)/python -m pytest --doctest-modules src tests -m "not slow and not browser"

clean:
	rm -rf _build

bench: $(STAMP)
	$(BIN)/python -m curvlab.benchmark

# --- site: offline assets and browser tests (begin) ---
# --- site (end) ---

# --- classroom: student editions and grading (begin) ---
# --- classroom (end) ---

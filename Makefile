# curvlab: an executed Jupyter Book and the tested library under it.
# Two commands set everything up on a fresh machine (README.md: "The two commands"): `make book`
# installs everything into .venv and builds the executed book into _build/html; `make test` (what
# CI runs) lints and runs the fast tests first, then builds the book and runs the slow and the
# browser tests. `make test-fast` is the inner loop. `make help` lists every target.
# System requirements, checked before anything else (a one-line message when one is missing):
# Python 3.11 with its venv module, Node.js with npm, and Debian's chromium for the browser tests.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 2>/dev/null || echo python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The notebook kernel must be this environment's own, never a user-level "python3" kernelspec.
export JUPYTER_PATH := $(abspath $(VENV))/share/jupyter
# The browser the site tests drive (tests/test_site.py reads the same variable).
export CURVLAB_CHROMIUM ?= /usr/bin/chromium
LINTED := src tests tools book/_ext conftest.py
BOOK_SOURCES := _config.yml _toc.yml $(shell find book src -type f \( -name '*.md' -o -name '*.py' -o -name '*.bib' -o -name '*.yml' -o -name '*.css' -o -name '*.js' -o -name '*.svg' -o -name '*.json' \) -not -path '*/__pycache__/*' -not -path '*/node_modules/*' -not -path 'book/_static/vendor/*' 2>/dev/null)
# JupyterLab defaults shipped with the project: a .md chapter opens as a notebook (jupytext).
LAB_DEFAULTS := .jupyter/labconfig/default_setting_overrides.json
VENDOR_NPM := book/_vendor
VENDOR_OUT := book/_static/vendor
VENDOR_STAMP := $(VENDOR_OUT)/VERSIONS.txt

.DEFAULT_GOAL := help
.PHONY: help require-python require-npm require-chromium venv vendor studies book lab lint format \
        test test-fast test-slow test-browser bench bench-book clean
# A recipe that fails removes the target it was writing, so a failed build is never up to date.
.DELETE_ON_ERROR:

#   make help          list the targets (this text)
help:
	@awk '/^#   make /{on=1} on && /^#   /{sub(/^#   /, ""); print; next} {on=0}' $(MAKEFILE_LIST)

# --- System requirements: each stops the command at once, saying what to install ---
require-python:
	@py=$(BIN)/python; test -x $$py || py=$(PYTHON); \
	$$py -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null || \
	{ echo "make: Python 3.11 with venv is needed: apt-get install python3.11 python3.11-venv (or make PYTHON=/path/to/python3.11)"; exit 1; }

require-npm:
	@command -v npm >/dev/null && command -v node >/dev/null || \
	{ echo "make: Node.js and npm are needed to vendor the site's JavaScript: apt-get install npm"; exit 1; }

require-chromium:
	@test -x "$(CURVLAB_CHROMIUM)" || \
	{ echo "make: the browser tests need Chromium at $(CURVLAB_CHROMIUM): apt-get install chromium (or set CURVLAB_CHROMIUM)"; exit 1; }

#   make venv          install the pinned environment (requirements.txt, pyproject.toml) in .venv
venv: require-python $(STAMP)

$(STAMP): requirements.txt pyproject.toml $(LAB_DEFAULTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (curvlab)" >/dev/null
	mkdir -p $(VENV)/etc/jupyter/labconfig && cp $(LAB_DEFAULTS) $(VENV)/etc/jupyter/labconfig/
	touch $@

#   make lab           open the chapters in JupyterLab with the book's kernel ("Python 3
#                      (curvlab)"); a double-click on a chapter (.md) opens it as a notebook
#                      (jupytext; .jupyter/labconfig/, installed into .venv by `make venv`).
#                      LAB_ARGS="--no-browser --port 8899" passes options to `jupyter lab`.
lab: require-python $(STAMP)
	JUPYTER_CONFIG_PATH=$(CURDIR)/.jupyter $(BIN)/jupyter lab --notebook-dir=book $(LAB_ARGS)

#   make vendor        npm ci the pinned browser assets (book/_vendor/package-lock.json) and copy
#                      what the site serves into book/_static/vendor/ (generated, gitignored):
#                      MathJax 3, RequireJS, the Jupyter widgets HTML manager. No CDN at view time.
vendor: require-npm $(VENDOR_STAMP)

$(VENDOR_STAMP): $(VENDOR_NPM)/package.json $(VENDOR_NPM)/package-lock.json
	cd $(VENDOR_NPM) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	rm -rf $(VENDOR_OUT) && mkdir -p $(VENDOR_OUT)/mathjax/output $(VENDOR_OUT)/html-manager
	cd $(VENDOR_NPM)/node_modules/mathjax && cp -R LICENSE es5/tex-mml-chtml.js es5/input es5/ui es5/a11y es5/sre es5/adaptors $(CURDIR)/$(VENDOR_OUT)/mathjax/ && cp -R es5/output/chtml $(CURDIR)/$(VENDOR_OUT)/mathjax/output/
	cp $(VENDOR_NPM)/node_modules/requirejs/require.js $(VENDOR_OUT)/require.js
	cd $(VENDOR_NPM)/node_modules/@jupyter-widgets/html-manager/dist && cp embed-amd.js *.woff2 *.woff *.ttf *.eot *.svg $(CURDIR)/$(VENDOR_OUT)/html-manager/
	cd $(VENDOR_NPM) && node -e 'for (const p of ["mathjax", "requirejs", "@jupyter-widgets/html-manager"]) console.log(p + " " + require(p + "/package.json").version)' > $(CURDIR)/$@

#   make studies       run every study the chapters read, through the command line, before the
#                      book: progress bars with an ETA in the terminal, results in
#                      _build/studies/<study>/ and in the run cache (.curvlab-cache/), so that
#                      the chapters read them back instead of training
# Each entry of STUDIES is run as `python -m curvlab <entry> --scale small --device cpu --out
# _build/studies/<entry>`: the calls the chapters make (CPU, scale small), so the cache keys
# agree. The cache is keyed by each study's configuration and code, so a study whose code is
# unchanged costs a cache look-up; the stamp keeps a no-change `make book` from starting
# Python at all. A study that fails stops the build before any chapter runs.
STUDIES := depth poole pilot reproduce boundaries sweep realdata lm
STUDIES_STAMP := _build/studies/.complete
STUDY_SOURCES := $(shell find src/curvlab -name '*.py' -not -path '*/__pycache__/*' 2>/dev/null)
studies: require-python $(STUDIES_STAMP)

$(STUDIES_STAMP): $(STAMP) $(STUDY_SOURCES)
	@rm -f $@
	@for study in $(STUDIES); do \
	  echo "$(BIN)/python -m curvlab $$study --scale small --device cpu --out _build/studies/$$study"; \
	  $(BIN)/python -m curvlab $$study --scale small --device cpu --out _build/studies/$$study \
	    || { echo "make: the study $$study failed; the book is not built"; exit 1; }; \
	done
	@mkdir -p $(@D) && touch $@

#   make book          build the executed book into _build/html (-W: a failing cell or any warning
#                      fails it, naming the chapters). Executes only what changed: a chapter edit
#                      re-runs that chapter; a change to src/curvlab, pyproject.toml or
#                      requirements.txt re-runs every chapter importing curvlab (the execution
#                      cache is keyed by them: book/_ext/curvlab_site/cache.py); no change, no
#                      work.
#                      A failed build leaves nothing up to date: the next one builds again.
book: require-python require-npm _build/html/index.html

# The notebook kernels draw figures with matplotlib's inline backend (an inherited
# MPLBACKEND=Agg would put no figure on the page of a chapter calling plt.show()).
# _build/html/index.html is the target, written by the build (a redirect to the landing page),
# so it is removed first: only a build that finishes with status 0 leaves it. When the build
# fails, the pages of the chapters whose execution failed are deleted
# (book/_ext/curvlab_site/cache.py) and so is Sphinx's saved environment (_build/.doctrees), so
# that the next build reads every page again and reports every warning again (the executions
# come from the cache, except those that failed: they are run again). A per-cell timeout guards against hangs only
# (execute.timeout in _config.yml; CURVLAB_CELL_TIMEOUT=<seconds> overrides it).
# The studies are order-only: they run first but do not by themselves make the site out of
# date (a change to the library that they read does, through BOOK_SOURCES).
_build/html/index.html: $(STAMP) $(VENDOR_STAMP) $(BOOK_SOURCES) | $(STUDIES_STAMP)
	@rm -f $@
	MPLBACKEND=module://matplotlib_inline.backend_inline $(BIN)/jupyter-book build . -W -n --keep-going \
	  || { rm -rf $@ _build/.doctrees; echo "make: the book build failed: nothing of it is up to date"; exit 1; }
	touch $@

#   make lint          ruff (check and format --check) on src, tests, tools and the chapters'
#                      code cells (tools.lint_chapters: findings at their .md lines)
lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/python -m tools.lint_chapters

#   make format        apply ruff's fixes and formatting there, chapters' code cells included
format: $(STAMP)
	$(BIN)/ruff check --fix $(LINTED)
	$(BIN)/ruff format $(LINTED)
	$(BIN)/python -m tools.lint_chapters --fix

#   make test          what CI (.ci/run) runs, fastest feedback first: lint, the fast tests
#                      (`make test-fast`), then the book and the student site, then the slow
#                      tests (`make test-slow`) and the browser tests (`make test-browser`)
# Sub-makes, not prerequisites: the order holds under `make -j` too.
test: require-python require-npm require-chromium
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory test-fast
	@$(MAKE) --no-print-directory book book-student
	@$(MAKE) --no-print-directory test-slow
	@$(MAKE) --no-print-directory test-browser

# Tests that read the built sites without a browser: they run after the build (test-slow).
SITE_TESTS := tests/test_site_student.py
# The fast and the slow tests run in TEST_WORKERS worker processes (pytest-xdist; "auto": one
# per CPU core, at most 4), each on one torch thread (conftest.py: the workers are the
# parallelism), one test file per worker at a time (--dist loadfile: a file's module fixtures,
# such as one grading of a chapter, are built once). TEST_WORKERS=0 runs every test in one
# process, one after another.
TEST_WORKERS ?= auto
PARALLEL = -n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile
# Slow tests that run after the others, with nothing beside them: the attack suite checks that
# no process of the sandbox user outlives its grading, reading every such process, so another
# grading (or a load that slows the sandbox's teardown) beside it would be counted against it.
ALONE_TESTS := tests/curvgrade/test_grading_attacks.py \
  tests/curvgrade/test_grading_attacks_isolation.py

#   make test-fast     the inner loop: the library tests and doctests marked neither slow nor
#                      browser, except those reading the built sites (seconds; builds nothing)
test-fast: require-python $(STAMP)
	$(BIN)/python -m pytest --doctest-modules src tests -m "not slow and not browser" \
	  $(SITE_TESTS:%=--ignore=%) $(PARALLEL)

#   make test-slow     the tests marked slow (scratch books, the chapters' claims, the classroom
#                      attack suite) and the checks of the built sites that need no browser,
#                      after building the book and the student site if needed
test-slow: require-python book book-student
	$(BIN)/python -m pytest tests -m "slow and not browser" $(SITE_TESTS:%=--ignore=%) \
	  $(ALONE_TESTS:%=--ignore=%) --durations=30 $(PARALLEL)
	$(BIN)/python -m pytest $(ALONE_TESTS) -m "slow and not browser" --durations=5
	$(BIN)/python -m pytest $(SITE_TESTS) -m "not slow and not browser"

#   make test-browser  build the book (and the student site) if needed, then check every page in
#                      headless Chromium
#                      (Debian chromium; screenshots in artifacts/screenshots/)
test-browser: require-chromium book book-student
	$(BIN)/python -m pytest tests/test_site.py -m browser --durations=10
	$(BIN)/python -m pytest tests/test_site_student.py -m browser

#   make bench         the curvature-engine benchmark (vmap against a Python loop), then a
#                      confirmatory cell's adaptive integrals (one member at a time against all
#                      at once; curvlab.studies.adaptive_benchmark)
bench: $(STAMP)
	$(BIN)/python -m curvlab.studies.engine_benchmark
	$(BIN)/python -m curvlab adaptive-benchmark --no-progress

#   make bench-book    time a clean `make book`, a no-change `make book` and a rebuild after a
#                      one-chapter edit (tools.bench_build; BENCH_ARGS="--help" for options;
#                      BENCH_ARGS="--load 2": also a clean build beside two busy processes)
bench-book: require-python require-npm $(STAMP)
	$(BIN)/python -m tools.bench_build $(BENCH_ARGS)

#   make clean         remove _build (the built site and the execution caches)
clean:
	rm -rf _build

# --- classroom: student editions and grading (begin) ---
#   make editions      for every chapter in _toc.yml with exercises: editions/student/<chapter>.ipynb
#                      (the only folder to hand out: no solutions, no hidden checks, no outputs),
#                      editions/instructor/<chapter>.ipynb and editions/autograder/<chapter>.json
#   make kit           the course kit to hand out beside editions/student/: the library's wheel
#                      (no chapter, solution or test inside: checked) and requirements.txt, in
#                      editions/kit/ (book/students.md: how students install it)
#   make grade-demo    grade the sample and attack notebooks of the test chapter in the sandbox
#                      (needs root and bubblewrap): results in artifacts/classroom/grades/
#   make book-student  the site without solutions or hidden checks, built from the executed book
#                      (`make book` first, if needed): every page with the main build's outputs
#                      (figures, tables, glued numbers) less those of solutions, nothing executed
#                      a second time: _build/student/_build/html
#   make test-classroom  the classroom tests only (fixture chapter, attack suite, class workflow,
#                      two chapters of Part I and decision-boundaries of Part II, graded with
#                      the study cache that `make book` fills)
#   Grading your own class: see book/instructors.md, or `python -m curvgrade grade -h`.
CLASSROOM_DEMO := tests/curvgrade/fixtures/sphere-demo.md
CLASSROOM_OUT := artifacts/classroom
STUDENT_SRC := _build/student-src
STUDENT_SITE := _build/student/_build/html

.PHONY: editions kit grade-demo test-classroom book-student

editions: $(STAMP)
	$(BIN)/python -m curvgrade student --all --out editions

# The course kit: the library's wheel (curvlab and curvgrade only: no chapter, no test; checked
# by tools.check_kit) and the pins, for students to install beside editions/student/.
kit: $(STAMP)
	rm -rf editions/kit
	$(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation . -w editions/kit
	rm -rf build
	cp requirements.txt editions/kit/
	$(BIN)/python -m tools.check_kit editions/kit

grade-demo: $(STAMP)
	rm -rf $(CLASSROOM_OUT)
	$(BIN)/python -m curvgrade student $(CLASSROOM_DEMO) --out $(CLASSROOM_OUT)/editions
	$(BIN)/python tests/curvgrade/fixtures/sample_submissions.py \
	  $(CLASSROOM_OUT)/editions/student/sphere-demo.ipynb $(CLASSROOM_OUT)/submissions
	cp $(CLASSROOM_OUT)/editions/instructor/sphere-demo.ipynb $(CLASSROOM_OUT)/submissions/instructor.ipynb
	$(BIN)/python -m curvgrade grade \
	  --chapter $(CLASSROOM_OUT)/editions/autograder/sphere-demo.json \
	  --submissions $(CLASSROOM_OUT)/submissions --out $(CLASSROOM_OUT)/grades/scores.csv \
	  --timeout 60 --cell-timeout 10 --jobs 2
	@echo "gradebook: $(CLASSROOM_OUT)/grades/scores.csv (also -checks.csv, summary.csv, feedback/)"

$(STUDENT_SITE)/index.html: _build/html/index.html
	$(BIN)/python -m curvgrade.site $(STUDENT_SRC) --executed _build
	$(BIN)/jupyter-book build $(STUDENT_SRC) --path-output _build/student
	touch $@

book-student: require-python require-npm $(STUDENT_SITE)/index.html

test-classroom: $(STAMP)
	$(BIN)/python -m pytest --doctest-modules src/curvgrade tests/curvgrade
# --- classroom (end) ---

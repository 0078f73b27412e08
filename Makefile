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

BOOK_SOURCES := _config.yml _toc.yml $(shell find book src -type f \( -name '*.md' -o -name '*.py' -o -name '*.bib' -o -name '*.yml' -o -name '*.css' -o -name '*.js' -o -name '*.svg' -o -name '*.json' \) -not -path '*/__pycache__/*' -not -path '*/node_modules/*' -not -path 'book/_static/vendor/*' 2>/dev/null)

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
#   make vendor        npm ci the pinned browser assets (book/_vendor/package-lock.json) and copy
#                      what the site serves into book/_static/vendor/ (generated, gitignored):
#                      MathJax 3, RequireJS, the Jupyter widgets HTML manager. No CDN at view time.
#   make notebooks     write the paired .ipynb next to each chapter .md (launch buttons open it)
#   make test-browser  build the book, then check every page in headless Chromium
#                      (Debian chromium; screenshots in artifacts/screenshots/)
VENDOR_NPM := book/_vendor
VENDOR_OUT := book/_static/vendor
VENDOR_STAMP := $(VENDOR_OUT)/VERSIONS.txt
CHAPTER_NOTEBOOKS := $(patsubst %.md,%.ipynb,$(shell grep -rl --include='*.md' --exclude-dir='_*' '^kernelspec:' book 2>/dev/null))

.PHONY: vendor notebooks test-browser

vendor: $(VENDOR_STAMP)

$(VENDOR_STAMP): $(VENDOR_NPM)/package.json $(VENDOR_NPM)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed to vendor the site's JavaScript (apt-get install npm)"; exit 1; }
	cd $(VENDOR_NPM) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	rm -rf $(VENDOR_OUT) && mkdir -p $(VENDOR_OUT)/mathjax/output $(VENDOR_OUT)/html-manager
	cd $(VENDOR_NPM)/node_modules/mathjax && cp -R LICENSE es5/tex-mml-chtml.js es5/input es5/ui es5/a11y es5/sre es5/adaptors $(CURDIR)/$(VENDOR_OUT)/mathjax/ && cp -R es5/output/chtml $(CURDIR)/$(VENDOR_OUT)/mathjax/output/
	cp $(VENDOR_NPM)/node_modules/requirejs/require.js $(VENDOR_OUT)/require.js
	cd $(VENDOR_NPM)/node_modules/@jupyter-widgets/html-manager/dist && cp embed-amd.js *.woff2 *.woff *.ttf *.eot *.svg $(CURDIR)/$(VENDOR_OUT)/html-manager/
	cd $(VENDOR_NPM) && node -e 'for (const p of ["mathjax", "requirejs", "@jupyter-widgets/html-manager"]) console.log(p + " " + require(p + "/package.json").version)' > $(CURDIR)/$@

notebooks: $(CHAPTER_NOTEBOOKS)

book/%.ipynb: book/%.md $(STAMP) $(VENDOR_NPM)/pair_notebooks.py
	$(BIN)/python $(VENDOR_NPM)/pair_notebooks.py $<
	@touch $@

# The book is built after the assets are vendored and the paired notebooks are written.
_build/html/index.html: $(VENDOR_STAMP) $(CHAPTER_NOTEBOOKS)
# The notebook kernels draw figures with matplotlib's inline backend: with MPLBACKEND=Agg (set
# above for the tests) a chapter's plt.show() puts no figure on its page.
_build/html/index.html: export MPLBACKEND := module://matplotlib_inline.backend_inline

test-browser: book
	$(BIN)/python -m pytest tests/test_site.py -m browser
# --- site (end) ---

# --- classroom: student editions and grading (begin) ---
#   make editions      for every chapter in _toc.yml with exercises: editions/student/<chapter>.ipynb
#                      (the only folder to hand out: no solutions, no hidden checks, no outputs),
#                      editions/instructor/<chapter>.ipynb and editions/autograder/<chapter>.json
#   make grade-demo    grade the sample and attack notebooks of the test chapter in the sandbox
#                      (needs root and bubblewrap): results in artifacts/classroom/grades/
#   make book-student  the site without solutions or hidden checks, from stripped sources with
#                      execution off (seconds, not a second executed build): _build/student/_build/html
#   make test-classroom  the classroom tests only (fixture chapter, attack suite, two real chapters)
#   Grading your own class: see book/instructors.md, or `python -m curvlab.classroom grade -h`.
CLASSROOM_DEMO := tests/fixtures/classroom/sphere-demo.md
CLASSROOM_OUT := artifacts/classroom
STUDENT_SRC := _build/student-src
STUDENT_SITE := _build/student/_build/html

.PHONY: editions grade-demo test-classroom book-student test-browser-student

editions: $(STAMP)
	$(BIN)/python -m curvlab.classroom student --all --out editions

grade-demo: $(STAMP)
	rm -rf $(CLASSROOM_OUT)
	$(BIN)/python -m curvlab.classroom student $(CLASSROOM_DEMO) --out $(CLASSROOM_OUT)/editions
	$(BIN)/python tests/fixtures/classroom/sample_submissions.py \
	  $(CLASSROOM_OUT)/editions/student/sphere-demo.ipynb $(CLASSROOM_OUT)/submissions
	cp $(CLASSROOM_OUT)/editions/instructor/sphere-demo.ipynb $(CLASSROOM_OUT)/submissions/instructor.ipynb
	$(BIN)/python -m curvlab.classroom grade \
	  --chapter $(CLASSROOM_OUT)/editions/autograder/sphere-demo.json \
	  --submissions $(CLASSROOM_OUT)/submissions --out $(CLASSROOM_OUT)/grades/scores.csv \
	  --timeout 60 --cell-timeout 10 --jobs 2
	@echo "gradebook: $(CLASSROOM_OUT)/grades/scores.csv (also -checks.csv, summary.csv, feedback/)"

$(STUDENT_SITE)/index.html: $(STAMP) $(BOOK_SOURCES) $(VENDOR_STAMP)
	$(BIN)/python -m curvlab.classroom.site $(STUDENT_SRC)
	$(BIN)/jupyter-book build $(STUDENT_SRC) --path-output _build/student
	touch $@

book-student: $(STUDENT_SITE)/index.html

# The test suite checks the student site too (tests/test_site_student.py).
test: book-student

test-browser-student: book-student
	$(BIN)/python -m pytest tests/test_site_student.py

test-classroom: $(STAMP)
	$(BIN)/python -m pytest --doctest-modules src/curvlab/classroom tests/test_classroom.py \
	  tests/test_classroom_answers.py tests/test_classroom_grading.py \
	  tests/test_classroom_chapters.py
# --- classroom (end) ---

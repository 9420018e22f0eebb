# reviewlab — two commands on a fresh machine: `make demo` (the main job) and `make test`.
# Each target installs only what it needs into the one venv, once (a stamp per extra):
#   demo            -> pip install -e .            (the package and its dependencies, nothing else)
#   lab, dashboard  -> pip install -e '.[lab]'     (JupyterLab, Voilà, a kernel)
#   test, lint      -> pip install -e '.[test,lab,openai]'
#   docs            -> pip install -e '.[docs]'     (Sphinx, furo, MyST-NB; the site in docs/_build/html)
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install -q
BASE   := $(VENV)/.installed-base
LAB    := $(VENV)/.installed-lab
TEST   := $(VENV)/.installed-test
DOCS   := $(VENV)/.installed-docs

.PHONY: demo test lab dashboard bench lint docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(BASE): pyproject.toml | $(PY)
	$(PIP) -e .
	touch $@

$(LAB): $(BASE)
	$(PIP) -e '.[lab]'
	touch $@

$(TEST): $(BASE)
	$(PIP) -e '.[test,lab,openai]'
	touch $@

$(DOCS): $(BASE)
	$(PIP) -e '.[docs]'
	touch $@

demo: $(BASE)
	$(PY) -m reviewlab demo

test: $(TEST)
	npm ci --prefix tests/mcp --no-audit --no-fund --silent
	$(PY) -m pytest -q

lint: $(TEST)
	$(VENV)/bin/ruff check reviewlab tests benchmarks
	$(VENV)/bin/mypy

# The documentation site, strict (-W: any warning fails it), every notebook executed: docs/about/site.md.
docs: $(DOCS)
	$(PY) -m sphinx -E -W --keep-going -n -q -b html docs docs/_build/html
	@echo "make docs: the site is in docs/_build/html/index.html"

lab: $(LAB)
	$(PY) -m reviewlab lab

dashboard: $(LAB)
	$(PY) -m reviewlab dashboard

# Every benchmark twice: quiet, then --busy (beside a CPU-bound neighbour); fails if any missed.
bench: $(TEST)
	@failed=""; for b in benchmarks/bench_*.py; do for busy in "" --busy; do \
	  echo "== $$b $${busy:-(quiet)}"; \
	  $(PY) $$b $$busy || failed="$$failed $$b$${busy:+ $$busy}"; done; done; \
	if [ -n "$$failed" ]; then echo "make bench: a goal was missed in:$$failed" >&2; exit 1; fi

clean:
	rm -rf $(VENV) out docs/_build .pytest_cache .mypy_cache .ruff_cache .hypothesis

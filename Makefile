# reviewlab — two commands on a fresh machine: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lab dashboard bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,lab,openai]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m reviewlab demo

test: $(STAMP)
	npm ci --prefix tests/mcp --no-audit --no-fund --silent
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check reviewlab tests benchmarks
	$(VENV)/bin/mypy

lab: $(STAMP)
	$(PY) -m reviewlab lab

dashboard: $(STAMP)
	$(PY) -m reviewlab dashboard

bench: $(STAMP)
	@failed=""; for b in benchmarks/bench_*.py; do echo "== $$b"; \
	  $(PY) $$b || failed="$$failed $$b"; done; \
	if [ -n "$$failed" ]; then echo "make bench: a goal was missed in:$$failed" >&2; exit 1; fi

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache .hypothesis

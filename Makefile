# Two commands do everything on a fresh machine: `make test` and `make book`.
# Both create .venv when missing and install the package with its test extra.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))

.PHONY: setup test unit nbval book notebooks benchmark clean

setup: $(STAMP)

# torch is pinned to the CPU build that lies on this machine's disk (pyproject.toml).
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: setup unit nbval

unit: setup
	$(PY) -m pytest tests

nbval: setup
ifneq ($(NOTEBOOKS),)
	$(PY) -m pytest --nbval $(NOTEBOOKS) --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider
else
	@echo "no notebooks yet: nbval skipped"
endif

# Execute every notebook in place at its default parameters, strip volatile metadata.
notebooks: setup
	@for nb in $(NOTEBOOKS); do \
	  echo "papermill $$nb"; \
	  $(VENV)/bin/papermill --no-progress-bar --cwd notebooks "$$nb" "$$nb" || exit 1; \
	done
	$(VENV)/bin/nbstripout --keep-count --keep-output --extra-keys "metadata.papermill cell.metadata.papermill cell.metadata.execution metadata.widgets" $(NOTEBOOKS)

book: notebooks
	$(VENV)/bin/jupyter-book build . -W --keep-going
	@echo "book: $(CURDIR)/_build/html/index.html"

benchmark: setup
	$(PY) benchmarks/bench_collect.py
	$(PY) benchmarks/bench_solver.py

clean:
	rm -rf _build .pytest_cache

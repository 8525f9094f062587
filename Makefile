# Two commands do everything on a fresh machine: `make test` and `make book`.
# Both create .venv when missing and install the package with its test extra.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))

# Test runs never write into the repository: every notebook's output_dir is
# redirected to a fresh temporary directory (oscc_core.reporting.params honours OSCC_OUTPUT_DIR).
TMP_OUTPUT = OSCC_OUTPUT_DIR="$$(mktemp -d)"
NBVAL = $(PY) -m pytest --nbval $(NOTEBOOKS) --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider
# An emulated different CPU: numpy's dispatch above its baseline, torch's vector
# kernels and numba's host-specific code generation all switched off.
EMULATED_CPU = NPY_DISABLE_CPU_FEATURES="$$($(PY) -c 'from numpy._core._multiarray_umath import __cpu_dispatch__ as d; print(" ".join(d))')" \
	ATEN_CPU_CAPABILITY=default NUMBA_CPU_NAME=generic NUMBA_CACHE_DIR="$$(mktemp -d)"

.PHONY: setup test unit nbval portability book notebooks check-book benchmark clean

setup: $(STAMP)

# torch is pinned to the CPU build that lies on this machine's disk (pyproject.toml).
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: setup unit nbval

unit: setup
	$(PY) -m pytest tests -p no:cacheprovider

# Re-execute the committed notebooks and fail when a text output changes.
nbval: setup
	$(TMP_OUTPUT) $(NBVAL)

# The same regression on an emulated different CPU: committed outputs must not
# depend on the CPU they were recorded on (DESIGN section 6).
portability: setup
	$(TMP_OUTPUT) $(EMULATED_CPU) $(NBVAL)

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

# Build the book from the committed notebook outputs (nothing re-executes; --all starts
# from a fresh Sphinx environment, so every warning shows again), then open every page in
# headless Chromium (scripts/check_book.py): it fails on visible raw LaTeX, a request to
# the network, an unresolved glue or role, a broken image, an error output, a table that
# does not fit, a table cell taller than 4 lines of its text (collapsed outputs opened to
# measure; scripts/check_book.py MAX_CELL_LINES), figure legend or tick text under 9 px as
# displayed (each figure's PNG records its smallest text: oscc_core.reporting.figure_text),
# and a chapter without a table and a figure. Screenshots of whole pages, however tall:
# _build/screenshots/.
# Installs Debian's chromium when it is missing and this runs as root.
check-book: setup
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "check-book: installing Debian's chromium (apt-get install -y chromium)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || exit 1; \
	  else \
	    echo "check-book needs Debian's chromium: install it (sudo apt-get install -y chromium) or run make check-book as root."; \
	    exit 1; \
	  fi; \
	fi
	@rc=0; $(VENV)/bin/jupyter-book build . -W --keep-going --all || rc=$$?; \
	  $(PY) scripts/check_book.py --chromium "$$(command -v chromium)" || rc=1; \
	  exit $$rc

benchmark: setup
	$(PY) benchmarks/bench_collect.py
	$(PY) benchmarks/bench_solver.py
	$(PY) benchmarks/bench_learn.py
	$(PY) benchmarks/bench_learn_quality.py

clean:
	rm -rf _build .pytest_cache

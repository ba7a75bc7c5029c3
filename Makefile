# Context Inspector: `make run` opens the TUI on sample_dumps/, `make test` sets up and runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# the seed of the property tests: the same cases every run (`FUZZ_SEED=random` for new ones)
FUZZ_SEED ?= 20261201
SEED_FLAG = $(if $(filter random,$(FUZZ_SEED)),,--hypothesis-seed=$(FUZZ_SEED))

.PHONY: run test check bench samples clean parity-live parity-rerun fuzz test-slow test-browser test-wheel test-swarm test-spark

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

run: $(VENV)/.installed
	$(BIN)/inspector sample_dumps

# two workers: the suite is CPU-bound and the machines have two cores; the property tests
# run the same cases every time (FUZZ_SEED), so a red run is reproducible
test: $(VENV)/.installed
	$(BIN)/python -m pytest -q -n 2 $(SEED_FLAG) -m "not slow"

# the Spark recipe of the decision index, in local mode (a JVM; the `spark` extra, ~400 MB)
$(VENV)/.spark-installed: pyproject.toml | $(VENV)/.installed
	$(BIN)/python -m pip install -q -e '.[test,spark]'
	touch $@

test-spark: $(VENV)/.spark-installed
	INSPECTOR_TEST_SPARK=1 PYSPARK_PYTHON=$(abspath $(BIN))/python $(BIN)/python -m pytest -q tests/test_index_spark.py

check: $(VENV)/.installed
	$(BIN)/ruff format --check inspector tests slow_tests bench tools scripts parity_live
	$(BIN)/ruff check inspector tests slow_tests bench tools scripts parity_live
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n 2 $(SEED_FLAG) -m "not slow"

# the suites too slow for `make test` (about three minutes on two cores): the slowest tests of
# tests/ (marked `slow` in tests/conftest.py), every benchmark script on tiny inputs, and the
# decision index of a generated 5,000-file fleet with DuckDB
test-slow: $(VENV)/.installed
	$(BIN)/python -m pytest -q -n 2 $(SEED_FLAG) -m slow tests
	$(BIN)/python -m pytest -q -n 2 slow_tests/test_bench_quick.py slow_tests/test_index_fleet.py

# the hardening fuzz suite at full size: FUZZ_CASES mutated real files (make test runs 150),
# odd filesystems and misbehaving servers, and the loader's property tests (truncations,
# byte flips, type swaps, huge strings: slow_tests/test_sources_fuzz.py); FUZZ_SEED fixes
# the cases (CI runs the same ones each time; `make fuzz FUZZ_SEED=random` explores new ones)
fuzz: $(VENV)/.installed
	FUZZ_CASES=$${FUZZ_CASES:-3000} $(BIN)/python -m pytest -q $(SEED_FLAG) tests/test_fuzz_harden.py tests/test_harden_http.py slow_tests/test_sources_fuzz.py

bench: $(VENV)/.installed
	$(BIN)/python bench/run_all.py

# The live differential against every openJiuwen release from PyPI (each in its own cached
# venv under ~/.cache/context-inspector/, installed on first use): fresh random cases.
parity-live: $(VENV)/.installed
	$(BIN)/python -m parity_live live

# re-record the re-run corpora (tests/data/rerun/, tests/data/standard_rerun/) from the real
# releases' cached environments
parity-rerun: $(VENV)/.installed
	$(BIN)/python -m parity_live.rerun_scenarios
	$(BIN)/python -m parity_live.standard_reruns

# A real jiuwenswarm 0.2.3 (its own cached venv under ~/.cache/context-inspector/) on
# 127.0.0.1 with a scripted model, driven until it compresses; several minutes
test-swarm: $(VENV)/.installed
	INSPECTOR_SWARM=1 $(BIN)/python -m pytest -q -s tests/integration

samples: $(VENV)/.installed
	$(BIN)/python -m tools.samples sample_dumps

clean:
	rm -rf $(VENV) build *.egg-info

# The HTML report in Debian's headless Chromium (installed here when missing): rendered
# regions, verdict and findings, no network request; a screenshot in bench/out/report.png.
test-browser: $(VENV)/.installed
	command -v chromium >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)
	$(BIN)/python -m pytest -q slow_tests/test_report_browser.py

# The wheel installed into a fresh venv outside the repository runs `inspector why` on its
# bundled samples with exact counting (builds the wheel; dependencies from the registry).
test-wheel: $(VENV)/.installed
	$(BIN)/python -m pytest -q slow_tests/test_wheel_install.py

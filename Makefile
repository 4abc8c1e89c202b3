# `make demo` and `make test` each create .venv when it is missing, install the package, and run.
# The install goes through uv (from PyPI, into .venv), which unpacks the wheels in parallel and
# leaves byte-compiling to first import: 9 s on a fresh machine against pip's 47 s
# (CHANGELOG.md). Where uv cannot be had or fails, pip installs instead.
# The tests go to the pytest-xdist workers in contiguous runs, and a worker that runs out takes
# tests from the end of the other's queue (--dist worksteal): a file's tests mostly share their
# module fixtures on one worker, the workers finish together, and a program that both compile
# comes from the run's compilation cache (tests/conftest.py).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install bench clean

PIP_INSTALL = ($(BIN)/python -m pip install --quiet uv && $(BIN)/uv pip install --quiet --python $(BIN)/python $(1)) \
	|| $(BIN)/python -m pip install --quiet $(1)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(call PIP_INSTALL,-e ".[test]")
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/regbayes demo --out demo_out

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -q -n auto --dist worksteal tests

bench: $(STAMP)
	$(call PIP_INSTALL,-e ".[bench]")
	$(BIN)/python benchmarks/bayes_svm.py

clean:
	rm -rf $(VENV) demo_out

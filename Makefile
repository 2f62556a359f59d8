# Two commands a newcomer needs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test lint typecheck unit bench clean venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

venv: $(BIN)/python

# Runs the main job on the bundled example and prints the release and its privacy cost.
demo: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[frame]"
	$(BIN)/dpcert example seed004

# Lint, strict type check, then the whole test suite (statistical tests included).
test: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev]"
	$(MAKE) lint typecheck unit

lint:
	$(BIN)/ruff check src tests benchmarks examples

typecheck:
	$(BIN)/mypy --strict src/dpcert

unit:
	$(BIN)/python -m pytest -n 2 -q $(PYTEST_ARGS) src/dpcert tests

bench: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache

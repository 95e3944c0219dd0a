# Every target creates what it needs (the virtualenv, the install), so it works on a fresh clone.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
CONSTRAINTS := constraints.txt

.PHONY: demo test test-fast lint typecheck check bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.runtime: $(BIN)/python pyproject.toml $(CONSTRAINTS)
	$(PIP) install -q -c $(CONSTRAINTS) -e .
	@touch $@

$(VENV)/.dev: $(VENV)/.runtime
	$(PIP) install -q -c $(CONSTRAINTS) -e '.[dev,embed,multilingual,code]'
	@touch $@

demo: $(VENV)/.runtime
	$(BIN)/recallbox demo

test: $(VENV)/.dev
	$(BIN)/python -m pytest

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests benchmarks

typecheck: $(VENV)/.dev
	$(BIN)/mypy

check: lint typecheck test

bench: $(VENV)/.dev
	$(BIN)/python benchmarks/thread_search.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# LoCoMo retrieval benchmark (README "Benchmark: LoCoMo retrieval"); the dataset is not shipped.
LOCOMO_DATA ?= ../shared/bench/locomo-dev.json
.PHONY: bench-locomo
bench-locomo: $(VENV)/.dev
	$(PIP) install -q -c $(CONSTRAINTS) -e '.[bench]'
	$(BIN)/python benchmarks/locomo.py --data $(LOCOMO_DATA)

# Cost vs history size (README "Benchmark: cost vs history size"); databases cached in SCALE_WORKDIR.
SCALE_WORKDIR ?= /tmp/recallbox-scale
.PHONY: bench-scale
bench-scale: $(VENV)/.dev
	$(PIP) install -q -c $(CONSTRAINTS) -e '.[bench]'
	$(BIN)/python benchmarks/scale.py --sizes 10000,100000 --workdir $(SCALE_WORKDIR)

# Formwork: one entry point for the common jobs. Every target installs what it needs into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help venv demo test lint format typecheck check bench clean

help:
	@echo "make demo       run the scripted conversation (in-process)"
	@echo "make test       run the test suite"
	@echo "make lint       ruff (lint + format check) and mypy strict"
	@echo "make check      lint, then test"
	@echo "make bench      print the surface's context cost"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m forms.examples.demo

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint test

bench: $(STAMP)
	$(BIN)/python -m bench.tool_surface

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

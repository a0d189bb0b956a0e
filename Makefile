# The two commands of the README:
#   make demo   set up (once) and run the whole workflow on the embedded demo
#   make test   set up (once) and run the test suite
# Set-up is a virtual environment in .venv with CPU PyTorch first (torch==2.13.0), then
# this package and its dependencies. Override the interpreter with PYTHON=python3.12.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= 2
# Rules call `python -m pipeline ...`, so the venv's python must come first on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: install demo test lint format clean-demo

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[ngrams,models,test,slurm]'
	touch $@

# KenLM's lmplz and build_binary (the kenlm rule); the script skips itself when they are built.
$(BIN)/lmplz: | $(VENV)/.installed
	workflow/scripts/install_kenlm.sh $(VENV)

install: $(VENV)/.installed $(BIN)/lmplz

demo: install
	$(BIN)/snakemake --workflow-profile workflow/profiles/default --cores $(CORES)

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/snakemake --lint
	$(BIN)/ruff check pipeline tests bench
	$(BIN)/ruff format --check pipeline tests bench
	$(BIN)/snakefmt --check Snakefile workflow/rules

format: install
	$(BIN)/ruff format pipeline tests bench
	$(BIN)/snakefmt Snakefile workflow/rules

clean-demo:
	rm -rf results/demo

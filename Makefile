# The two commands of the README:
#   make demo   set up (once) and run the whole workflow on the embedded demo
#   make test   set up (once) and run the test suite
# Set-up is a virtual environment in .venv: CPU PyTorch first (torch==2.13.0), then every other
# dependency at the version and hash pinned in requirements.lock (the versions CI tested), then
# this package itself without resolving again. Override the interpreter with PYTHON=python3.12.
#
#   make lock   re-resolve requirements.lock from pyproject.toml (its core dependencies and the
#               extras below) after a dependency there changed; pins that still satisfy
#               pyproject's ranges are kept. `make lock UPGRADE=1` moves every pin to the newest
#               version the ranges allow. Commit the lock with pyproject.toml.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= 2
# Rules call `python -m pipeline ...`, so the venv's python must come first on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

# The extras `make install` sets up; requirements.lock pins them and the core dependencies.
EXTRAS := ngrams,models,test,slurm
LOCK := requirements.lock
# torch is not in the lock (its CUDA builds would pull GBs): the CPU build goes in first, and
# the lock holds its dependencies as resolved against that build.
TORCH := 2.13.0
PIP := 26.3

.PHONY: install demo test lint format lock clean-demo sample-learning rehearsal gpu-acceptance gpu-bundle

# Last, the package's bytecode, once: where PYTHONDONTWRITEBYTECODE is set (CI's image sets it), every
# `python -m pipeline` job would otherwise compile the modules it imports again (0.2-0.8 CPU s a job).
$(VENV)/.installed: $(LOCK) pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet pip==$(PIP)
	$(BIN)/python -m pip install --quiet torch==$(TORCH)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	$(BIN)/python -m compileall -q pipeline
	touch $@

# KenLM's lmplz and build_binary (the kenlm rule); the script skips itself when they are built.
$(BIN)/lmplz: | $(VENV)/.installed
	workflow/scripts/install_kenlm.sh $(VENV)

install: $(VENV)/.installed $(BIN)/lmplz

demo: install
	$(BIN)/snakemake --workflow-profile workflow/profiles/default --cores $(CORES)

# Two workers (pytest-xdist), each test file whole on one of them: a file's module fixtures are built once,
# and its tests keep their order. The 25 slowest tests are listed at the end, so that CI's log says where its
# time went.
test: install
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=25

# The sample's classification with a budget that shows learning (workflow/config/sample-learning.yaml:
# SST-2 and MRPC, full passes at the papers' lr; about 90 minutes on 2 cores; needs the data root).
sample-learning: install
	$(BIN)/snakemake --workflow-profile workflow/profiles/default --cores $(CORES) \
	    --configfile workflow/config/sample.yaml workflow/config/sample-learning.yaml \
	    -- results/sample-learning/metrics/glue/minilm.json

# The dress rehearsal of the paper configs (docs/stages/rehearsal.md): each in miniature on CPU, every job
# kind once, downloads and hub models served on 127.0.0.1; needs the data root (DATA).
DATA ?= ../shared/data
PAPERS ?= workflow/config/paper-zh.yaml workflow/config/paper-en.yaml
rehearsal: install
	$(BIN)/python -m pipeline rehearsal $(foreach paper,$(PAPERS),--paper $(paper)) --data $(DATA) --cores $(CORES)

# The GPU acceptance run (docs/stages/acceptance.md, BENCHMARKS.md "GPU acceptance"): the pipeline's own stages on
# random-weight models of the papers' architectures, every row able to fail, in about 6 minutes on one H100; it
# writes its table to results/gpu-acceptance/DEVICE and, from a CUDA run with no failed row,
# pipeline/budget/acceptance.yaml, which the plan reads. DEVICE=cpu: tiny models of the same families, every row.
# On the lent GPU host (no network, its own Python 3.12 and PyTorch), make nothing: `make gpu-bundle` here, then
# the one command docs/stages/acceptance.md gives. CI runs it inside a simulation of that host (.ci/host_simulation.sh).
DEVICE ?= cuda
gpu-acceptance: $(VENV)/.installed
	$(BIN)/python -m pipeline gpu-acceptance --device $(DEVICE)

# What the GPU host is sent beside the tree (.gpu-bundle/, git-ignored): the run's input data, made here on CPU,
# and the Python 3.12 wheels of what it imports that the host lacks; prints the size against the host's 64 MiB.
gpu-bundle: $(VENV)/.installed
	$(BIN)/python -m pipeline gpu-bundle

lint: install
	$(BIN)/snakemake --lint
	$(BIN)/ruff check pipeline tests bench
	$(BIN)/ruff format --check pipeline tests bench
	$(BIN)/snakefmt --check Snakefile workflow/rules

format: install
	$(BIN)/ruff format pipeline tests bench
	$(BIN)/snakefmt Snakefile workflow/rules

# The lock is resolved with uv (in a venv of its own) for CPython 3.11 on x86-64 Linux, whatever
# machine runs it, against PyPI plus TORCH_WHEELS, where the CPU build torch==2.13.0+cpu is
# found: pip's find-links where set, PyTorch's CPU index otherwise.
UV_VERSION := 0.13.8
comma := ,
UV := $(VENV)/lock-tool/bin/uv
TORCH_WHEELS ?= $(or $(PIP_FIND_LINKS),https://download.pytorch.org/whl/cpu/torch/)
LOCK_ARGS := pyproject.toml $(addprefix --extra ,$(subst $(comma), ,$(EXTRAS))) --generate-hashes \
    --no-emit-package torch --python-version 3.11 --python-platform x86_64-manylinux_2_28

$(UV): Makefile
	$(PYTHON) -m venv $(VENV)/lock-tool
	$(VENV)/lock-tool/bin/python -m pip install --quiet uv==$(UV_VERSION)
	touch $@

lock: $(UV)
	echo 'torch==$(TORCH)+cpu' | $(UV) pip compile --quiet $(LOCK_ARGS) --constraint - \
	    $(addprefix --find-links ,$(TORCH_WHEELS)) $(if $(UPGRADE),--upgrade) --output-file $(LOCK) \
	    --custom-compile-command "make lock  [uv $(UV_VERSION) pip compile $(LOCK_ARGS), with torch==$(TORCH)+cpu]"

clean-demo:
	rm -rf results/demo

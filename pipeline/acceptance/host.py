"""The GPU host the acceptance run is lent, as it is, and the checks that start a run there (docs/stages/acceptance.md).

The host (issue 53): one H100 or H200, 16 cores, no network at all; Python 3.12 with PyTorch 2.11 (CUDA 13) and
the packages of :data:`HOST_HAS` pre-installed as its ``python3``; no make, no git; the working tree copied
there, at most 64 MiB with whatever is sent with it; results come back from one output folder only.

So the run carries what the host lacks (:mod:`pipeline.acceptance.gpu_bundle`: the input data made on CPU and the
wheels of every package the run imports that the host has not), installs those wheels itself with
``pip install --no-index --no-deps --target`` (:func:`install_wheels`), sets the hub libraries offline
(:data:`OFFLINE`), and checks, before any job starts, every import the run makes, CUDA, the GPU's free memory,
the disk and the time the run needs (:func:`preflight`), reporting every missing piece at once.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

# What the host's python3 holds (the device tool's KINDS.md, read 2026-11-17; versions from a session's pip list):
# the run may import these without carrying them. The CI simulation (.ci/host_simulation.sh) installs the versions
# of HOST_VERSIONS where PyPI has them for its interpreter (torch: the CPU build 2.13.0 stands in for 2.11 + CUDA 13).
HOST_PYTHON = "3.12"
HOST_VERSIONS = {  # the versions the run is written against (the list; the rest at whatever the image has)
    "torch": "2.11.0",
    "transformers": "5.17.0",
    "sentence-transformers": "6.0.1",
    "tokenizers": "0.23.2",
    "huggingface-hub": "1.33.0",
    "safetensors": "0.8.0",
    "numpy": "2.5.2",
    "accelerate": "1.15.0",
}
# Every distribution the host's image holds (KINDS.md, 2026-11-17), by its normalised name.
HOST_HAS = frozenset(
    """
    absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build certifi
    charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings cuda-core
    cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock
    flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx
    huggingface-hub humanize hypothesis idna imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin
    jaxlib jaxtyping jinja2 joblib kiwisolver lazy-loader lightning lightning-utilities linear-operator lineax
    llvmlite lxml markdown markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict
    multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro nvidia-cublas
    nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile
    nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-ml-py nvidia-nccl-cu13
    nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript opencv-python-headless optax
    opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec patsy peft pillow pip pluggy
    portalocker prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments pyparsing
    pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock pytest-timeout pytest-xdist
    python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors scikit-build-core scikit-image
    scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools shellingham simplejson six
    sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server tensorstore threadpoolctl
    tifffile tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics torchvision
    tqdm transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug
    wheel wrapt xarray xxhash yarl zipp
    """.split()  # noqa: SIM905 (a list literal of 180 names would take 180 lines)
)
# The rest of what the run imports from the host's image, at whatever version it holds (pinned by nothing here).
HOST_UNPINNED = (
    "pyarrow",
    "pyyaml",
    "scipy",
    "scikit-learn",
    "tensorboard",
    "pandas",
    "tqdm",
    "psutil",
    "regex",
    "attrs",
)
# Packages the host lacks (issue 53): the run must never import them; the bundle's data is made on CPU for this.
HOST_LACKS = ("polars", "blingfire", "jsonschema", "opencc", "jieba", "snakemake", "datasets")

# Every module the run imports, directly or in the jobs it starts: preflight imports each (so a missing one is
# found in seconds, not after the first model is built), and the bundle carries the distributions of those the
# host lacks (gpu_bundle.run_distributions).
RUN_MODULES = (
    "numpy",
    "yaml",
    "pyarrow.parquet",
    "jsonschema",
    "torch",
    "torch.distributed.run",
    "transformers",
    "tokenizers",
    "safetensors.torch",
    "sentence_transformers",
    "pipeline.pretrain.tiny_model",
    "pipeline.pretrain.tokenize",
    "pipeline.pretrain.pretrain",
    "pipeline.classify.classify",
    "pipeline.budget.memory",
    "pipeline.budget.workloads_file",
    "pipeline.acceptance.rows",
)
# The hub libraries never reach for the network (the host has none: a lookup would wait for its timeout).
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
PREFLIGHT_S = 30  # the bound: a failed start costs seconds, not the lease
GB = 1e9


def simulation_requirements(python_version: str, lock_pins: dict[str, str]) -> list[str]:
    """What the CI simulation of the host installs into a fresh venv (.ci/host_simulation.sh): the host's versions
    where PyPI has them for ``python_version``, with the CPU build torch 2.13.0 standing in for 2.11 + CUDA 13, and
    numpy at the lock's pin below Python 3.12 (numpy 2.5 needs 3.12)."""
    pins = dict(HOST_VERSIONS, torch="2.13.0")
    if tuple(map(int, python_version.split("."))) < (3, 12):
        pins["numpy"] = lock_pins["numpy"]
    return [f"{name}=={version}" for name, version in pins.items()] + list(HOST_UNPINNED)


def install_wheels(wheels: Path, target: Path) -> list[str]:
    """The bundle's wheels installed into ``target`` with ``pip --no-index --no-deps`` (nothing is fetched) and put
    first on this process's and its jobs' path; returns the problems (empty when it worked)."""
    found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if not found:
        return []
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile"]
    command += ["--disable-pip-version-check", "--upgrade", "--target", str(target), *map(str, found)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).split())[-300:]
        return [f"pip install --no-index of {len(found)} wheels from {wheels} failed: {tail}"]
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH", "")]))
    return []


def missing_imports() -> list[str]:
    """Every module of :data:`RUN_MODULES` that cannot be imported, each with its reason (all, not the first)."""
    problems = []
    for name in RUN_MODULES:
        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 (any failure to import is a finding to report)
            problems.append(f"import {name}: {type(error).__name__}: {' '.join(str(error).split())[:200]}")
    return problems


def preflight(device: str, work: Path, out: Path, need: dict, seconds_left: float) -> list[str]:
    """Everything that would stop the run, found at once, within :data:`PREFLIGHT_S`: imports, CUDA and the GPU's
    free memory (``need['gpu_gb']``), the disk under ``work`` (``need['disk_gb']``), the output folder, and the
    time (``need['seconds']`` against ``seconds_left``)."""
    started = time.monotonic()
    problems = missing_imports()
    if device == "cuda" and not any(p.startswith("import torch:") for p in problems):
        import torch

        if not torch.cuda.is_available():
            problems.append("CUDA: torch sees no CUDA device (--device cpu runs the CPU form)")
        else:
            free, total = torch.cuda.mem_get_info()
            if free < need["gpu_gb"] * GB:
                problems.append(
                    f"GPU memory: {free / GB:.1f} GB free of {total / GB:.1f} GB; the largest job needs "
                    f"{need['gpu_gb']:.1f} GB"
                )
    for folder, label in ((work, "work"), (out, "output")):
        problem = writable_folder(folder, label)
        if problem:
            problems.append(problem)
    if work.exists():
        free_disk = shutil.disk_usage(work).free
        if free_disk < need["disk_gb"] * GB:
            problems.append(f"disk: {free_disk / GB:.1f} GB free under {work}; the run writes {need['disk_gb']:.1f} GB")
    if need["seconds"] > seconds_left:
        problems.append(
            f"time: the run needs about {need['seconds']:.0f} s and has {seconds_left:.0f} s (--budget-s; "
            "--quick runs the short form)"
        )
    spent = time.monotonic() - started
    if spent > PREFLIGHT_S:
        problems.append(f"preflight took {spent:.0f} s, over its {PREFLIGHT_S} s")
    return problems


def writable_folder(folder: Path, label: str) -> str | None:
    """None where ``folder`` exists (or is made) as a plain folder this process can write; else the problem."""
    try:
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            return f"{label} folder {folder}: not a folder"
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".preflight-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        return f"{label} folder {folder}: not writable ({error.strerror or error})"
    return None

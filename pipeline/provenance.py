"""What made an output: code version, stage parameters, input checksums, libraries and hardware.

Every stage stores this dict in its Parquet metadata and its stats JSON, so any number in a
result table can be traced back to the run that made it, down to the library versions and the
CPU / GPU model it ran on (numbers from a GPU and a CPU run may differ in the last digits).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path

import pipeline


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """Package version plus the git commit of the checkout (``+dirty`` when modified)."""
    root = Path(pipeline.__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", "pipeline"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return pipeline.__version__
    return f"{pipeline.__version__}+g{commit}{'.dirty' if dirty else ''}"


def portable_path(path) -> str:
    """``path`` as provenance records it: relative to the working directory when it lies
    under it (Snakemake runs every job from the repository root), so that the same run in
    another folder writes byte-identical outputs; other paths as given."""
    path = Path(path)
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)
    return str(path)


def file_fingerprint(path) -> dict:
    """Size and modification-independent identity of an input file (SHA-256 of its bytes)."""
    path = Path(path)
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"path": portable_path(path), "bytes": path.stat().st_size, "sha256": digest.hexdigest()}


# The libraries whose versions can change a number in an output (distribution names).
LIBRARIES = (
    "torch",
    "transformers",
    "sentence-transformers",
    "tokenizers",
    "polars",
    "pyarrow",
    "numpy",
    "scikit-learn",
)


def library_versions() -> dict[str, str | None]:
    """Installed version of each of :data:`LIBRARIES` (``None`` where absent), without importing them."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpu_models() -> list[str]:
    """GPU names, asked of torch only where a stage has already imported it (a corpus stage never pays for it)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return []
    return [torch.cuda.get_device_name(index) for index in range(torch.cuda.device_count())]


def hardware() -> dict:
    return {"cpu": _cpu_model(), "cpus": os.cpu_count(), "gpus": _gpu_models(), "platform": platform.platform()}


def environment() -> dict:
    """Python, library versions and hardware of this process."""
    return {"python": platform.python_version(), "libraries": library_versions(), "hardware": hardware()}


def make(stage: str, params: dict, inputs: list | None = None, seed: int | None = None) -> dict:
    record = {"stage": stage, "code_version": code_version(), "params": params, "environment": environment()}
    if inputs is not None:
        record["inputs"] = inputs
    if seed is not None:
        record["seed"] = seed
    return record

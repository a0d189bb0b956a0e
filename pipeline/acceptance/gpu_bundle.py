"""Stage ``gpu-bundle``: what the GPU acceptance run carries to a host that has no network (docs/stages/acceptance.md).

    python -m pipeline gpu-bundle                         # .gpu-bundle/, for the host's Python 3.12
    python -m pipeline gpu-bundle --python-version 3.11   # for another interpreter (the CI simulation)

Made here, on CPU, in an ignored folder that travels with the working tree (the device tool's ``carry``):

- ``data/``: the acceptance's input data, made by the pipeline's own stages from the demo's English dump
  (``extract``, ``clean``, ``ngrams``, ``sample``: pipeline/acceptance/jobs.py ``make_data``) and the fine-tuning
  tasks (``make_glue``, ``make_chid``), so that blingfire and polars, which the host lacks, never run there;
- ``wheels/``: the manylinux wheels, for the target Python, of every distribution the run imports that the host
  lacks (pipeline/acceptance/host.py ``HOST_HAS``), at the versions requirements.lock pins, found by importing
  the run's modules (``host.RUN_MODULES``) here and mapping what they loaded to their distributions;
- ``BUNDLE.json``: what it holds, with the sizes.

It measures the working tree that travels (tracked and untracked, not ignored, files) plus the bundle, prints
both, and refuses (exit status 2) a total over the host's 64 MiB.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

from pipeline.acceptance import host
from pipeline.errors import InputError

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "requirements.lock"
LIMIT = 64 * 2**20  # what the device tool carries: the working tree and the carried paths together
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=REPO / ".gpu-bundle", help="default .gpu-bundle (git-ignored)")
    parser.add_argument("--python-version", default=host.HOST_PYTHON, help="the wheels' interpreter (default 3.12)")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def run_distributions() -> list[str]:
    """The distributions (normalised names) the run needs: those of the modules it imports (``host.RUN_MODULES``)
    and what they require (their metadata's ``Requires-Dist``, extras left out), not descending into what the host
    has, whose own requirements the host's image satisfies. Optional imports are left out (transformers imports
    ``datasets`` where it is installed: the host has none, and transformers runs without it)."""
    owners = importlib.metadata.packages_distributions()
    wanted = {normalise(d) for module in host.RUN_MODULES for d in owners.get(module.split(".")[0], ())}
    found, queue = set(), sorted(wanted - {"ulr-pipeline"})
    while queue:
        name = queue.pop()
        if name in found:
            continue
        found.add(name)
        if name in host.HOST_HAS:
            continue
        for requirement in importlib.metadata.requires(name) or []:
            if "extra ==" in requirement.replace("extra==", "extra =="):
                continue
            queue.append(normalise(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)[0]))
    return sorted(found)


def lock_pins(lock: Path = LOCK) -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)", lock.read_text(encoding="utf-8"), re.MULTILINE)
    return {normalise(name): version for name, version in pins}


def carried(distributions: list[str], pins: dict[str, str]) -> list[str]:
    """``name==version`` of each distribution the host lacks, at the lock's pin."""
    wanted = [d for d in distributions if d not in host.HOST_HAS]
    unpinned = [d for d in wanted if d not in pins]
    if unpinned:
        raise InputError(LOCK, f"the run imports {', '.join(unpinned)}, which the lock does not pin")
    return [f"{d}=={pins[d]}" for d in wanted]


def download(requirements: list[str], folder: Path, python_version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.whl"):
        old.unlink()
    if not requirements:
        return
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
    command += ["--python-version", python_version, "--implementation", "cp", "--dest", str(folder)]
    command += [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    done = subprocess.run([*command, *requirements], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InputError(folder, f"pip download failed: {' '.join(done.stderr.split())[-300:]}")


def tree_bytes() -> int:
    """The working tree that travels: tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        raise InputError(REPO, "git ls-files failed: the tree's size is measured in a git checkout")
    paths = {REPO / p.decode() for p in listed.stdout.split(b"\0") if p}
    return sum(p.stat().st_size for p in paths if p.is_file() and not p.is_symlink())


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def run(args: argparse.Namespace) -> None:
    from pipeline.acceptance import jobs

    out = args.out
    if out.exists() and not out.is_dir():
        raise InputError(out, "not a folder")
    if not re.fullmatch(r"3\.\d{1,2}", args.python_version):
        raise InputError("--python-version", f"expected 3.N, got {args.python_version!r}")
    data = jobs.make_data(out / "data")
    jobs.make_chid(jobs.make_glue(out / "data", data["sentences"]), data["sentences"])
    requirements = carried(run_distributions(), lock_pins())
    download(requirements, out / "wheels", args.python_version)
    wheels = sorted(p.name for p in (out / "wheels").glob("*.whl"))
    bundle = folder_bytes(out)
    tree = tree_bytes()
    manifest = {"python": args.python_version, "requirements": requirements, "wheels": wheels}
    manifest |= {"bundle_bytes": bundle, "tree_bytes": tree}
    (out / "BUNDLE.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    total = tree + bundle
    print(f"bundle {out}: {len(wheels)} wheels ({', '.join(requirements) or 'none'}) and the data")
    print(f"size: tree {tree / 2**20:.1f} MiB + bundle {bundle / 2**20:.1f} MiB = {total / 2**20:.1f} MiB of 64 MiB")
    if total > LIMIT:
        raise InputError(out, f"the tree and the bundle take {total / 2**20:.1f} MiB, over the host's 64 MiB")

"""Code style, run by `make test` (and so by CI): ruff check, and the formatters' checks.

The ``formatting`` tests run snakefmt --check on the Snakefile and workflow/rules/**/*.smk and
ruff format --check on the Python: format with `snakefmt Snakefile workflow/rules` and
`ruff format pipeline tests bench` (or `make format`). (`snakemake --lint` runs in
tests/test_workflow.py.)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import REPO

PYTHON_DIRS = ["pipeline", "tests", "bench"]
SNAKE_FILES = ["Snakefile", *sorted(str(p.relative_to(REPO)) for p in (REPO / "workflow" / "rules").rglob("*.smk"))]


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)


def test_ruff_check_is_clean():
    done = run(tool("ruff"), "check", *PYTHON_DIRS)
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.formatting
def test_python_is_ruff_formatted():
    done = run(tool("ruff"), "format", "--check", *PYTHON_DIRS)
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.formatting
def test_workflow_is_snakefmt_formatted():
    done = run(tool("snakefmt"), "--check", *SNAKE_FILES)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]

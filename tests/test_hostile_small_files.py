"""Every small file read as a small file (issue 47 §4; pipeline/small_files.py): a named pipe (FIFO) in
place of the models' lock, a snapshot's ``SNAPSHOT.json``, a model directory's ``.pipeline-files.json``,
the scoreboard's ``--tables`` or the measured-floor file (``workloads.yaml``) blocked its reader forever,
and a link to ``/dev/zero`` filled the memory. Each reader runs in a subprocess, under a timeout and a
1 GiB address-space limit, and must stop with one line naming the file, exit 2, nothing written."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import assert_clean_failure
from testdata import REPO

from pipeline.errors import InputError
from pipeline.small_files import read_small_text

COMMIT = "86b5e0934494bd15c9632b12f734a8a67f723594"
# A function of the pipeline run on one path, as the CLI runs a stage: one error line, exit 2.
CALL = """
import importlib, sys
from pipeline.errors import InputError
module, name, path = sys.argv[1:]
try:
    getattr(importlib.import_module(module), name)(path)
except InputError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
"""
# The plan (python -m pipeline plan), its measured-floor file moved to the path given.
PLAN_WITH = """
import sys
from pathlib import Path
from pipeline.budget import cost
from pipeline.cli import main
from pipeline.plan import plan
cost.WORKLOADS = plan.FILES["workloads.yaml"] = Path(sys.argv[1])
sys.exit(main(["plan", "--configfile", sys.argv[2], "--out", sys.argv[3]]))
"""
# The plan, its measured-tokens file (classify_tokens.yaml, written by measure-tokens) moved to the path given.
PLAN_WITH_TOKENS = """
import sys
from pathlib import Path
from pipeline.cli import main
from pipeline.plan import plan
plan.FILES["classify_tokens.yaml"] = Path(sys.argv[1])
sys.exit(main(["plan", "--configfile", sys.argv[2], "--out", sys.argv[3]]))
"""


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def run(argv: list, timeout: int = 30) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *map(str, argv)],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_limits,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def place(kind: str, path: Path) -> Path:
    """``path`` made a named pipe or a link to /dev/zero."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


def lock_case(kind, tmp):
    lock = place(kind, tmp / "paper.models.lock")
    out = tmp / "data" / "google" / "electra-base-discriminator@locked"
    argv = ["-m", "pipeline", "download-model", "--model", "hub:google/electra-base-discriminator"]
    return lock, tmp / "data", [*argv, "--out", out, "--lock", lock]


def snapshot_case(kind, tmp):
    out = tmp / "data" / f"org-name@{COMMIT}"
    record = place(kind, out / "SNAPSHOT.json")
    return record, None, ["-m", "pipeline", "download-model", "--model", f"hub:org/name@{COMMIT}", "--out", out]


def snapshot_check_case(kind, tmp):
    folder = tmp / "data" / "electra-base-discriminator@locked"
    record = place(kind, folder / "SNAPSHOT.json")
    return record, None, ["-c", CALL, "pipeline.models.hub_lock", "snapshot_commit", folder]


def files_record_case(kind, tmp):
    folder = tmp / "model"
    record = place(kind, folder / ".pipeline-files.json")
    return record, None, ["-c", CALL, "pipeline.models.directory", "model_dir_strangers", folder]


def tables_case(kind, tmp):
    from pipeline.workflow_config import resolve_config

    config = tmp / "config.json"
    demo = resolve_config(REPO / "workflow" / "config" / "demo.yaml")
    config.write_text(json.dumps(demo, default=str), encoding="utf-8")
    tables = place(kind, tmp / "tables.json")
    out = tmp / "board"
    return tables, out, ["-m", "pipeline", "scoreboard", "--tables", tables, "--config", config, "--out", out]


def workloads_case(kind, tmp):
    workloads = place(kind, tmp / "workloads.yaml")
    out = tmp / "plan.md"
    return workloads, out, ["-c", PLAN_WITH, workloads, REPO / "workflow" / "config" / "paper-en.yaml", out]


def tokens_case(kind, tmp):
    tokens = place(kind, tmp / "classify_tokens.yaml")
    out = tmp / "plan.md"
    return tokens, out, ["-c", PLAN_WITH_TOKENS, tokens, REPO / "workflow" / "config" / "paper-en.yaml", out]


READERS = {
    "models.lock (download-model --lock)": lock_case,
    "SNAPSHOT.json (download-model --out)": snapshot_case,
    "SNAPSHOT.json (the workflow's check of an @locked folder)": snapshot_check_case,
    ".pipeline-files.json (a model directory output)": files_record_case,
    "tables.json (scoreboard --tables)": tables_case,
    "workloads.yaml (python -m pipeline plan's measured floors)": workloads_case,
    "classify_tokens.yaml (python -m pipeline plan's measured tokens)": tokens_case,
}
KINDS = {"fifo": "named pipe (FIFO)", "dev-zero": "character device"}
CASES = [(reader, kind) for reader in READERS for kind in KINDS]


@pytest.mark.parametrize("reader, kind", CASES, ids=[f"{r}: {k}" for r, k in CASES])
def test_a_small_file_that_is_a_fifo_or_dev_zero_is_one_line(tmp_path, reader, kind):
    named, out, argv = READERS[reader](kind, tmp_path)
    done = run(argv)  # a reader that blocks on the FIFO fails here, by its timeout
    fragment = f"is a {KINDS[kind]}, not a regular file"
    assert_clean_failure(done.returncode, done.stderr, named, out or tmp_path / "nothing", fragment)


def test_a_file_past_its_limit_is_refused_without_reading_it_whole(tmp_path):
    big = tmp_path / "models.lock"
    with big.open("wb") as handle:
        handle.truncate(1 << 40)  # a sparse terabyte: reading it whole would take the memory
    with pytest.raises(InputError, match=r"larger than 1 MiB: too large for a lock"):
        read_small_text(big, 1 << 20, "a lock")
    (tmp_path / "small").write_text("commits\n", encoding="utf-8")
    assert read_small_text(tmp_path / "small", 8, "a lock") == "commits\n"
    with pytest.raises(InputError, match=r"larger than 7 bytes"):
        read_small_text(tmp_path / "small", 7, "a lock")
    assert read_small_text(tmp_path / "absent", 8, "a lock", missing=None) is None


def test_a_files_record_nested_past_the_parsers_depth_proves_nothing(tmp_path):
    """Issue 55 §3: a ``.pipeline-files.json`` of 200,000 nested brackets ended in a traceback (a recursion
    limit); it is a record that lists nothing, so the folder is refused in one line."""
    from pipeline.models.directory import FILES_RECORD, model_dir_strangers

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "thesis.txt").write_text("a year of work\n", encoding="utf-8")
    (folder / FILES_RECORD).write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(InputError, match="holds no list of the files the pipeline wrote"):
        model_dir_strangers(folder)
    assert (folder / "thesis.txt").read_text(encoding="utf-8") == "a year of work\n"

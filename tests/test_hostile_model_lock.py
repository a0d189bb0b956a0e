"""Hostile lock files of the hub models locked at first download (``download-model --lock``,
pipeline/models/hub_lock.py): each is one line naming the lock file, exit 2, nothing fetched or written,
the lock left as it was. No hub is reached: the lock is read before any request."""

from __future__ import annotations

import pytest
from hostile import assert_clean_failure

from pipeline.cli import main

SPEC = "hub:google/electra-base-discriminator"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("google/electra-base-discriminator: [unclosed\n", "not a YAML lock file"),
        ("- google/electra-base-discriminator\n", "maps ORG/NAME to a commit"),
        ("google/electra-base-discriminator: abc123\n", "not a full 40-character commit hash"),
        ("google/electra-base-discriminator: 0123456789ABCDEF0123456789ABCDEF01234567\n", "40-character commit"),
        ("../../etc: " + "a" * 40 + "\n", "not a hub repository id"),
        ("google/electra-base-discriminator: 1234567890123456789012345678901234567890123\n", "commit hash"),
    ],
)
def test_a_bad_lock_file_is_one_line_naming_it(tmp_path, capsys, text, fragment):
    lock = tmp_path / "paper.models.lock"
    lock.write_text(text, encoding="utf-8")
    out = tmp_path / "data" / "models" / "google" / "electra-base-discriminator@locked"
    status = main(["download-model", "--model", SPEC, "--out", str(out), "--lock", str(lock)])
    assert_clean_failure(status, capsys.readouterr().err, lock, tmp_path / "data", fragment)
    assert lock.read_text(encoding="utf-8") == text

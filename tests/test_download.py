"""The download stage: checked against a checksum, or refused; unverified only when asked."""

from __future__ import annotations

import hashlib
import logging

import pytest

from pipeline.download import download
from pipeline.errors import InputError


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "source.txt"
    path.write_text("the ppdb ||| line\n" * 100)
    return path


def test_a_matching_checksum_gives_the_file(source, tmp_path):
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    download(source.as_uri(), tmp_path / "out.txt", {"sha256": digest})
    assert (tmp_path / "out.txt").read_bytes() == source.read_bytes()


def test_a_wrong_checksum_leaves_nothing(source, tmp_path):
    with pytest.raises(InputError, match="sha256 mismatch"):
        download(source.as_uri(), tmp_path / "out.txt", {"sha256": "0" * 64})
    assert list(tmp_path.iterdir()) == [source]


def test_no_checksum_is_refused_unless_unverified(source, tmp_path, caplog):
    with pytest.raises(InputError, match="refusing to download without a checksum"):
        download(source.as_uri(), tmp_path / "out.txt", {})
    assert not (tmp_path / "out.txt").exists()
    with caplog.at_level(logging.WARNING, logger="pipeline.download"):
        download(source.as_uri(), tmp_path / "out.txt", {}, unverified=True)
    assert (tmp_path / "out.txt").read_bytes() == source.read_bytes()
    assert hashlib.sha256(source.read_bytes()).hexdigest() in caplog.text

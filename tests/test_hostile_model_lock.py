"""Hostile lock files of the hub models locked at first download (``download-model --lock``,
pipeline/models/hub_lock.py): each is one line naming the lock file, exit 2, nothing fetched or written,
the lock left as it was. No hub is reached: the lock is read before any request."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import assert_clean_failure, unwritable_folder

from pipeline import download_model
from pipeline.cli import main
from pipeline.errors import InputError

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
        # a model given twice: YAML keeps the last line silently
        (
            f"google/electra-base-discriminator: {'a' * 40}\n# later\ngoogle/electra-base-discriminator: {'b' * 40}\n",
            "google/electra-base-discriminator is given twice (lines 1 and 3): one commit per model",
        ),
        # the same model in another letter case: the hub's ids ignore it (issue 55 §2)
        (
            f"google/electra-base-discriminator: {'a' * 40}\nGoogle/Electra-Base-Discriminator: {'b' * 40}\n",
            "Google/Electra-Base-Discriminator is given twice (as google/electra-base-discriminator) (lines 1 and 2)",
        ),
    ],
)
def test_a_bad_lock_file_is_one_line_naming_it(tmp_path, capsys, text, fragment):
    lock = tmp_path / "paper.models.lock"
    lock.write_text(text, encoding="utf-8")
    out = tmp_path / "data" / "models" / "google" / "electra-base-discriminator@locked"
    status = main(["download-model", "--model", SPEC, "--out", str(out), "--lock", str(lock)])
    assert_clean_failure(status, capsys.readouterr().err, lock, tmp_path / "data", fragment)
    assert lock.read_text(encoding="utf-8") == text


class CountingHub:
    """A hub that answers the current commit of ``main`` and records every file asked of it."""

    def __init__(self):
        self.asked = []

    def model_info(self, repo_id, revision=None):
        self.asked.append(("model_info", repo_id))
        return type("Info", (), {"sha": "c" * 40})()

    def list_repo_files(self, repo_id, revision=None):
        self.asked.append(("list_repo_files", repo_id))
        return ["config.json", "model.safetensors"]

    def hf_hub_download(self, repo_id, filename, revision=None, local_dir=None):
        self.asked.append(("hf_hub_download", filename))
        target = Path(local_dir) / filename
        target.write_text("{}", encoding="utf-8")
        return str(target)


def test_a_lock_that_cannot_be_written_is_refused_before_anything_is_downloaded(tmp_path, capsys):
    """A first download whose commit cannot be recorded would leave a snapshot the workflow then refuses
    (its lock does not name the commit): the lock's folder is tried first, nothing is fetched."""
    lock = unwritable_folder(tmp_path) / "paper.models.lock"
    out = tmp_path / "data" / "models" / "google" / "electra-base-discriminator@locked"
    hub = CountingHub()
    with pytest.raises(InputError, match="cannot be written") as raised:
        download_model.fetch_locked(SPEC, out, lock, api=hub)
    assert hub.asked == [] and not (tmp_path / "data").exists()
    assert str(lock) in str(raised.value) and "nothing downloaded" in str(raised.value)
    status = main(["download-model", "--model", SPEC, "--out", str(out), "--lock", str(lock)])
    assert_clean_failure(status, capsys.readouterr().err, lock, tmp_path / "data", "not writable")
    assert not lock.exists()


def test_a_model_locked_in_one_letter_case_is_the_same_model_in_another(tmp_path):
    """Issue 55 §2: ``Google/...`` is ``google/...`` to the hub: its locked commit is found, and another commit
    is refused, not added beside it."""
    from pipeline.models import hub_lock

    lock = tmp_path / "paper.models.lock"
    hub_lock.record(lock, "google/electra-base-discriminator", "a" * 40)
    text = lock.read_text(encoding="utf-8")
    assert hub_lock.locked(hub_lock.read_lock(lock), "Google/ELECTRA-base-discriminator") == "a" * 40
    with pytest.raises(InputError, match="is locked to a{40}, not b{40}"):
        hub_lock.record(lock, "Google/electra-base-discriminator", "b" * 40)
    hub_lock.record(lock, "Google/electra-base-discriminator", "a" * 40)  # the same commit: nothing to add
    assert lock.read_text(encoding="utf-8") == text


def test_the_plan_refuses_one_hub_model_at_two_commits_under_two_letter_cases(tmp_path, capsys):
    from testdata import REPO

    text = (REPO / "workflow" / "config" / "paper-en.yaml").read_text(encoding="utf-8")
    pinned = "bert-base-uncased: hub:google-bert/bert-base-uncased@86b5e0934494bd15c9632b12f734a8a67f723594"
    assert pinned in text
    other = "    bert-base-upper: hub:Google-BERT/bert-base-uncased@" + "0" * 40
    config = tmp_path / "paper-en.yaml"
    config.write_text(text.replace(pinned, pinned + "\n" + other), encoding="utf-8")
    status = main(["plan", "--configfile", str(config)])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "are one hub model at two commits: one commit per model" in err, err

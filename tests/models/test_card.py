"""Model directories as ecosystem objects: card, pooler, sentence-transformers pooling, Hub export."""

from __future__ import annotations

import json

import pytest
import torch
import yaml
from safetensors.torch import load_file
from transformers import AutoModel

from pipeline.cli import build_parser, main
from pipeline.pretrain.pretrain import train


def card_metadata(directory):
    text = (directory / "README.md").read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1]), text


@pytest.fixture(scope="module")
def trained_cls(tokens_en, tiny_en, tmp_path_factory):
    out = tmp_path_factory.mktemp("card") / "tiny+misad"
    argv = [
        "pretrain",
        "--data",
        str(tokens_en),
        "--model",
        str(tiny_en),
        "--objective",
        "misad",
        "--out",
        str(out),
        "--max-steps",
        "2",
        "--batch-size",
        "8",
        "--misad-choice",
        "random",
        "--pooling",
        "cls",
    ]
    train(build_parser(argv).parse_args(argv))
    return out


def test_trained_model_has_a_card_with_hub_metadata(trained_cls):
    meta, text = card_metadata(trained_cls)
    assert meta["library_name"] == "sentence-transformers" and "misad" in meta["tags"]
    assert meta["license"] and meta["datasets"] == ["wikipedia"]
    assert "base_model" not in meta  # the run started from a local directory, not a Hub id
    assert "MiSAD" in text and "| total_steps | 2 |" in text and "@inproceedings{li-zhao-2021-pre" in text
    assert "# tiny+misad\n" in text and f'SentenceTransformer("{trained_cls.name}")' in text and ".tmp-" not in text
    provenance = json.loads((trained_cls / "pretrain_config.json").read_text())["provenance"]
    libraries = provenance["environment"]["libraries"]
    assert libraries["torch"] == torch.__version__ and libraries["polars"] and libraries["pyarrow"]
    assert provenance["environment"]["hardware"]["cpu"]
    assert f"torch {torch.__version__}" in text


def test_pooler_is_saved_and_loads_identically(trained_cls):
    state = load_file(trained_cls / "model.safetensors")
    assert {"bert.pooler.dense.weight", "bert.pooler.dense.bias"} <= set(state)
    first, info = AutoModel.from_pretrained(trained_cls, output_loading_info=True)
    assert not info["missing_keys"]
    second = AutoModel.from_pretrained(trained_cls)
    assert torch.equal(first.pooler.dense.weight, second.pooler.dense.weight)


def test_sentence_transformers_uses_the_trained_pooling(trained_cls):
    from sentence_transformers import SentenceTransformer

    assert json.loads((trained_cls / "config_sentence_transformers.json").read_text())["similarity_fn_name"] == "cosine"
    st = SentenceTransformer(str(trained_cls), device="cpu")
    texts = ["anarchism is a political philosophy", "the state"]
    encoder = AutoModel.from_pretrained(trained_cls).eval()
    batch = st.tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        cls = encoder(**batch).last_hidden_state[:, 0]
    assert torch.allclose(st.encode(texts, convert_to_tensor=True), cls, atol=1e-5)


def test_tiny_model_directory_is_completed_too(tiny_en):
    meta, text = card_metadata(tiny_en)
    assert "random" in text and meta["library_name"] == "sentence-transformers"
    assert (tiny_en / "modules.json").exists() and (tiny_en / "1_Pooling" / "config.json").exists()


def test_export_writes_the_run_results_into_the_card(trained_cls, tmp_path):
    metrics = tmp_path / "sts.json"
    metrics.write_text(
        json.dumps({"task": "sts", "model": {"name": "tiny+misad", "pooling": "cls"}, "metrics": {"avg": 12.345}})
    )
    out = tmp_path / "export"
    (trained_cls / "checkpoint").mkdir(exist_ok=True)  # a kept resume checkpoint never leaves the machine
    assert (
        main(
            [
                "export",
                "--model",
                str(trained_cls),
                "--repo-id",
                "someone/tiny-misad",
                "--metrics",
                str(metrics),
                "--base-model",
                "prajjwal1/bert-tiny",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    meta, text = card_metadata(out)
    assert meta["base_model"] == "prajjwal1/bert-tiny"
    result = meta["model-index"][0]
    assert result["name"] == "someone/tiny-misad" and result["results"][0]["metrics"][0]["value"] == 12.35
    assert 'SentenceTransformer("someone/tiny-misad")' in text
    assert not (out / "checkpoint").exists() and (out / "train_log.jsonl").exists()


def test_export_of_a_folder_that_is_no_model_fails_cleanly(tmp_path, capsys):
    (tmp_path / "m").mkdir()  # beside the output: an output inside the model is refused first (output_guard)
    assert main(["export", "--model", str(tmp_path / "m"), "--repo-id", "a/b", "--out", str(tmp_path / "x")]) == 2
    assert "not a model directory" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_pooler_comes_from_the_starting_checkpoint(tiny_en, tmp_path):
    """A checkpoint with a pooler (all-MiniLM-L6-v2 ships one) passes it on unchanged."""
    import shutil

    from pipeline.models.directory import save_pooler

    base = tmp_path / "base"
    shutil.copytree(tiny_en, base)
    encoder = AutoModel.from_pretrained(base)
    torch.nn.init.constant_(encoder.pooler.dense.bias, 0.25)
    encoder.save_pretrained(base)  # a bare encoder with a pooler, as the packaged MiniLM is
    trained = tmp_path / "trained"
    shutil.copytree(tiny_en, trained)
    state = load_file(trained / "model.safetensors")
    from safetensors.torch import save_file

    save_file(
        {k: v for k, v in state.items() if ".pooler." not in k},
        trained / "model.safetensors",
        metadata={"format": "pt"},
    )
    assert save_pooler(trained, base=str(base))
    assert torch.all(load_file(trained / "model.safetensors")["bert.pooler.dense.bias"] == 0.25)


def test_card_language_is_that_of_the_training_data(trained_cls, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline import contracts
    from pipeline.models.card import _language

    meta, _ = card_metadata(trained_cls)
    assert meta["language"] == ["en"]
    tokens_zh = tmp_path / "tokens.parquet"
    table = pa.table({"doc_id": [1]}).replace_schema_metadata(
        {contracts.PROVENANCE_KEY: json.dumps({"stage": "tokenize", "params": {"lang": "zh"}})}
    )
    pq.write_table(table, tokens_zh)
    assert _language({"data": str(tokens_zh)}) == "zh"


def test_a_fine_tuned_directory_gets_its_own_description(tiny_en, tmp_path):
    """Stages other than pretrain (finetune, classify) call complete_model_dir on their outputs too."""
    import shutil

    from pipeline.models.directory import complete_model_dir

    model = tmp_path / "tiny+nli"
    shutil.copytree(tiny_en, model)
    for generated in ("README.md", "tiny_model.json", "modules.json", "config_sentence_transformers.json"):
        (model / generated).unlink()
    (model / "finetune_config.json").write_text(
        json.dumps(
            {
                "model": str(tiny_en),
                "provenance": {
                    "code_version": "0.1.0",
                    "environment": {"libraries": {"torch": torch.__version__}, "hardware": {"cpu": "x"}},
                },
            }
        )
    )
    complete_model_dir(model)
    meta, text = card_metadata(model)
    assert meta["library_name"] == "sentence-transformers"
    assert "`finetune_config.json` holds its settings" in text and "randomly initialised" not in text
    assert (model / "modules.json").exists() and (model / "config_sentence_transformers.json").exists()

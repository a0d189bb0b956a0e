"""finetune-semeval on bad input: one line naming the file, exit 2, no metrics file (docs/behaviour.md)."""

from __future__ import annotations

import shutil

import pytest
from hostile import assert_clean_failure
from testdata import DEMO_DATA

TRAIN = "phrase_similarity/semeval2013_task5a/en.trainSet"


def _cut_instance(root):
    path = root / TRAIN
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))  # the last instance loses its label line
    return path, "four-line instances"


def _one_class(root):
    path = root / TRAIN
    lines = path.read_text().splitlines(keepends=True)
    kept = [line for k in range(0, len(lines), 4) if lines[k + 3].strip() == "1" for line in lines[k : k + 4]]
    path.write_text("".join(kept))
    return path, "needs both 0 and 1"


@pytest.mark.parametrize("damage", [_cut_instance, _one_class])
def test_a_bad_training_file_is_one_line(cli, capsys, tiny_model, tmp_path, damage):
    root = tmp_path / "data"
    shutil.copytree(DEMO_DATA / "phrase_similarity", root / "phrase_similarity")
    named, fragment = damage(root)
    out = tmp_path / "semeval5a" / "tiny.mean.json"
    status = cli("finetune-semeval", "--model", tiny_model, "--data", root, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, named, out, fragment)


def test_a_model_that_is_not_there_is_one_line(cli, capsys, tmp_path):
    out = tmp_path / "m.json"
    status = cli("finetune-semeval", "--model", tmp_path / "no-model", "--data", DEMO_DATA, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, tmp_path / "no-model", out)


# ------------------------------------------------------------------ --out is an input (issue 47 §1)
def _model_config(root, model):
    return model / "config.json", "lies inside the model"


def _training_file(root, model):
    return root / TRAIN, "lies inside the data root"


def _new_file_in_the_data_root(root, model):
    return root / "results" / "semeval5a.json", "lies inside the data root"


def _training_file_linked_from_elsewhere(root, model):
    outside = root.parent / "outside" / "en.trainSet"
    outside.parent.mkdir()
    shutil.move(root / TRAIN, outside)
    (root / TRAIN).symlink_to(outside)
    return outside, "an input of this fine-tuning"


@pytest.mark.parametrize(
    "make", [_model_config, _training_file, _new_file_in_the_data_root, _training_file_linked_from_elsewhere]
)
def test_an_out_that_is_an_input_is_refused_before_anything_is_written(cli, capsys, tiny_model, tmp_path, make):
    """``--out`` over the model's config.json, over the training file, into the data root: written, exit 0."""
    root, model = tmp_path / "data", tmp_path / "model"
    shutil.copytree(DEMO_DATA / "phrase_similarity", root / "phrase_similarity")
    shutil.copytree(tiny_model, model)
    out, fragment = make(root, model)
    before = out.read_bytes() if out.exists() else None
    status = cli("finetune-semeval", "--model", model, "--data", root, "--out", out, "--max-steps", 1)
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert status == 2 and len(errors) == 1 and errors[0].startswith(f"error: {out}: "), errors
    assert fragment in errors[0], errors[0]
    assert (out.read_bytes() if out.exists() else None) == before
    assert not out.parent.exists() or list(out.parent.glob(f".{out.name}.*")) == []

"""The finetune stage: heads per concatenation, a falling loss, the saved model, exact resume, bad input."""

from __future__ import annotations

import json

import pytest
import torch
from finetune_builders import NLI_DEV, NLI_TRAIN, PPDB
from safetensors.torch import load_file

from pipeline.cli import build_parser
from pipeline.finetune import encoder, recipes
from pipeline.finetune.finetune import train
from pipeline.finetune.twin_trainer import TrainingHalted


def args_for(*argv):
    argv = ["finetune", *map(str, argv)]
    return build_parser(argv).parse_args(argv)


def log_of(out):
    return [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]


@pytest.mark.parametrize(
    "concatenation, vectors",
    [("uv", 2), ("diff", 1), ("prod", 1), ("uv-diff", 3), ("uv-prod", 3), ("diff-prod", 2), ("uv-diff-prod", 4)],
)
def test_pair_features_and_head_shapes_for_every_concatenation(tiny_model, concatenation, vectors):
    model = encoder.build(str(tiny_model), dropout=0.0)
    dim = model.get_embedding_dimension()
    heads = recipes.losses("twin", ["nli", "pi", "ptc"], model, concatenation)
    first, second = ["a man is climbing", "the outcome of the work"], ["a person climbs", "the results"]
    features = [model.preprocess(first), model.preprocess(second)]
    u, v = (model(dict(f))["sentence_embedding"] for f in features)
    groups = ([u, v], [torch.abs(u - v)], [u * v])  # the paper's order: u, v, |u-v|, u*v
    expected = torch.cat(
        [t for flag, parts in zip(recipes.CONCATENATIONS[concatenation], groups) if flag for t in parts], dim=1
    )
    assert expected.shape == (2, vectors * dim)
    for task, classes in (("nli", 3), ("pi", 2), ("ptc", 3)):
        head = heads[task].classifier
        assert (head.in_features, head.out_features) == (vectors * dim, classes)
        _, logits = heads[task]([dict(f) for f in features], labels=None)
        assert logits.shape == (2, classes)
        assert torch.allclose(logits, head(expected), atol=1e-5)
    assert len({id(loss.classifier) for loss in heads.values()}) == 3  # one head per task


def test_a_pair_step_encodes_both_sentences_in_one_pass_with_the_library_s_loss(tiny_model):
    """The pair loss runs the encoder once per step (2 x batch sequences, padded to the longer sentence)
    where sentence-transformers' SoftmaxLoss runs it per sentence; with dropout off the loss and the
    encoder's gradients are the library's (BENCHMARKS "GPU budget": a Siamese step is launch-bound)."""
    from sentence_transformers.sentence_transformer.losses import SoftmaxLoss

    model = encoder.build(str(tiny_model), dropout=0.0)
    ours = recipes.losses("twin", ["nli"], model, "uv-diff")["nli"]
    library = SoftmaxLoss(model, model.get_embedding_dimension(), 3)
    library.classifier.load_state_dict(ours.classifier.state_dict())
    first = ["a man is climbing a very tall rock wall", "the outcome", "two dogs run"]
    second = ["a person climbs", "the results of the work were published", "animals"]
    labels = torch.tensor([0, 1, 2])
    passes = []
    hook = model[0].register_forward_hook(lambda module, inputs, output: passes.append(1))
    results = {}
    for name, loss in (("ours", ours), ("library", library)):
        model.zero_grad()
        passes.clear()
        value = loss([model.preprocess(first), model.preprocess(second)], labels)
        value.backward()
        grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        results[name] = (value.item(), grads, len(passes))
    hook.remove()
    assert results["ours"][2] == 1 and results["library"][2] == 2
    assert results["ours"][0] == pytest.approx(results["library"][0], abs=1e-6)
    assert len(results["ours"][1]) == len(results["library"][1])
    for mine, theirs in zip(results["ours"][1], results["library"][1]):
        assert torch.allclose(mine, theirs, atol=1e-6)


def test_twin_loss_falls_on_a_small_overfit_run(tiny_model, tmp_path):
    out = tmp_path / "overfit"
    train(
        args_for(
            "--model",
            tiny_model,
            "--recipe",
            "twin",
            "--nli",
            NLI_TRAIN,
            "--ppdb",
            PPDB,
            "--out",
            out,
            "--max-steps",
            120,
            "--batch-size",
            8,
            "--lr",
            3e-3,
            "--warmup",
            0.05,
            "--dropout",
            0.0,
        )
    )
    log = log_of(out)
    assert [e["task"] for e in log[:8]] == ["nli", "pi", "nli", "ptc"] * 2
    for task in ("nli", "pi", "ptc"):
        losses = [e["loss"] for e in log if e["task"] == task]
        assert len(losses) == {"nli": 60, "pi": 30, "ptc": 30}[task]
        assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5 - 0.1, task


def test_saved_model_loads_and_embeds_as_the_trained_encoder(tiny_model, tmp_path, monkeypatch):
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel

    from pipeline.finetune import twin_trainer

    trained = {}
    original = twin_trainer.TwinTrainer.train

    def keep(self, *a, **k):
        result = original(self, *a, **k)
        trained["model"] = self.model
        return result

    monkeypatch.setattr(twin_trainer.TwinTrainer, "train", keep)
    out = tmp_path / "model"
    train(
        args_for(
            "--model",
            tiny_model,
            "--recipe",
            "sbert-nli",
            "--nli",
            NLI_TRAIN,
            "--nli",
            NLI_DEV,
            "--out",
            out,
            "--max-steps",
            6,
            "--batch-size",
            8,
            "--lr",
            1e-3,
        )
    )
    assert not (tmp_path / ".model.work").exists()
    texts = ["A man is climbing a rock wall.", "different parts of the world", "growth"]
    at_end = trained["model"].eval().encode(texts, convert_to_tensor=True)
    loaded = SentenceTransformer(str(out), device="cpu")
    assert torch.allclose(loaded.encode(texts, convert_to_tensor=True), at_end, atol=1e-6)
    assert not torch.allclose(
        SentenceTransformer(str(tiny_model), device="cpu").encode(texts, convert_to_tensor=True), at_end, atol=1e-3
    )  # training changed it
    plain = AutoModel.from_pretrained(out).eval()
    batch = loaded.tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = plain(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    assert torch.allclose((hidden * mask).sum(1) / mask.sum(1), at_end, atol=1e-5)
    config = json.loads((out / "finetune_config.json").read_text())
    assert config["recipe"] == "sbert-nli" and config["data"]["nli_pairs"] == 72 and config["warmup_steps"] == 1
    assert config["provenance"]["seed"] == 0 and len(config["provenance"]["inputs"]) == 2
    assert [e["step"] for e in log_of(out)] == list(range(1, 7))
    assert set(torch.load(out / "heads.pt")["nli"]) == {"classifier.weight", "classifier.bias"}


def test_interrupted_and_resumed_run_ends_with_the_same_weights(tiny_model, tmp_path):
    def run(out, **extra):
        return args_for(
            "--model",
            tiny_model,
            "--recipe",
            "twin",
            "--nli",
            NLI_TRAIN,
            "--ppdb",
            PPDB,
            "--out",
            out,
            "--max-steps",
            9,
            "--batch-size",
            8,
            "--lr",
            1e-3,
            "--save-every",
            4,
            "--resume",
        )

    whole = tmp_path / "whole"
    train(run(whole))
    halted = tmp_path / "halted"
    with pytest.raises(TrainingHalted):
        train(run(halted), halt_after=6)
    assert not halted.exists() and (tmp_path / ".halted.work" / "checkpoint-4").is_dir()
    train(run(halted))
    a, b = load_file(whole / "model.safetensors"), load_file(halted / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    heads_a, heads_b = torch.load(whole / "heads.pt"), torch.load(halted / "heads.pt")
    assert all(torch.equal(heads_a[t][k], heads_b[t][k]) for t in heads_a for k in heads_a[t])
    assert [e["step"] for e in log_of(halted)] == list(range(1, 10))
    assert [e["loss"] for e in log_of(halted)] == [e["loss"] for e in log_of(whole)]


def test_nli_mnrl_trains_on_triplets(tiny_model, tmp_path):
    out = tmp_path / "mnrl"
    train(
        args_for(
            "--model",
            tiny_model,
            "--recipe",
            "nli-mnrl",
            "--nli",
            NLI_TRAIN,
            "--out",
            out,
            "--max-steps",
            3,
            "--batch-size",
            4,
        )
    )
    config = json.loads((out / "finetune_config.json").read_text())
    assert config["data"]["examples"] == {"nli": 19}  # 20 premises with both, one entailment pair lost to '-'
    assert len(log_of(out)) == 3


@pytest.mark.parametrize("problem", ["missing nli", "mislabelled nli", "ppdb fields"])
def test_bad_input_one_line_exit_2_and_no_model(tiny_model, tmp_path, problem):
    import subprocess
    import sys

    nli, ppdb_path = NLI_TRAIN, PPDB
    where = None
    if problem == "missing nli":
        nli = tmp_path / "snli_1.0_train.jsonl"
    elif problem == "mislabelled nli":
        nli = tmp_path / "snli_1.0_train.jsonl"
        lines = NLI_TRAIN.read_text().splitlines()
        lines[4] = (
            lines[4].replace('"gold_label": "neutral"', '"gold_label": "neutrall"')
            if '"gold_label": "neutral"' in lines[4]
            else lines[4].replace('"gold_label": "', '"gold_label": "x')
        )
        nli.write_text("\n".join(lines) + "\n")
        where = "line 5"
    else:
        ppdb_path = tmp_path / "ppdb-2.0-s-phrasal"
        lines = PPDB.read_text().splitlines()
        lines[9] = lines[9].replace(" ||| ", " || ", 1)
        ppdb_path.write_text("\n".join(lines) + "\n")
        where = "line 10"
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "finetune",
            "--model",
            str(tiny_model),
            "--recipe",
            "twin",
            "--nli",
            str(nli),
            "--ppdb",
            str(ppdb_path),
            "--max-steps",
            "2",
            "--batch-size",
            "4",
            "--seed",
            "0",
            "--out",
            str(out),
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ") and "Traceback" not in done.stderr
    bad = nli if problem != "ppdb fields" else ppdb_path
    assert str(bad) in lines[-1] and (where is None or f"({where})" in lines[-1])
    assert not out.exists() and not list(tmp_path.glob(".out*"))


def test_torchrun_with_two_processes_and_checkpoints(tiny_model, tmp_path):
    """finetune under torchrun, saving checkpoints as the workflow does (--save-every): every rank leaves
    train() before rank 0 removes the work folder. Found by the paper-en rehearsal: rank 1 read
    checkpoint-4/README.md after rank 0 had deleted it (docs/stages/rehearsal.md)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "ddp"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "-m", "pipeline",
               "finetune", "--model", str(tiny_model), "--recipe", "nli-mnrl", "--nli", str(NLI_TRAIN),
               "--max-steps", "4", "--batch-size", "2", "--save-every", "2", "--resume", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(repo)}
    result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    config = json.loads((out / "finetune_config.json").read_text())
    assert config["world_size"] == 2 and config["effective_batch_size"] == 4
    assert not (tmp_path / ".ddp.work").exists()

"""The pretrain stage: outputs, a falling loss, exact resume, new MLM heads, bad input, DDP."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from pretrain_builders import TINY_SIZE
from safetensors.torch import load_file
from testdata import minilm_path
from transformers import AutoModel

from pipeline.cli import build_parser
from pipeline.models.loading import NewHeadWarning
from pipeline.models.runtime import World
from pipeline.pretrain.pretrain import TrainingHalted, epoch_batches, train

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def args_for(*argv):
    argv = ["pretrain", *map(str, argv)]
    return build_parser(argv).parse_args(argv)


def log_of(out):
    return [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]


def test_mlm_loss_falls_on_a_small_overfit_run(tokens_en, tiny_en, tmp_path):
    out = tmp_path / "overfit"
    train(
        args_for(
            "--data",
            tokens_en,
            "--model",
            tiny_en,
            "--objective",
            "burt",
            "--out",
            out,
            "--max-steps",
            60,
            "--batch-size",
            32,
            "--lr",
            3e-3,
            "--warmup",
            0.05,
            "--dropout",
            0.0,
        )
    )
    losses = [entry["mlm"] for entry in log_of(out)]
    assert len(losses) == 60
    assert sum(losses[-10:]) / 10 < sum(losses[:5]) / 5 - 0.5


def test_outputs_load_with_auto_model_and_sentence_transformers(tokens_en, tiny_en, tmp_path, caplog):
    from sentence_transformers import SentenceTransformer

    out = tmp_path / "misad"
    caplog.set_level("INFO", logger="pipeline.pretrain")
    train(
        args_for(
            "--data",
            tokens_en,
            "--model",
            tiny_en,
            "--objective",
            "misad",
            "--out",
            out,
            "--max-steps",
            3,
            "--batch-size",
            8,
            "--misad-choice",
            "mlm-score",
        )
    )
    assert not (tmp_path / ".misad.work").exists()
    log = log_of(out)
    assert [e["step"] for e in log] == [1, 2, 3]
    assert all(
        {"loss", "mlm", "misad", "lr", "tokens", "tokens_per_s", "step_seconds", "mask_rate"} <= set(e) for e in log
    )
    assert all(e["loss"] == pytest.approx(e["mlm"] + e["misad"], rel=1e-5) for e in log)
    assert [e["lr"] for e in log] == pytest.approx([0.0, 5e-5, 2.5e-5])  # the rate each step used (1 warm-up step)
    stats = json.loads((out / "stats.json").read_text())["masking"]
    assert stats["counts"]["rows"] == 24 and stats["counts"]["misad_rows"] == 24
    assert 0.05 < stats["mask_rate"] < 0.25 and stats["masked_share"] == {"token": 1.0}
    progress = [r.message for r in caplog.records if r.message.startswith("done: 3 steps in ")]
    assert progress and "/s)" in progress[0] and ", loss " in progress[0]  # the progress line: steps, rate, last loss
    assert any(r.message.startswith("masking: mask rate") for r in caplog.records)
    config = json.loads((out / "pretrain_config.json").read_text())
    assert config["objective"] == "misad" and config["total_steps"] == 3 and config["warmup_steps"] == 1
    assert config["provenance"]["inputs"][0]["path"] == str(tokens_en) and config["provenance"]["seed"] == 0
    encoder = AutoModel.from_pretrained(out).eval()
    st = SentenceTransformer(str(out), device="cpu")
    texts = ["anarchism is a political philosophy", "the state system"]
    embedded = st.encode(texts, convert_to_tensor=True)
    batch = st.tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = encoder(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1)
    assert torch.allclose(embedded, (hidden * mask).sum(1) / mask.sum(1), atol=1e-5)


@pytest.mark.parametrize("objective", ["misad", "sop"])
def test_interrupted_and_resumed_run_ends_with_the_same_weights(objective, tokens_en, tiny_en, tmp_path):
    common = [
        "--data",
        tokens_en,
        "--model",
        tiny_en,
        "--objective",
        objective,
        "--max-steps",
        6,
        "--batch-size",
        8,
        "--grad-accum",
        2,
        "--save-every",
        2,
        "--lr",
        1e-3,
    ]
    straight = tmp_path / "straight"
    train(args_for(*common, "--out", straight))
    resumed = tmp_path / "resumed"
    with pytest.raises(TrainingHalted):
        train(args_for(*common, "--out", resumed), halt_after=3)  # killed after step 3, checkpoint at 2
    assert not resumed.exists() and (tmp_path / ".resumed.work" / "checkpoint" / "state.pt").exists()
    train(args_for(*common, "--out", resumed, "--resume"))
    a, b = load_file(straight / "model.safetensors"), load_file(resumed / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    strip = [{k: v for k, v in e.items() if k not in ("tokens_per_s", "step_seconds")} for e in log_of(straight)]
    assert strip == [{k: v for k, v in e.items() if k not in ("tokens_per_s", "step_seconds")} for e in log_of(resumed)]
    assert "pair_head" not in " ".join(a)  # the SOP classifier is not exported


def test_resume_with_other_settings_is_refused_and_restart_starts_afresh(tokens_en, tiny_en, tmp_path, cli, capsys):
    common = [
        "--data",
        tokens_en,
        "--model",
        tiny_en,
        "--objective",
        "mlm",
        "--max-steps",
        4,
        "--batch-size",
        8,
        "--save-every",
        1,
    ]
    with pytest.raises(TrainingHalted):  # --resume with nothing to resume from starts a fresh run
        train(args_for(*common, "--out", tmp_path / "m", "--resume"), halt_after=2)
    checkpoint = tmp_path / ".m.work" / "checkpoint" / "state.pt"
    before = checkpoint.read_bytes()
    assert cli("pretrain", *common, "--out", tmp_path / "m", "--resume", "--lr", 1e-4, "--seed", 3) == 2
    error = capsys.readouterr().err
    assert "lr: checkpoint 5e-05, now 0.0001" in error and "seed: checkpoint 0, now 3" in error
    assert "--restart" in error.splitlines()[-1] and "Traceback" not in error  # one line, no traceback
    assert checkpoint.read_bytes() == before and not (tmp_path / "m").exists()  # nothing lost
    train(args_for(*common, "--out", tmp_path / "m", "--resume", "--restart", "--lr", 1e-4))
    train(args_for(*common, "--out", tmp_path / "fresh", "--lr", 1e-4))
    a, b = load_file(tmp_path / "m" / "model.safetensors"), load_file(tmp_path / "fresh" / "model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)  # the same as a run that never had a checkpoint


def test_checkpoint_without_mlm_head_gets_a_new_one_with_a_warning(marked_en, tmp_path, cli):
    minilm = minilm_path()
    tokens = tmp_path / "tokens.parquet"
    assert (
        cli("tokenize", "--marked", marked_en, "--model", minilm, "--lang", "en", "--max-length", 32, "--out", tokens)
        == 0
    )
    out = tmp_path / "minilm-mlm"
    with pytest.warns(NewHeadWarning, match="no MLM head"):
        train(
            args_for(
                "--data",
                tokens,
                "--model",
                minilm,
                "--objective",
                "wwm",
                "--out",
                out,
                "--max-steps",
                1,
                "--batch-size",
                4,
            )
        )
    assert json.loads((out / "pretrain_config.json").read_text())["new_mlm_head"] is True
    assert AutoModel.from_pretrained(out).config.hidden_size == 384


def test_data_from_another_tokenizer_is_refused(tokens_en, albert_en, tmp_path, cli, capsys):
    status = cli("pretrain", "--data", tokens_en, "--model", albert_en, "--objective", "mlm", "--out", tmp_path / "x")
    assert status == 2 and "another vocabulary" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_torchrun_with_two_processes(tokens_en, tiny_en, dataset_en, tmp_path):
    out = tmp_path / "ddp"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        "-m",
        "pipeline",
        "pretrain",
        "--data",
        str(tokens_en),
        "--model",
        str(tiny_en),
        "--objective",
        "burt",
        "--max-steps",
        "3",
        "--batch-size",
        "4",
        "--keep-checkpoint",
        "--out",
        str(out),
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": REPO}
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    config = json.loads((out / "pretrain_config.json").read_text())
    assert config["world_size"] == 2 and config["effective_batch_size"] == 8
    log = log_of(out)
    assert len(log) == 3
    # tokens: the sum over both processes' batches of each step
    lengths = dataset_en.lengths()
    batches = [epoch_batches(len(lengths), 0, 0, 4, World(rank, 2), lengths) for rank in (0, 1)]  # grouped
    assert [e["tokens"] for e in log] == [
        int(lengths[batches[0][s]].sum() + lengths[batches[1][s]].sum()) for s in range(3)
    ]
    # dropout: each process drew from its own stream (same draws, different seeds: different states)
    states = [torch.load(out / "checkpoint" / f"rng-{rank}.pt", weights_only=False)["torch"] for rank in (0, 1)]
    assert not torch.equal(states[0], states[1])
    stats = json.loads((out / "stats.json").read_text())["masking"]
    assert stats["counts"]["rows"] == 24  # both processes' masks, gathered


def test_inputs_longer_than_the_model_positions_are_refused(tokens_en, marked_en, tmp_path, cli, capsys):
    short = tmp_path / "short"
    assert (
        cli(
            "tiny-model",
            "--sentences",
            marked_en,
            "--lang",
            "en",
            "--out",
            short,
            *TINY_SIZE,
            "--max-length",
            "32",
        )
        == 0
    )
    tokens = tmp_path / "tokens.parquet"
    assert (
        cli("tokenize", "--marked", marked_en, "--model", short, "--lang", "en", "--max-length", "64", "--out", tokens)
        == 0
    )
    assert cli("pretrain", "--data", tokens, "--model", short, "--objective", "mlm", "--out", tmp_path / "x") == 2
    assert "--max-length 32" in capsys.readouterr().err


def test_token_shards_in_any_order_give_the_same_run(marked_en, tiny_en, tmp_path, cli):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from pretrain_builders import write_marked

    marked = pq.read_table(marked_en)
    shards = []
    for k in range(2):  # two sample shards, by document, as the sample stage writes them
        part = marked.filter(pc.equal(pc.bit_wise_and(marked["doc_id"], 1), k))
        write_marked(tmp_path / f"marked-{k}.parquet", part.to_pylist())
        shards.append(tmp_path / "tokens" / f"shard-00{k}.parquet")
        assert (
            cli(
                "tokenize",
                "--marked",
                tmp_path / f"marked-{k}.parquet",
                "--model",
                tiny_en,
                "--lang",
                "en",
                "--max-length",
                64,
                "--out",
                shards[-1],
            )
            == 0
        )
    common = ["--model", tiny_en, "--objective", "burt", "--max-steps", 2, "--batch-size", 8]
    train(args_for("--data", *shards, *common, "--out", tmp_path / "ab"))
    train(args_for("--data", *reversed(shards), *common, "--out", tmp_path / "ba"))
    train(args_for("--data", tmp_path / "tokens", *common, "--out", tmp_path / "dir"))  # a folder of shards
    runs = [load_file(tmp_path / name / "model.safetensors") for name in ("ab", "ba", "dir")]
    assert all(torch.equal(runs[0][k], other[k]) for other in runs[1:] for k in runs[0])
    config = json.loads((tmp_path / "ba" / "pretrain_config.json").read_text())
    assert [i["path"] for i in config["provenance"]["inputs"]] == [str(s) for s in shards]
    assert config["examples"] == marked.num_rows


def test_compiled_model_trains_like_the_eager_one_and_saves_the_same_keys(tokens_en, tiny_en, tmp_path):
    """--compile (TorchInductor; on CPU it generates C++ kernels) changes speed, not the model: the same
    losses up to floating-point reordering, and an export without torch.compile's wrapper names."""
    common = ["--data", tokens_en, "--model", tiny_en, "--objective", "mlm", "--max-steps", 4, "--batch-size", 16]
    train(args_for(*common, "--out", tmp_path / "eager", "--dropout", 0.0))
    train(args_for(*common, "--out", tmp_path / "compiled", "--dropout", 0.0, "--compile"))
    eager, compiled = log_of(tmp_path / "eager"), log_of(tmp_path / "compiled")
    assert [e["mlm"] for e in compiled] == pytest.approx([e["mlm"] for e in eager], rel=1e-3)
    a, b = load_file(tmp_path / "eager" / "model.safetensors"), load_file(tmp_path / "compiled" / "model.safetensors")
    assert a.keys() == b.keys() and not any("_orig_mod" in key for key in b)
    config = json.loads((tmp_path / "compiled" / "pretrain_config.json").read_text())
    assert config["compile"] is True and config["attention"] == "sdpa"  # the tiny BERT has SDPA attention

"""Live curves of pretrain (pipeline/tracking.py): every step-log line is also a TensorBoard scalar."""

from __future__ import annotations

import json

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from pipeline.cli import build_parser
from pipeline.pretrain.pretrain import train


def test_the_step_log_is_mirrored_to_tensorboard(tokens_en, tiny_en, tmp_path, monkeypatch):
    monkeypatch.delenv("ULR_REPORT_TO", raising=False)
    out, board = tmp_path / "model", tmp_path / "tb"
    argv = ["pretrain", "--data", str(tokens_en), "--model", str(tiny_en), "--objective", "mlm", "--out", str(out)]
    argv += [
        "--max-steps",
        "6",
        "--batch-size",
        "8",
        "--heldout",
        "8",
        "--eval-every",
        "3",
        "--tracking-dir",
        str(board),
    ]
    train(build_parser(argv).parse_args(argv))
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    events = EventAccumulator(str(board))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"loss", "lr", "tokens_per_s", "heldout_token_acc", "heldout_token_loss"} <= tags
    assert [e.step for e in events.Scalars("loss")] == [entry["step"] for entry in log if "loss" in entry]
    assert [round(e.value, 5) for e in events.Scalars("loss")] == [
        round(entry["loss"], 5) for entry in log if "loss" in entry
    ]
    config = json.loads((out / "pretrain_config.json").read_text())
    assert "tracking_dir" not in json.dumps(config)  # where curves go changes no result

"""The training-curves figure of a model's train_log.jsonl."""

from __future__ import annotations

import json

from pipeline.cli import main
from pipeline.report.training_curves import panels, read_log, series

# Two steps of a MiSAD run's log, as the pretrain stage writes it.
ENTRIES = [
    {
        "step": 1,
        "epoch": 0,
        "lr": 5e-05,
        "loss": 7.1,
        "mlm": 7.09,
        "misad": 0.0021,
        "tokens": 812,
        "tokens_per_s": 1510.2,
    },
    {
        "step": 2,
        "epoch": 0,
        "lr": 2.5e-05,
        "loss": 6.8,
        "mlm": 6.79,
        "misad": 0.0019,
        "tokens": 790,
        "tokens_per_s": 1622.0,
    },
]


def write_log(path, entries=ENTRIES):
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def test_one_panel_per_loss_term_then_lr_and_throughput(tmp_path):
    entries = read_log(write_log(tmp_path / "train_log.jsonl"))
    found = series(entries)
    assert found["misad"] == [(1, 0.0021), (2, 0.0019)] and "tokens" not in found and "step" not in found
    assert [name for name, _ in panels(found)] == ["total loss", "mlm loss", "misad loss", "learning rate", "tokens/s"]
    mlm_only = series([{k: v for k, v in e.items() if k != "misad"} for e in entries])
    assert [name for name, _ in panels(mlm_only)] == ["mlm loss", "learning rate", "tokens/s"]


def test_figure_is_written(tmp_path):
    out = tmp_path / "curves" / "tiny+misad.png"
    assert main(["training-curves", "--log", str(write_log(tmp_path / "train_log.jsonl")), "--out", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_broken_log_names_the_line(tmp_path, capsys):
    path = tmp_path / "train_log.jsonl"
    path.write_text(json.dumps(ENTRIES[0]) + "\n{not json\n")
    assert main(["training-curves", "--log", str(path), "--out", str(tmp_path / "x.png")]) == 2
    assert "line 2" in capsys.readouterr().err and not (tmp_path / "x.png").exists()

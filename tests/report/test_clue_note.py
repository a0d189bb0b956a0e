"""The CLUE table's note on stand-in data comes from the runs' own substitutes, never from a fixed string."""

from __future__ import annotations

import json
from pathlib import Path


def clue_summary(path: Path, name: str, notes: list[str] | None) -> Path:
    """A classify-summary file for CLUE (TNEWS only), as the stage writes it; ``notes`` its substitutes."""
    record = {
        "task": "clue",
        "model": {"name": name, "path": f"models/{name}", "kind": "classifier", "pooling": None},
        "tasks": {
            "tnews": {
                "metric": "acc",
                "batch_size": 16,
                "seeds": [0, 1],
                "search": {"batch16-lr2e-05-epochs3-len128": 56.0},
                "dev": {"acc": {"mean": 56.0, "std": 1.0, "max": 57.0, "min": 55.0}},
            }
        },
        "avg": {"mean": 56.0, "columns": ["tnews"]},
        "geogranno": None,
        "provenance": {"stage": "classify-summary"},
    }
    if notes is not None:
        record["notes"] = notes
    path.write_text(json.dumps(record))
    return path


def test_a_run_on_the_release_gets_no_stand_in_note(cli, tmp_path):
    summary = clue_summary(tmp_path / "release.json", "bert-base-chinese", None)
    assert cli("tables", "--metrics", summary, "--out", tmp_path / "t") == 0
    text = (tmp_path / "t/clue.md").read_text()
    assert "| bert-base-chinese |" in text
    assert "FewCLUE" not in text and "tiny BERT" not in text and "stand in" not in text


def test_a_runs_substitute_is_the_note(cli, tmp_path):
    note = "TNEWS train from chinese/fewclue/tnews/train_few_all.json, a substitute for the benchmark's own release"
    summary = clue_summary(tmp_path / "few.json", "tiny-zh", [note])
    assert cli("tables", "--metrics", summary, "--out", tmp_path / "t") == 0
    text = (tmp_path / "t/clue.md").read_text()
    assert f"- tiny-zh: {note}" in text and "tiny BERT" not in text

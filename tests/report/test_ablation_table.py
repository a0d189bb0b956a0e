"""BURT twin Table 4 from twin runs: the paper's blocks, the default run in each, sts + wordsim files in one row."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.report import metrics_files, tables
from pipeline.report.ablation_table import ablation_facets

FIXTURES = Path(__file__).resolve().parents[1] / "report" / "fixtures"
DEFAULTS = {"recipe": "twin", "objectives": "nli+pi+ptc", "pooling": "mean", "concatenation": "uv-diff", "negatives": 3}


def run_files(tmp_path, name: str, settings: dict, shift: float) -> list[Path]:
    """A fine-tuned model directory (its finetune_config.json, as the stage writes it) and its sts / wordsim files."""
    model = tmp_path / "finetune" / name
    model.mkdir(parents=True)
    (model / "finetune_config.json").write_text(json.dumps({**DEFAULTS, **settings}))
    files = []
    for task in ("sts", "wordsim"):
        data = json.loads((FIXTURES / f"{task}_minilm.json").read_text())
        data["model"] = {
            **data["model"],
            "name": name,
            "path": str(model),
            "pooling": {**DEFAULTS, **settings}["pooling"],
        }
        data["scores"] = {key: value + shift for key, value in data["scores"].items()}
        path = tmp_path / f"{task}.{name}.json"
        path.write_text(json.dumps(data))
        files.append(path)
    return files


def test_facets_of_a_run():
    assert ablation_facets(DEFAULTS) == [
        "Objectives: NLI+PI+PTC",
        "Pooling: MEAN",
        "Concatenation: [u; v; |u−v|]",
        "Negative sampling: k = 3",
    ]
    assert ablation_facets({**DEFAULTS, "negatives": 7}) == ["Negative sampling: k = 7"]
    assert ablation_facets({**DEFAULTS, "negatives": 7, "pooling": "cls"}) == []


def test_ablation_table_in_the_papers_shape(tmp_path):
    files = (
        run_files(tmp_path, "bert+twin.k1", {"negatives": 1}, 1.0)
        + run_files(tmp_path, "bert+twin", {}, 0.0)
        + run_files(tmp_path, "bert+twin.cls", {"pooling": "cls"}, -1.0)
        + run_files(tmp_path, "bert+twin.nli", {"objectives": "nli"}, 2.0)
        + run_files(tmp_path, "bert+sbert-nli", {"recipe": "sbert-nli"}, 0.0)
    )
    built = tables.build_tables([metrics_files.load(p) for p in files], with_published=False)
    table = next(t for t in built if t.spec.name == "ablation")
    assert [(row.label, row.facet) for row in table.rows] == [
        ("bert+twin.nli", "Objectives: NLI"),
        ("bert+twin", "Objectives: NLI+PI+PTC"),
        ("bert+twin.cls", "Pooling: CLS"),
        ("bert+twin", "Pooling: MEAN"),
        ("bert+twin", "Concatenation: [u; v; |u−v|]"),
        ("bert+twin.k1", "Negative sampling: k = 1"),
        ("bert+twin", "Negative sampling: k = 3"),
    ]
    default = table.rows[1].cells
    assert default["sts_star"] == (72.37 + 80.6 + 75.59 + 85.39 + 78.99) / 5
    assert (default["stsb"], default["sickr"], default["simlex"], default["men"]) == (82.03, 77.58, 45.04, 79.15)
    assert default["scws"] is None and default["avg"] is None  # SCWS is not in the data: no word average
    assert table.rows[0].cells["stsb"] == 84.03 and table.rows[0].pooling == "mean"
    assert table.rows[2].pooling == "cls" and len(table.rows[1].trace["merged"]) == 1  # sts + wordsim files
    with_paper = next(
        t for t in tables.build_tables([metrics_files.load(p) for p in files]) if t.spec.name == "ablation"
    )
    assert len(with_paper.rows) == 7 + 18

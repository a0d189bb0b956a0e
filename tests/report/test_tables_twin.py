"""BURT twin Tables 2 and 3 from several tasks' metrics files: the phrase columns (ppdb, semeval5a),
SCWS, and the trained STS-B / SICK-R regression of the transfer harness merged into one row per
model; cells stay empty where a task's file is absent.

``fixtures/transfer_minilm.json`` is the contract the Table 2 reader relies on: a ``transfer``
metrics file (``python -m pipeline evaluate transfer``) whose ``tasks`` map ``STS-B`` / ``SICK-R`` to
``{"pearson": ..., "spearman": ...}``; the table reads the Spearman.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
LABEL = "all-MiniLM-L6-v2"


def fixture(name: str) -> Path:
    return FIXTURES / f"{name}.json"


@pytest.fixture
def make_tables(cli, tmp_path):
    def make(*inputs, out="tables"):
        paths = [i if isinstance(i, Path) else fixture(i) for i in inputs]
        assert cli("tables", "--metrics", *paths, "--out", tmp_path / out) == 0
        return tmp_path / out

    return make


def md_rows(path: Path, label: str) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith(f"| {label} |")]


def test_table_3_merges_the_phrase_tasks_and_scws(make_tables):
    out = make_tables("wordsim_minilm", "ppdb_minilm", "semeval5a_minilm", "scws_minilm")
    # PPDB 51.27, SemEval accuracy 76.35 (half up: 76.4), SCWS 61.04;
    # Avg. = (45.04 + 82.55 + 72.95 + 79.15 + 61.04) / 5 = 68.146
    assert md_rows(out / "wordsim.md", LABEL) == [
        f"| {LABEL} | mean | 51.3 | 76.4 | 45.0 | 82.6 | 73.0 | 79.2 | 61.0 | 68.1 |"
    ]
    header = (out / "wordsim.csv").read_text().splitlines()[0]
    assert "Phrases PPDB (human labels)" in header and "Phrases SemEval 5(a) (Y&D)" in header


def test_absent_task_files_leave_cells_empty(make_tables):
    out = make_tables("wordsim_minilm", "ppdb_minilm")  # no semeval5a, no scws (SCWS absent here)
    assert md_rows(out / "wordsim.md", LABEL) == [f"| {LABEL} | mean | 51.3 | – | 45.0 | 82.6 | 73.0 | 79.2 | – | – |"]


def test_a_model_with_only_a_merged_task_gets_its_own_row(make_tables):
    out = make_tables("semeval5a_minilm")
    assert md_rows(out / "wordsim.md", LABEL) == [f"| {LABEL} | mean | – | 76.4 | – | – | – | – | – | – |"]
    index = json.loads((out / "tables.json").read_text())["tables"]["wordsim"]
    row = index["rows"][0]
    assert row["source"]["metrics_file"].endswith("semeval5a_minilm.json") and row["source"]["task"] == "semeval5a"
    assert index["merged_tasks"] == ["ppdb", "semeval5a", "scws"]


def test_table_3_traces_every_merged_file(make_tables):
    out = make_tables("wordsim_minilm", "ppdb_minilm", "semeval5a_minilm", "scws_minilm")
    row = json.loads((out / "tables.json").read_text())["tables"]["wordsim"]["rows"][0]
    assert row["source"]["metrics_file"].endswith("wordsim_minilm.json")
    merged = {item["task"]: item for item in row["source"]["merged"]}
    assert set(merged) == {"ppdb", "semeval5a", "scws"}
    assert merged["ppdb"]["metrics_file"].endswith("ppdb_minilm.json") and merged["ppdb"]["columns"] == ["ppdb"]
    assert merged["semeval5a"]["seed"] == 0 and merged["scws"]["code_version"] == "0.1.0+gabc123def456"
    assert row["cells"]["semeval"] == 76.35 and row["cells"]["avg"] == pytest.approx(68.146)


def test_table_2_takes_sts_b_and_sick_r_from_the_trained_regression(make_tables):
    out = make_tables("sts_minilm", "transfer_minilm")
    # STS12-16 by cosine (72.37, 80.6, 75.59, 85.39, 78.99), STS-B 83.46 and SICK-R 80.55 (Spearman) from the
    # transfer file; Avg. = 556.95 / 7 = 79.564
    assert md_rows(out / "sts_senteval.md", LABEL) == [
        f"| {LABEL} | mean | 72.4 | 80.6 | 75.6 | 85.4 | 79.0 | 83.5 | 80.6 | 79.6 |"
    ]
    # the cosine table keeps its own STS-B / SICK-R
    assert md_rows(out / "sts.md", LABEL) == [
        f"| {LABEL} | mean | 72.4 | 80.6 | 75.6 | 85.4 | 79.0 | 82.0 | 77.6 | 78.9 |"
    ]
    published = [
        line for line in (out / "sts_senteval.md").read_text().splitlines() if line.startswith("| published: BURT ")
    ]
    assert published == [
        ("| published: BURT (BURT twin, Table 2) | mean | 69.9 | 73.7 | 72.8 | 78.5 | 73.6 | 84.3 | 84.8 | 76.8 |")
    ]


def test_table_2_without_the_regression_leaves_its_cells_empty(make_tables, tmp_path):
    out = make_tables("sts_minilm")
    assert md_rows(out / "sts_senteval.md", LABEL) == [
        f"| {LABEL} | mean | 72.4 | 80.6 | 75.6 | 85.4 | 79.0 | – | – | – |"
    ]
    other = json.loads(fixture("transfer_minilm").read_text())
    other["tasks"] = {"MR": {"acc": 77.0}}  # a transfer run without the regression tasks
    path = tmp_path / "transfer_other.json"
    path.write_text(json.dumps(other))
    out = make_tables("sts_minilm", path, out="other")
    assert md_rows(out / "sts_senteval.md", LABEL) == [
        f"| {LABEL} | mean | 72.4 | 80.6 | 75.6 | 85.4 | 79.0 | – | – | – |"
    ]


def test_two_files_of_a_merged_task_for_one_model_are_refused(cli, tmp_path, capsys):
    copy = tmp_path / "ppdb_again.json"
    copy.write_text(fixture("ppdb_minilm").read_text())
    status = cli("tables", "--metrics", fixture("ppdb_minilm"), copy, "--out", tmp_path / "out")
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "ppdb_again.json" in err[0] and "already has ppdb numbers" in err[0]
    assert not (tmp_path / "out").exists()


def test_a_non_number_in_a_merged_file_names_the_key(cli, tmp_path, capsys):
    bad = json.loads(fixture("semeval5a_minilm").read_text())
    bad["accuracy"] = "76%"
    path = tmp_path / "semeval_bad.json"
    path.write_text(json.dumps(bad))
    assert cli("tables", "--metrics", path, "--out", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "semeval_bad.json" in err and "'accuracy' must be a number or null" in err
    assert not (tmp_path / "out").exists()

"""Stage ``tables``: the papers' result tables from metrics JSONs (fixtures in ``fixtures/``,
written in the format of ``python -m pipeline evaluate``), with the papers' published rows."""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline.errors import InputError
from pipeline.leftovers import _HOST
from pipeline.report import assemble, published, tables
from pipeline.report.table_specs import TABLE_NAMES, TABLES
from pipeline.tasks.geogranno import (
    LENGTH_DIFFERENCE_BUCKETS,
    QUERY_LENGTH_BUCKETS,
    ascii_label,
    canonical_bucket,
    length_difference_buckets,
    query_length_bucket,
)

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
ALL = [
    "analogy_minilm",
    "analogy_word2vec",
    "sts_minilm",
    "wordsim_minilm",
    "geogranno_minilm",
    "geogranno_bm25",
    "faq_minilm",
]


def fixture(name: str) -> Path:
    return FIXTURES / f"{name}.json"


@pytest.fixture
def make_tables(cli, tmp_path):
    """Run the stage on the named fixtures (or paths); returns the output directory."""

    def make(*inputs, extra=(), out="tables"):
        paths = [i if isinstance(i, Path) else fixture(i) for i in inputs]
        assert cli("tables", "--metrics", *paths, "--out", tmp_path / out, *extra) == 0
        return tmp_path / out

    return make


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def csv_rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def md_row(path: Path, label: str) -> str:
    return next(line for line in lines(path) if line.startswith(f"| {label} |"))


def test_every_table_is_written_in_every_format(make_tables):
    out = make_tables(*ALL)
    expected = {f"{name}.{fmt}" for name in TABLE_NAMES for fmt in tables.FORMATS} | {"tables.json"}
    assert {p.name for p in out.iterdir()} == expected


def test_every_table_of_the_registry_has_one_caption():
    """The report shows each table with its caption (workflow/rules/report.smk); the names are the registry's."""
    assert len(set(TABLE_NAMES)) == len(TABLE_NAMES) == len(TABLES)
    captions = {path.stem.removeprefix("table_") for path in (REPO / "workflow/report").glob("table_*.rst")}
    assert captions == set(TABLE_NAMES)


def _paper_tokens(path: Path) -> list[str]:
    # "GloVe:0.94" (BURT Table VII) is a name and a number
    tokens = [t.lstrip("+") for t in re.split(r"[\s/:]+", path.read_text(encoding="utf-8")) if t]
    return [f"0{t}" if re.fullmatch(r"\.\d+", t) else t for t in tokens]  # paper 004 prints ".68" for 0.68


def test_every_published_number_is_in_the_paper_text(data_root):
    """Each published row's printed numbers occur, in order, within one row's span of its paper."""
    papers = data_root.parent / "papers"
    if not papers.is_dir():
        pytest.skip(f"paper texts not found at {papers}")
    data = published._load(published.PUBLISHED)
    checked = 0
    for spec in TABLES:
        for row in published.rows_for(spec):
            paper = next(p for p in data["papers"].values() if p["short"] == row.source["paper"])
            tokens = _paper_tokens(papers / paper["file"])
            wanted = [
                assemble.format_number(row.cells[c.key], c.decimals).lstrip("+")
                for c in spec.columns
                if row.cells[c.key] is not None
            ]
            # room for the paper's own extra cells (ALBURT Table 8's Std.); ULR Table 9 prints a row in two blocks
            # BURT Table VII and ALBURT Table 5 print a model's scores one candidate line apart
            width = len(wanted) + (30 if row.source["table"] == "Table 9" else 4)
            width += 60 if row.source["source_id"] in ("burt_t7", "alburt_t5") else 0
            assert any(_in_order(wanted, tokens[i : i + width]) for i, t in enumerate(tokens) if t == wanted[0]), (
                f"{row.label}: {wanted} not found in {paper['file']}"
            )
            checked += 1
    # a source may feed several tables (twin Table 2: sts and sts_senteval; ULR Table 8: two tables)
    uses = {source: sum(source in spec.published for spec in TABLES) for source in data["sources"]}
    assert (
        checked == sum(len(s["rows"]) * uses[name] for name, s in data["sources"].items()) == 194 + 28 + 6
    )  # + paper 004 Tables 2 and 3, + BURT Table VII and ALBURT Table 5


def _in_order(wanted: list[str], window: list[str]) -> bool:
    position = 0
    for token in window:
        if position < len(wanted) and token == wanted[position]:
            position += 1
    return position == len(wanted)


def test_sts_and_wordsim_cells(make_tables, tmp_path):
    out = make_tables("sts_minilm", "wordsim_minilm")
    # avg = (72.37 + 80.6 + 75.59 + 85.39 + 78.99 + 82.03 + 77.58) / 7 = 78.9357… → 78.9
    assert md_row(out / "sts.md", "all-MiniLM-L6-v2") == (
        "| all-MiniLM-L6-v2 | mean | 72.4 | 80.6 | 75.6 | 85.4 | 79.0 | 82.0 | 77.6 | 78.9 |"
    )
    # no PPDB, SemEval, SCWS in the file: empty cells, and no Avg. (it needs all five word sets)
    assert md_row(out / "wordsim.md", "all-MiniLM-L6-v2") == (
        "| all-MiniLM-L6-v2 | mean | – | – | 45.0 | 82.6 | 73.0 | 79.2 | – | – |"
    )
    with_scws = json.loads(fixture("wordsim_minilm").read_text())
    with_scws["scores"]["SCWS"] = 60.0
    with_scws["model"]["name"] = "with SCWS"
    path = tmp_path / "wordsim_scws.json"
    path.write_text(json.dumps(with_scws))
    out = make_tables(path, out="scws")
    # (45.04 + 82.55 + 72.95 + 79.15 + 60.0) / 5 = 67.938 → 67.9
    assert md_row(out / "wordsim.md", "with SCWS").endswith("| 79.2 | 60.0 | 67.9 |")


def test_geogranno_tables_one_row_per_split(make_tables):
    out = make_tables("geogranno_minilm", "geogranno_bm25")
    # the files' keys are sorted (all, dev, train); the table puts the paper's split "all" first
    rows = [r[:3] for r in csv_rows(out / "geogranno.csv")[1:4]]
    assert rows == [
        ["all-MiniLM-L6-v2", "mean", "all"],
        ["all-MiniLM-L6-v2", "mean", "train"],
        ["all-MiniLM-L6-v2", "mean", "dev"],
    ]
    assert csv_rows(out / "geogranno.csv")[1] == ["all-MiniLM-L6-v2", "mean", "all", "43.3", "72.5", "81.7"]
    assert csv_rows(out / "geogranno.csv")[4] == ["BM25", "", "all", "30.6", "60.8", "74.3"]
    assert md_row(out / "geogranno_baselines.md", "BM25") == "| BM25 | – | all | 30.6/60.8/74.3 | – |"
    assert csv_rows(out / "geogranno_baselines.csv")[0] == [
        "Model",
        "Pooling",
        "Split",
        "GEOGRANNO Top-1",
        "GEOGRANNO Top-5",
        "GEOGRANNO Top-10",
        "GLUE dev",
        "GLUE dev std",
    ]
    # the harness's ASCII bucket labels ("1-6", ">=2") land under the paper's; a null top10 is empty
    by_length = [r for r in csv_rows(out / "geogranno_by_length.csv") if r[0] == "all-MiniLM-L6-v2"]
    assert by_length == [
        ["all-MiniLM-L6-v2", "mean", "all", "89.5", "80.0", "76.6", "81.7", "", "73.0"],
        ["all-MiniLM-L6-v2", "mean", "train", "88.5", "79.3", "75.0", "80.1", "77.2", "71.1"],
        ["all-MiniLM-L6-v2", "mean", "dev", "100.0", "", "", "", "", ""],
    ]
    assert md_row(out / "geogranno_by_length.md", "BM25") == "| BM25 | – | all | 75.3 | – | – | 74.3 | – | – |"
    header = lines(out / "geogranno_by_length.md")[2]
    assert header == (
        "| Model | Pooling | Split | \\|q\\| 1~6 | \\|q\\| 7~8 | \\|q\\| 9~15 | abs(\\|q\\| - \\|Q\\|) ≥ 0 "
        "| abs(\\|q\\| - \\|Q\\|) ≥ 2 | abs(\\|q\\| - \\|Q\\|) ≥ 3 |"
    )
    tex = (out / "geogranno_by_length.tex").read_text()
    assert r"\multicolumn{3}{c}{abs(\textbar{}q\textbar{} - \textbar{}Q\textbar{})}" in tex
    assert r"$\geq$ 0 & $\geq$ 2 & $\geq$ 3 \\" in tex


def test_table_8_glue_dev_average_beside_geogranno_at_every_pooling(make_tables, tmp_path):
    """ULR-BERT Table 8 prints a base model's GEOGRANNO (train-dev set) beside its GLUE dev average: the model's
    GLUE summary (classify-summary, no pooling: a fine-tuned classifier) fills the train-dev row of each
    pooling GEOGRANNO was scored with, as mean ± std over its seeds' averages, and the row's trace keeps the
    GLUE seeds apart from GEOGRANNO's single evaluation."""
    from pipeline.classify.classify_summary import seed_average
    from pipeline.classify.metrics import spread

    paths = []
    for pooling in ("mean", "cls"):
        data = json.loads(fixture("geogranno_minilm").read_text())
        data["model"] |= {"name": "albert-base-v2", "pooling": pooling}
        paths.append(tmp_path / f"geogranno-{pooling}.json")
        paths[-1].write_text(json.dumps(data))
    per_seed = {"cola": [55.0, 58.0, 54.0], "rte": [66.0, 67.0, 65.0]}  # seeds 1, 2, 3: averages 60.5, 62.5, 59.5
    tasks = {
        task: {
            "metric": "acc",
            "seeds": [1, 2, 3],
            "per_seed": {str(seed): {"dev": score} for seed, score in zip((1, 2, 3), scores)},
            "dev": {"acc": spread(scores)},
        }
        for task, scores in per_seed.items()
    }
    summary = {
        "task": "glue",
        "model": {"name": "albert-base-v2", "path": "models/albert-base-v2", "kind": "classifier", "pooling": None},
        "tasks": tasks,
        "avg": seed_average(tasks),
        "geogranno": None,
        "provenance": {"stage": "classify-summary", "seed": [1, 2, 3]},
    }
    paths.append(tmp_path / "glue-albert.json")
    paths[-1].write_text(json.dumps(summary))
    out = make_tables(*paths)
    rows = [r for r in csv_rows(out / "geogranno_baselines.csv") if r[0] == "albert-base-v2"]
    assert [(r[1], r[2], r[6], r[7]) for r in rows] == [
        ("mean", "all", "60.8", "1.5"),  # std of 60.5, 62.5, 59.5
        ("mean", "train", "", ""),
        ("mean", "dev", "", ""),
        ("cls", "all", "60.8", "1.5"),
        ("cls", "train", "", ""),
        ("cls", "dev", "", ""),
    ]
    assert (
        md_row(out / "geogranno_baselines.md", "albert-base-v2")
        == "| albert-base-v2 | mean | all | 43.3/72.5/81.7 | 60.8 ± 1.5 |"
    )
    index = json.loads((out / "tables.json").read_text())["tables"]["geogranno_baselines"]["rows"]
    first = index[0]["source"]
    assert first["seed"] == 0 and first["metrics_file"].endswith("geogranno-mean.json")
    (merged,) = first["merged"]
    assert (
        merged["task"] == "glue" and merged["columns"] == ["glue_dev", "glue_dev_std"] and merged["seed"] == [1, 2, 3]
    )


def test_faq_mrr_on_the_papers_scale(make_tables, tmp_path):
    out = make_tables("faq_minilm")
    # the file's keys are sorted (AFQMC, BQ, BUSTM); the table keeps one fixed order, average last
    assert [r for r in csv_rows(out / "faq.csv") if r[0] == "all-MiniLM-L6-v2"] == [
        ["all-MiniLM-L6-v2", "mean", "BQ", "61.3", "0.708"],  # 61.25 → 61.3; 70.8125 % → 0.708
        ["all-MiniLM-L6-v2", "mean", "AFQMC", "55.5", "0.640"],
        ["all-MiniLM-L6-v2", "mean", "BUSTM", "80.0", "0.872"],  # 87.15 % → 0.8715 → 0.872 (half up, in decimal)
        ["all-MiniLM-L6-v2", "mean", "Avg.", "65.6", "0.740"],  # (61.25 + 55.5 + 80) / 3; MRR 74.0008… %
    ]
    as_dict = json.loads(fixture("faq_minilm").read_text())
    as_dict["avg"] = {"acc1": 50.0, "mrr": 62.5}
    del as_dict["avg_mrr"]
    path = tmp_path / "faq_dict.json"
    path.write_text(json.dumps(as_dict))
    out = make_tables(path, out="dict")
    assert [r for r in csv_rows(out / "faq.csv") if r[2] == "Avg."] == [
        ["all-MiniLM-L6-v2", "mean", "Avg.", "50.0", "0.625"]
    ]


def test_gain_over_a_baseline_row(make_tables):
    out = make_tables("analogy_word2vec", "analogy_minilm", extra=("--gain-over", "word2vec (demo)"))
    # 47.1666… − 30.0 = 17.1666… → 17.2; the baseline's own Gain stays empty
    assert md_row(out / "analogy.md", "all-MiniLM-L6-v2").endswith("| 47.2 | 17.2 |")
    assert md_row(out / "analogy.md", "word2vec (demo)").endswith("| 30.0 | – |")


def test_gain_over_an_unknown_model_warns(make_tables, caplog):
    out = make_tables("analogy_minilm", extra=("--gain-over", "BERT"))
    assert md_row(out / "analogy.md", "all-MiniLM-L6-v2").endswith("| 47.2 | – |")
    assert "analogy: no run named 'BERT'" in caplog.text


def test_no_published_rows_and_tables_without_input(make_tables):
    out = make_tables("sts_minilm", extra=("--no-published",))
    assert [row[0] for row in csv_rows(out / "sts.csv")] == ["Model", "all-MiniLM-L6-v2"]
    assert csv_rows(out / "faq.csv") == [["Model", "Pooling", "Dataset", "Acc.", "MRR"]]
    only_published = make_tables(out="published")
    labels = [row[0] for row in csv_rows(only_published / "faq.csv")[1:]]
    assert len(labels) == 11 + 14 and all(label.startswith("published: ") for label in labels)


def test_index_traces_every_row(make_tables):
    out = make_tables("sts_minilm")
    index = json.loads((out / "tables.json").read_text())
    assert index["provenance"]["stage"] == "tables"
    assert index["provenance"]["inputs"][0]["path"].endswith("sts_minilm.json")
    assert len(index["provenance"]["inputs"][0]["sha256"]) == 64
    sts = index["tables"]["sts"]
    assert sts["files"] == {"md": "sts.md", "csv": "sts.csv", "tex": "sts.tex", "html": "sts.html"}
    run = sts["rows"][0]
    assert run["label"] == "all-MiniLM-L6-v2" and run["cells"]["stsb"] == 82.03
    assert run["source"]["metrics_file"].endswith("sts_minilm.json")
    assert run["source"]["seed"] == 0
    assert run["source"]["code_version"] == "0.1.0+gabc123def456"
    assert run["source"]["checkpoint"]["sha256"] == "3f1c0d9e" * 8
    assert run["source"]["config"]["max_length"] == 128
    paper = sts["rows"][1]
    assert paper["label"] == "published: Avg. GloVe (BURT twin, Table 2)"
    assert paper["source"]["published"]["table"] == "Table 2"
    assert paper["source"]["published"]["paper_file"] == "001_85ef1c7008ccf97c.txt"
    assert paper["source"]["published"]["note"]
    assert index["metrics"][0]["provenance"]["stage"] == "evaluate"


def test_same_input_gives_identical_files(make_tables):
    first, second = make_tables(*ALL, out="a"), make_tables(*ALL, out="b")
    for path in sorted(first.iterdir()):
        assert path.read_bytes() == (second / path.name).read_bytes(), path.name


def test_html_page_for_the_report(make_tables):
    out = make_tables("geogranno_minilm")
    page = (out / "geogranno_baselines.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in page
    assert '<td class="n">41.1/70.4/80.1</td>' in page
    assert '<tr class="published"><td>published: BERT (ULR-BERT, Table 8)</td>' in page


def test_latex_escapes_model_names(make_tables, tmp_path):
    data = json.loads(fixture("sts_minilm").read_text())
    data["model"]["name"] = "my_model & 100% #1"
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    out = make_tables(path, extra=("--no-published",))
    assert r"my\_model \& 100\% \#1 & mean & 72.4" in (out / "sts.tex").read_text()
    assert r"\label{tab:sts}" in (out / "sts.tex").read_text()


def _broken(tmp_path, name: str, edit) -> Path:
    data = json.loads(fixture(name).read_text())
    edit(data)
    path = tmp_path / f"broken-{name}.json"
    path.write_text(json.dumps(data, ensure_ascii=False))
    return path


@pytest.mark.parametrize(
    "name, edit, message",
    [
        ("sts_minilm", lambda d: d.update(task="superglue"), "unknown task 'superglue'"),
        ("sts_minilm", lambda d: d.pop("avg"), "missing key 'avg'"),
        ("analogy_minilm", lambda d: d["levels"]["word"].pop("syn"), "missing key 'levels.word.syn'"),
        ("analogy_minilm", lambda d: d["model"].pop("pooling"), "missing key 'model.pooling'"),
        ("analogy_minilm", lambda d: d.pop("provenance"), "missing key 'provenance'"),
        ("analogy_minilm", lambda d: d.update(ppr=80.0), "key 'ppr' must map levels"),
        ("wordsim_minilm", lambda d: d["scores"].update(MEN="high"), "key 'scores.MEN' must be a number or null"),
        (
            "geogranno_minilm",
            lambda d: d["by_query_length"]["dev"].update({"16~20": {"top10": 1.0}}),
            "unknown bucket '16~20'",
        ),
        ("faq_minilm", lambda d: d["datasets"]["BQ"].pop("mrr"), "missing key 'datasets.BQ.mrr'"),
    ],
)
def test_bad_metrics_name_the_file_and_key(cli, tmp_path, capsys, name, edit, message):
    path = _broken(tmp_path, name, edit)
    assert cli("tables", "--metrics", path, "--out", tmp_path / "out") == 2
    error = capsys.readouterr().err
    assert str(path) in error and message in error
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_unreadable_and_duplicate_inputs(cli, tmp_path, capsys):
    missing = tmp_path / "nope.json"
    assert cli("tables", "--metrics", missing, "--out", tmp_path / "out") == 2
    assert f"{missing}: file not found" in capsys.readouterr().err
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    assert cli("tables", "--metrics", garbage, "--out", tmp_path / "out") == 2
    assert "not a JSON file" in capsys.readouterr().err
    copy = tmp_path / "copy.json"
    shutil.copy(fixture("sts_minilm"), copy)
    assert cli("tables", "--metrics", fixture("sts_minilm"), copy, "--out", tmp_path / "out") == 2
    error = capsys.readouterr().err
    assert str(copy) in error and "already has a row for model 'all-MiniLM-L6-v2'" in error


def test_output_is_all_or_nothing(make_tables, monkeypatch, tmp_path):
    out = make_tables("sts_minilm")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    stale = out / f".analogy.md.tmp-pipeline-{_HOST}-4000000-0123456789ab"  # a killed writer's (no such pid)
    stale.write_text("left by a killed run")

    def failing(grid, label):
        if label == "wordsim":
            raise RuntimeError("disk full")
        return "partial\n"

    monkeypatch.setattr(tables.render, "to_latex", failing)
    parser = argparse.ArgumentParser()
    tables.add_arguments(parser)
    args = parser.parse_args(["--metrics", str(fixture("analogy_minilm")), "--out", str(out)])
    with pytest.raises(RuntimeError, match="disk full"):
        tables.run(args)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # old outputs intact, no temporaries
    assert not stale.exists()


def test_published_file_is_checked(tmp_path):
    text = published.PUBLISHED.read_text(encoding="utf-8")
    broken = tmp_path / "published.yaml"
    broken.write_text(
        text.replace(
            "values: [53.3, 50.8, 55.6, 59.2, 57.9, 63.0, 71.8, 58.8]",
            "values: [53.3, 50.8, 55.6, 59.2, 57.9, 63.0, 71.8]",
        ),
        encoding="utf-8",
    )
    spec = next(s for s in TABLES if s.name == "sts")
    with pytest.raises(InputError, match=r"twin_t2, row 1.*7 values for 8 columns"):
        published.rows_for(spec, broken)
    wrong_column = tmp_path / "column.yaml"
    wrong_column.write_text(text.replace("columns: [sts12, sts13", "columns: [sts11, sts13"), encoding="utf-8")
    with pytest.raises(InputError, match="columns \\['sts11'\\] are not columns of table 'sts'"):
        published.rows_for(spec, wrong_column)


def test_every_published_row_has_a_note_and_a_known_table():
    data = published._load(published.PUBLISHED)
    used = {source for spec in TABLES for source in spec.published}
    assert used == set(data["sources"])  # no transcribed table left unused
    for spec in TABLES:  # a table of ours alone names no source (issue 57): it has no published rows
        rows = published.rows_for(spec)
        assert bool(rows) == bool(spec.published), spec.name
        assert all(row.source["note"] and row.label.startswith("published: ") for row in rows)


def test_geogranno_length_buckets():
    """Table 9's buckets, defined once by the task (pipeline.tasks.geogranno): the table prints the paper's
    labels, the metrics JSON writes their ASCII spelling."""
    assert list(QUERY_LENGTH_BUCKETS) == ["1~6", "7~8", "9~15"]
    assert list(LENGTH_DIFFERENCE_BUCKETS) == ["≥ 0", "≥ 2", "≥ 3"]
    assert [ascii_label(label) for label in (*QUERY_LENGTH_BUCKETS, *LENGTH_DIFFERENCE_BUCKETS)] == [
        "1-6",
        "7-8",
        "9-15",
        ">=0",
        ">=2",
        ">=3",
    ]
    assert [query_length_bucket(n) for n in (0, 1, 6, 7, 8, 9, 15, 16)] == [
        None,
        "1~6",
        "1~6",
        "7~8",
        "7~8",
        "9~15",
        "9~15",
        "9~15",
    ]
    assert length_difference_buckets(0) == ["≥ 0"]
    assert length_difference_buckets(-2) == ["≥ 0", "≥ 2"]
    assert length_difference_buckets(5) == ["≥ 0", "≥ 2", "≥ 3"]
    assert [canonical_bucket(label) for label in ("1-6", "9~15", ">=2", "≥3", "≥ 0", "10-12")] == [
        "1~6",
        "9~15",
        "≥ 2",
        "≥ 3",
        "≥ 0",
        None,
    ]


@pytest.mark.parametrize(
    "value, decimals, signed, text",
    [
        (36.25, 1, False, "36.3"),
        (72.625, 1, False, "72.6"),
        (2.675, 2, False, "2.68"),
        (-0.04, 1, False, "0.0"),
        (5.9, 1, True, "+5.9"),
        (-3.35, 1, True, "-3.4"),
        (0.0, 1, True, "0.0"),
        (0.8125, 3, False, "0.813"),
        (None, 1, False, None),
    ],
)
def test_number_formatting(value, decimals, signed, text):
    assert assemble.format_number(value, decimals, signed) == text


def test_report_captions_exist_for_every_table():
    captions = REPO / "workflow" / "report"
    for name in TABLE_NAMES:
        text = (captions / f"table_{name}.rst").read_text(encoding="utf-8")
        assert text.strip()


def test_published_row_notes_are_shown_under_the_table(make_tables):
    """published.yaml flags the swapped BERT_CLS / BERT_MEAN averages of the STS table; readers see it."""
    out = make_tables("sts_minilm")
    page = (out / "sts.html").read_text()
    markdown = (out / "sts.md").read_text()
    for text in (page, markdown):
        assert "the two Avg. cells look swapped" in text
    note = next(line for line in markdown.splitlines() if "look swapped" in line)
    assert note.startswith("- published: BERT_CLS (")


def test_analogy_examples_table_puts_each_candidates_score_beside_the_printed_ones(make_tables, tmp_path):
    """BURT Table VII and ALBURT Table 5: a run row holds every printed candidate's cos(b - a + c, d) on the
    papers' 0-1 scale (2 decimals), the published rows theirs; the notes give each question's sentences."""
    from pipeline.tasks.analogy_examples import evaluate, read_questions, sentences

    questions = read_questions()
    texts = sorted({text for question in questions for text in sentences(question)})
    vectors = np.random.default_rng(3).normal(size=(len(texts), 4))

    class Encoder:
        def encode(self, strings):
            return vectors[[texts.index(s) for s in strings]]

    scores = evaluate(Encoder(), questions)
    metrics = {
        **scores,
        "task": "analogy_examples",
        "model": {"name": "tiny", "path": "/models/tiny", "kind": "transformer", "pooling": "mean"},
        "provenance": {"stage": "evaluate", "seed": 0, "params": {"task": "analogy_examples"}},
    }
    path = tmp_path / "analogy_examples.json"
    path.write_text(json.dumps(metrics), encoding="utf-8")
    out = make_tables(path)
    rows = csv_rows(out / "analogy_examples.csv")
    keys = [key for question in questions for key, _ in question.candidates]
    (ours,) = [row for row in rows if row[0] == "tiny"]
    assert ours[-6:] == [assemble.format_number(scores["scores"][key] / 100, 2) for key in keys]
    published_rows = {row[0]: row[-6:] for row in rows if row[0] != "tiny"}
    assert published_rows["published: BURT-base (BURT, Table VII)"] == ["0.97", "0.96", "0.96", "0.95", "", ""]
    assert published_rows["published: ALBURT (ALBURT, Table 5)"] == ["0.73", "0.45", "", "", "0.85", "0.77"]
    assert rows[0][2:] == [f"{question.key} {header}" for question in questions for header in ("gold", "other")]
    markdown = (out / "analogy_examples.md").read_text(encoding="utf-8")
    assert "This ant is a known species" in markdown and "The associated ant is not unknown" in markdown

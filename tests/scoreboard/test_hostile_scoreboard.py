"""Hostile inputs of the ``scoreboard`` stage (docs/behaviour.md; docs/stages/report.md "The scoreboard"):
malformed tables, config or claims stop it with one line naming the file and the field; booleans,
negative standard deviations and lists where text belongs are refused, not taken as numbers or as
"not run"; the HTML page escapes once; no label makes the claims' matcher backtrack; the workflow passes
the config as a file, whatever its size."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from hostile import assert_clean_failure

from pipeline.scoreboard import scoreboard

CONFIGS = Path(__file__).parents[2] / "workflow" / "config"
REPO = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def demo_config() -> dict:
    from pipeline.workflow_config import resolve_config

    config = resolve_config(CONFIGS / "demo.yaml")
    return json.loads(json.dumps(config, default=str)) | {"run": "hostile"}


def analogy_row(label: str, word_avg, std=None, seed=0, **extra) -> dict:
    cells = {"word_avg": word_avg, "avg": word_avg, "word_avg_std": std}
    return {"label": label, "pooling": "mean", "facet": None, "cells": cells, "source": {"seed": seed}} | extra


def tables_file(tmp_path: Path, tables: dict) -> Path:
    path = tmp_path / "tables.json"
    path.write_text(json.dumps({"tables": tables}), encoding="utf-8")
    return path


def good_tables(tmp_path: Path) -> Path:
    rows = [analogy_row("tiny", 50.0), analogy_row("tiny+burt", 60.0)]
    return tables_file(tmp_path, {"analogy": {"rows": rows}})


def config_file(tmp_path: Path, config) -> Path:
    path = tmp_path / "config.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config), encoding="utf-8")
    return path


def claims_file(tmp_path: Path, change) -> Path:
    """claims.yaml with ``change`` applied to its first claim (ulr-analogy-average)."""
    data = yaml.safe_load(scoreboard.CLAIMS.read_text(encoding="utf-8"))
    change(data["claims"][0])
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def run_board(cli, tmp_path, tables: Path, config: Path, claims: Path | None = None) -> int:
    extra = ["--claims-file", claims] if claims else []
    return cli("scoreboard", "--tables", tables, "--config", config, "--out", tmp_path / "board", *extra)


def deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


# ------------------------------------------------------------------------------ malformed tables
@pytest.mark.parametrize(
    ("tables", "field"),
    [
        ({"analogy": []}, "tables.analogy.rows"),
        ({"analogy": {"rows": "none"}}, "tables.analogy.rows"),
        ({"analogy": {"rows": ["tiny"]}}, "tables.analogy.rows[0]"),
        ({"analogy": {"rows": [{"pooling": "mean", "cells": {}}]}}, "tables.analogy.rows[0].label"),
        ({"analogy": {"rows": [analogy_row("tiny", 1.0), analogy_row(5, 2.0)]}}, "tables.analogy.rows[1].label"),
        ({"analogy": {"rows": [analogy_row("tiny", 1.0) | {"cells": [1, 2]}]}}, "tables.analogy.rows[0].cells"),
        ({"analogy": {"rows": [analogy_row("tiny", 1.0) | {"source": "x"}]}}, "tables.analogy.rows[0].source"),
        ({"analogy": {"rows": [analogy_row("tiny", 1.0) | {"pooling": ["mean"]}]}}, "tables.analogy.rows[0].pooling"),
    ],
    ids=[
        "table a list",
        "rows text",
        "row text",
        "no label",
        "label a number",
        "cells a list",
        "source text",
        "pooling a list",
    ],
)
def test_a_malformed_table_is_one_line_naming_the_field(cli, capsys, tmp_path, demo_config, tables, field):
    path = tables_file(tmp_path, tables)
    status = run_board(cli, tmp_path, path, config_file(tmp_path, demo_config))
    assert_clean_failure(status, capsys.readouterr().err, path, tmp_path / "board", field)


def test_a_tables_index_nested_past_any_table_is_one_line(cli, capsys, tmp_path, demo_config):
    path = tmp_path / "tables.json"
    path.write_text('{"tables": ' + deep_json(100_000) + "}", encoding="utf-8")
    status = run_board(cli, tmp_path, path, config_file(tmp_path, demo_config))
    assert_clean_failure(status, capsys.readouterr().err, path, tmp_path / "board", "nested")


# ---------------------------------------------------------------------- wrong values refused
@pytest.mark.parametrize(
    ("row", "field"),
    [
        (analogy_row("tiny+burt", True), "rows[1].cells.word_avg"),  # JSON true is not 1
        (analogy_row("tiny+burt", 60.0, std=-2.0, seed=[0, 1, 2]), "rows[1].cells.word_avg_std"),
        (analogy_row("tiny+burt", 60.0, std=1.0, seed=[True, False]), "rows[1].source.seed"),
        (analogy_row("tiny+burt", "60.0"), "rows[1].cells.word_avg"),
        # a merged file's seeds count for the columns it filled (ULR-BERT Table 8's GLUE average)
        (
            analogy_row("tiny+burt", 60.0, source={"seed": 0, "merged": [{"columns": ["word_avg"], "seed": [True]}]}),
            "rows[1].source.merged[0].seed",
        ),
        (analogy_row("tiny+burt", 60.0, source={"seed": 0, "merged": {"seed": [0, 1]}}), "rows[1].source.merged"),
    ],
    ids=["boolean score", "negative std", "boolean seeds", "score as text", "boolean merged seeds", "merged object"],
)
def test_a_wrong_value_is_refused_not_judged(cli, capsys, tmp_path, demo_config, row, field):
    path = tables_file(tmp_path, {"analogy": {"rows": [analogy_row("tiny", 50.0, std=1.0, seed=[0, 1, 2]), row]}})
    status = run_board(cli, tmp_path, path, config_file(tmp_path, demo_config))
    assert_clean_failure(status, capsys.readouterr().err, path, tmp_path / "board", field)


# ------------------------------------------------------------------------------ malformed config
@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        (deep_json(100_000), "nested"),
        ("{not json", "not a config"),
        ("[]", "JSON object"),
        ({"run": "x"}, ""),  # no section the plan needs: the schema says which
    ],
    ids=["nested", "not JSON", "a list", "no sections"],
)
def test_a_malformed_config_is_one_line(cli, capsys, tmp_path, config, fragment):
    path = config_file(tmp_path, config)
    status = run_board(cli, tmp_path, good_tables(tmp_path), path)
    assert_clean_failure(status, capsys.readouterr().err, path, tmp_path / "board", fragment)


def test_a_config_field_of_the_wrong_type_is_one_line(cli, capsys, tmp_path, demo_config):
    path = config_file(tmp_path, demo_config | {"models": ["bert"]})
    status = run_board(cli, tmp_path, good_tables(tmp_path), path)
    assert_clean_failure(status, capsys.readouterr().err, path, tmp_path / "board", "models")


# ------------------------------------------------------------------------------ malformed claims
def _set(key, value):
    return lambda claim: claim.__setitem__(key, value)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (_set("higher", "{x}+misad"), "higher"),
        (_set("column", ["avg"]), "column"),
        (_set("table", ["analogy"]), "table"),
        (_set("id", ["a", "b"]), "claims[0].id"),
        (lambda c: c["higher"]["paper"].pop("row"), "higher.paper.row"),
        (lambda c: c["higher"]["paper"].__setitem__("nth", True), "higher.paper.nth"),  # True is not 1
        (_set("pooling", ["mean"]), "pooling"),  # a list, which turned a holding claim into "not run"
        (_set("quote", {"text": "x"}), "quote"),
        (lambda c: c["lower"].__setitem__("run", "{x}{x}"), "lower.run"),
    ],
    ids=[
        "side text",
        "column a list",
        "table a list",
        "id a list",
        "no paper row",
        "nth a boolean",
        "pooling a list",
        "quote a mapping",
        "two {x}",
    ],
)
def test_a_malformed_claim_is_one_line_naming_the_field(cli, capsys, tmp_path, demo_config, change, field):
    claims = claims_file(tmp_path, change)
    scoreboard.load_claims.cache_clear()
    status = run_board(cli, tmp_path, good_tables(tmp_path), config_file(tmp_path, demo_config), claims)
    assert_clean_failure(status, capsys.readouterr().err, claims, tmp_path / "board", field)


def test_a_claims_file_nested_past_any_claim_is_one_line(cli, capsys, tmp_path, demo_config):
    claims = tmp_path / "claims.yaml"
    claims.write_text("claims: " + deep_json(50_000), encoding="utf-8")
    scoreboard.load_claims.cache_clear()
    status = run_board(cli, tmp_path, good_tables(tmp_path), config_file(tmp_path, demo_config), claims)
    assert_clean_failure(status, capsys.readouterr().err, claims, tmp_path / "board", "nested")


def test_a_claims_file_that_is_not_utf8_is_one_line(cli, capsys, tmp_path, demo_config):
    claims = tmp_path / "claims.yaml"
    claims.write_bytes(b"claims:\n  - id: \xff\xfe\n")
    scoreboard.load_claims.cache_clear()
    status = run_board(cli, tmp_path, good_tables(tmp_path), config_file(tmp_path, demo_config), claims)
    assert_clean_failure(status, capsys.readouterr().err, claims, tmp_path / "board", "UTF-8")


# ----------------------------------------------------------------------------- no backtracking
class Hang(Exception):
    pass


def test_a_long_label_cannot_hang_a_claims_pattern(cli, tmp_path, demo_config):
    """x: "(a|aa)+" was a regular expression: on 60 a's and a miss it backtracks for hours. It is a glob now
    (no special characters but *), and every label is matched in linear time."""
    claims = claims_file(tmp_path, lambda c: c["higher"].__setitem__("x", "(a|aa)+"))
    scoreboard.load_claims.cache_clear()
    long = "a" * 60 + "!"
    rows = [analogy_row(long, 50.0), analogy_row(long + "+misad", 60.0), analogy_row("b" * 100_000 + "+misad", 1.0)]
    tables = tables_file(tmp_path, {"analogy": {"rows": rows}})

    def stop(*_):
        raise Hang

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(10)
    try:
        start = time.monotonic()
        status = run_board(cli, tmp_path, tables, config_file(tmp_path, demo_config), claims)
        elapsed = time.monotonic() - start
    except Hang:
        pytest.fail("the claims' matcher backtracked for 10 s on a 61-character label")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert status == 0 and elapsed < 10
    board = json.loads((tmp_path / "board/scoreboard.json").read_text(encoding="utf-8"))
    assert next(c for c in board["claims"] if c["id"] == "ulr-analogy-average")["verdict"] == "not run"


def test_a_glob_of_many_stars_over_a_long_label_is_linear():
    from pipeline.scoreboard.scoreboard_inputs import glob_match

    start = time.monotonic()
    assert not glob_match("*a*a*a*a*a*a*a*a*b", "a" * 200_000)
    assert glob_match("*ALBERT*", "tiny-albert-base") and not glob_match("*albert*", "bert")
    assert time.monotonic() - start < 1


# ---------------------------------------------------------------------------------- escaping
@pytest.mark.parametrize(
    ("label", "shown"),
    [("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"), ("a | b", "a | b"), ("*em*", "*em*")],
)
def test_the_html_page_escapes_a_label_once(cli, tmp_path, demo_config, label, shown):
    rows = [analogy_row(label, 50.0), analogy_row(label + "+burt", 60.0)]
    status = run_board(
        cli, tmp_path, tables_file(tmp_path, {"analogy": {"rows": rows}}), config_file(tmp_path, demo_config)
    )
    assert status == 0
    page = (tmp_path / "board/scoreboard.html").read_text(encoding="utf-8")
    assert f"<td>{shown}+burt 60.00 (n = 1) vs {shown} 50.00 (n = 1)</td>" in page, page
    assert "&amp;" not in page and "\\|" not in page and "\\*" not in page
    markdown = (tmp_path / "board/scoreboard.md").read_text(encoding="utf-8")
    assert "<script>" not in markdown


# ------------------------------------------------------------------------- config as a file
def test_the_workflow_passes_the_config_as_a_file_whatever_its_size(tmp_path):
    """Snakemake runs a shell rule as one ``bash -c COMMAND`` argument, which Linux refuses past 128 KiB
    (MAX_ARG_STRLEN): the scoreboard's command must not grow with the config."""
    config = yaml.safe_load((CONFIGS / "demo.yaml").read_text(encoding="utf-8"))
    config["run"] = "hostile-config-size"
    # 150 KiB the schema allows (a generator path has no length bound); no job reads it
    config.setdefault("models", {}).setdefault("generators", {})["unused"] = "p" * 150_000
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "-p",
            "--cores",
            "1",
            "--configfile",
            path,
            "--",
            "results/hostile-config-size/scoreboard.json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    commands = [line for line in result.stdout.splitlines() if "python -m pipeline scoreboard" in line]
    assert commands and all(len(line) < 2000 for line in commands), [len(line) for line in commands]
    assert "--config results/hostile-config-size/config.json" in commands[0]


# --------------------------------------------------------------------- per-item outcomes, malformed
def category(**change) -> dict:
    return {
        "type": "semantic",
        "in_tables": True,
        "correct": "0110",
        "pairs": [[0, 1], [1, 0], [2, 3], [3, 2]],
    } | change


def analogy_metrics(**change) -> dict:
    syntactic = category(type="syntactic")
    return {"categories": {"word/capital-common": category(**change), "word/do-doing": syntactic}}


def sts_metrics(node) -> dict:
    return {
        "items": {name: {"test": node} for name in ("STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R")}
    }


@pytest.mark.parametrize(
    ("table", "column", "data"),
    [
        ("analogy", "word_avg", analogy_metrics(pairs="0 1")),
        ("analogy", "word_avg", analogy_metrics(pairs=[[0, 1]])),
        ("analogy", "word_avg", analogy_metrics(pairs=[[0, True], [1, 0], [2, 3], [3, 2]])),
        ("analogy", "word_avg", analogy_metrics(pairs=[[0, -1], [1, 0], [2, 3], [3, 2]])),
        ("analogy", "word_avg", analogy_metrics(pairs=[[0, 10**30], [1, 0], [2, 3], [3, 2]])),
        ("analogy", "word_avg", analogy_metrics(correct="01a0")),
        ("sts", "avg", sts_metrics({"gold": [1, 2, 3], "predicted": [1, 2]})),
        ("sts", "avg", sts_metrics({"gold": [1, True, 3], "predicted": [1, 2, 3]})),
        ("sts", "avg", sts_metrics({"gold": [1, 2, float("nan")], "predicted": [1, 2, 3]})),
        ("sts", "avg", sts_metrics([1, 2, 3])),
        ("sts", "avg", {"items": "none"}),
        ("bilstm_snli", "test", {"test_correct": 5}),
        ("bilstm_snli", "test", [deep_json(100_000)]),
        ("bilstm_snli", "test", {"test_correct": "0110", "test_ids": [0, 1, 1, 2]}),
        ("bilstm_snli", "test", {"test_correct": "0110", "test_ids": "0123"}),
    ],
    ids=[
        "pairs text",
        "pairs short",
        "pair id a boolean",
        "pair id negative",
        "pair id huge",
        "correct not bits",
        "predicted short",
        "gold boolean",
        "gold NaN",
        "items a list",
        "items text",
        "test_correct a number",
        "metrics nested too deep",
        "SNLI test ids repeated",
        "SNLI test ids text",
    ],
)
def test_malformed_per_item_outcomes_leave_the_column_untested(cli, tmp_path, demo_config, table, column, data):
    """A metrics file is not trusted: per-item outcomes that are not what the evaluations write leave the
    column untested (and say why), never a traceback and never a verdict."""
    labels = {
        "analogy": ("tiny+burt", "tiny"),
        "sts": ("tiny+twin", "tiny"),
        "bilstm_snli": ("bilstm-bf-combined-8", "bilstm-max-8"),
    }[table]
    rows = []
    for label in labels:
        path = tmp_path / f"{label}.json"
        path.write_text(data[0] if isinstance(data, list) else json.dumps(data), encoding="utf-8")
        source = {"seed": 0, "metrics_file": str(path)}
        rows.append({"label": label, "pooling": "mean", "facet": None, "cells": {column: 50.0}, "source": source})
    status = run_board(
        cli, tmp_path, tables_file(tmp_path, {table: {"rows": rows}}), config_file(tmp_path, demo_config)
    )
    assert status == 0
    board = json.loads((tmp_path / "board/scoreboard.json").read_text(encoding="utf-8"))
    judged = [c for c in board["claims"] if c["verdict"] != "not run"]
    assert judged and {c["verdict"] for c in judged} == {"untested"}
    assert all(
        p["test"].startswith("none: n = 1") and ";" in p["test"] for c in judged for p in c["pairs"] if "test" in p
    )


# ------------------------------------------------------------------------------- item ids, hostile
STS_NAMES = ("STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R")


def sts_items(repeat: int = 1) -> tuple[dict, dict]:
    """Two models' STS items, 47 pairs a set (reliability round seven §2): the higher model is ahead by
    noise alone (p 0.34, inconclusive); each pair is written ``repeat`` times, with its id, on both sides."""
    rng = np.random.default_rng(2)
    high, low = {}, {}
    for name in STS_NAMES:
        gold = np.round(rng.uniform(0, 5, 47), 1)
        worse, better = gold + rng.normal(0, 1.5, 47), gold + rng.normal(0, 1.5, 47)
        ids = np.repeat(np.arange(47), repeat).tolist()
        subset = "answers-forums" if name == "STS12" else "test"
        for side, predicted in ((high, better), (low, worse)):
            node = {"gold": np.repeat(gold, repeat).tolist(), "predicted": np.repeat(predicted, repeat).tolist()}
            side[name] = {subset: node | {"ids": ids}}
    return high, low


def sts_verdict(cli, tmp_path, demo_config, high: dict, low: dict) -> tuple[dict, Path]:
    """The twin-over-BERT STS claim (Avg. of the seven sets) judged on these items; and the higher row's
    metrics file."""
    tmp_path.mkdir(exist_ok=True)
    rows, paths = [], []
    for label, items in (("tiny+twin", high), ("tiny", low)):
        path = tmp_path / f"{label}.json"
        path.write_text(json.dumps({"items": items}), encoding="utf-8")
        source = {"seed": 0, "metrics_file": str(path)}
        rows.append({"label": label, "pooling": "mean", "facet": None, "cells": {"avg": 50.0}, "source": source})
        paths.append(path)
    tables = tables_file(tmp_path, {"sts": {"rows": rows}})
    assert run_board(cli, tmp_path, tables, config_file(tmp_path, demo_config)) == 0
    board = json.loads((tmp_path / "board/scoreboard.json").read_text(encoding="utf-8"))
    (pair,) = next(c for c in board["claims"] if c["id"] == "twin-sts-over-bert")["pairs"]
    return pair, paths[0]


def test_items_repeated_fifty_times_are_untested_not_holds(cli, tmp_path, demo_config):
    """Each of 47 pairs a set written 50 times on both sides read as 2,350 independent pairs and turned
    "inconclusive" (p 0.34) into "holds" (p 0.001); the repeated ids name the error instead."""
    once = sts_verdict(cli, tmp_path / "once", demo_config, *sts_items())[0]
    assert once["verdict"] == "inconclusive" and once["p"] > 0.3
    pair, path = sts_verdict(cli, tmp_path / "fifty", demo_config, *sts_items(50))
    assert pair["verdict"] == "untested"
    reason = pair["test"].split("; ", 1)[1]
    assert reason == f"{path}: item 0 of STS12/answers-forums appears 50 times; each item counts once"


def _change_ids(change):
    def changed(items: dict) -> dict:
        node = items["STS12"]["answers-forums"]
        return {**items, "STS12": {"answers-forums": change(node)}}

    return changed


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda node: node | {"ids": node["ids"][::-1]}, "not scored on the same items of avg (STS12/answers-forums"),
        (lambda node: node | {"ids": [i + 1000 for i in node["ids"]]}, "not scored on the same items"),
        (lambda node: node | {"ids": " ".join(map(str, node["ids"]))}, "the ids of STS12/answers-forums are str"),
        (lambda node: node | {"ids": node["ids"][:-1] + [46.0]}, "id 46.0 of STS12/answers-forums is not"),
        (lambda node: node | {"ids": [True] + node["ids"][1:]}, "id True of STS12/answers-forums is not"),
        (lambda node: node | {"ids": ["0"] + node["ids"][1:]}, "id '0' of STS12/answers-forums is not"),
        (lambda node: node | {"ids": [-1] + node["ids"][1:]}, "id -1 of STS12/answers-forums is not"),
        (lambda node: node | {"ids": node["ids"][:-1]}, "STS12/answers-forums has 46 ids for 47 items"),
        (lambda node: node | {"ids": [0] + node["ids"][1:-1] + [0]}, "item 0 of STS12/answers-forums appears 2 times"),
    ],
    ids=[
        "ids in another order",
        "other ids",
        "ids text",
        "id a float",
        "id a boolean",
        "id text",
        "id negative",
        "ids short",
        "an id twice",
    ],
)
def test_malformed_or_unpaired_item_ids_leave_the_column_untested(cli, tmp_path, demo_config, change, fragment):
    """Item ids are not trusted: on the higher side only, each leaves the column untested with one line
    naming what is wrong (and, for a malformed list, the file), never a traceback and never a verdict."""
    high, low = sts_items()
    pair, path = sts_verdict(cli, tmp_path, demo_config, _change_ids(change)(high), low)
    assert pair["verdict"] == "untested"
    reason = pair["test"].split("; ", 1)[1]
    assert fragment in reason and "\n" not in reason
    assert reason.startswith((f"{path}: ", "the two rows were not scored on the same items"))

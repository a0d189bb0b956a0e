"""Variant markup and OpenCC conversion with aligned entity spans."""

from collections import Counter

import pyarrow.parquet as pq
from testdata import DEMO_DATA, ZH_SAMPLE, read_dir

from pipeline.corpus import variants
from pipeline.corpus.convert import Converter
from pipeline.corpus.extract import extract


def render(text):
    edits, protected = variants.resolve(text)
    out = edits.apply(text)
    return out, [out[s:e] for s, e in protected]


def test_variant_blocks_prefer_simplified():
    assert render("用-{zh-hans:计算机;zh-hant:電腦}-上网")[0] == "用计算机上网"
    assert render("-{zh-cn:软件;zh-tw:軟體}-")[0] == "软件"
    assert render("-{zh-tw:軟體;zh-hk:軟件}-")[0] == "軟體"  # no Simplified variant: first of the preference list


def test_variant_flags_and_protected_blocks():
    assert render("甲-{H|zh-cn:信息;zh-tw:資訊}-乙")[0] == "甲乙"  # a conversion rule renders nothing
    assert render("-{T|zh-cn:标题;zh-tw:標題}-正文")[0] == "正文"
    assert render("-{A|zh-cn:信息;zh-tw:資訊}-")[0] == "信息"
    assert render("保留-{ABC於}-原文") == ("保留ABC於原文", ["ABC於"])
    assert render("-{R|zh-cn:x}-") == ("zh-cn:x", ["zh-cn:x"])


def convert_rows(rows):
    converter = Converter("t2s")
    counts = Counter()
    return [converter.convert_doc(row, counts) for row in rows], counts


def test_spans_stay_aligned_through_variants_and_opencc():
    text = "[電腦]用-{zh-hans:计算机;zh-hant:電腦}-與軟體。"
    row = {
        "doc_id": 1,
        "title": "電腦",
        "text": text,
        "entities": [
            {"start": 1, "end": 3, "target": "電腦"},
            {"start": 5, "end": text.index("}-") + 2, "target": "電腦"},
            {"start": text.index("軟體"), "end": text.index("軟體") + 2, "target": "軟體"},
        ],
    }
    (doc,), counts = convert_rows([row])
    assert doc["title"] == "电脑"
    assert doc["text"] == "[电脑]用计算机与软体。"
    assert [doc["text"][e["start"] : e["end"]] for e in doc["entities"]] == ["电脑", "计算机", "软体"]
    assert [e["target"] for e in doc["entities"]] == ["电脑", "电脑", "软体"]
    assert counts["variant_blocks"] == 1


def test_protected_block_is_not_converted():
    (doc,), _ = convert_rows([{"doc_id": 1, "title": "t", "text": "於是-{於}-", "entities": []}])
    assert doc["text"] == "于是於"


def test_zh_sample_comes_out_simplified(data_root, tmp_path):
    extract(data_root / ZH_SAMPLE, "zh", tmp_path / "docs")
    before = read_dir(tmp_path / "docs").to_pylist()
    docs, _ = convert_rows(before)
    titles = [d["title"] for d in docs]
    assert {"文学", "天文学", "化学"} <= set(titles)  # 文學, 天文學, 化學 in the dump
    joined = "".join(d["text"] for d in docs)
    for traditional in "數學們與為國體於這個":
        assert traditional not in joined, traditional
    assert "-{" not in joined
    for doc, old in zip(docs, before):
        assert len(doc["entities"]) <= len(old["entities"])
        for e in doc["entities"]:
            assert doc["text"][e["start"] : e["end"]].strip()


def test_convert_cli_on_demo(cli, tmp_path):
    extract(DEMO_DATA / "wiki/zh/zhwiki-demo-pages-articles.xml", "zh", tmp_path / "docs", shards=2)
    assert cli("convert", "--input", tmp_path / "docs", "--out", tmp_path / "simplified") == 0
    for k in range(2):
        assert (tmp_path / "simplified" / f"shard-{k:03d}.stats.json").exists()
    titles = read_dir(tmp_path / "simplified")["title"].to_pylist()
    assert "法国" in titles and "数学" in titles and "國王與王后" not in titles
    text = "".join(read_dir(tmp_path / "simplified")["text"].to_pylist())
    assert "计算机" in text and "-{" not in text
    provenance = pq.read_schema(tmp_path / "simplified" / "shard-000.parquet").metadata[b"pipeline.provenance"]
    assert b"t2s" in provenance


def test_unknown_opencc_config(cli, capsys, small_dump, tmp_path):
    extract(small_dump, "en", tmp_path / "docs")
    assert cli("convert", "--input", tmp_path / "docs", "--out", tmp_path / "o", "--opencc-config", "nope") == 2
    assert "OpenCC configuration 'nope'" in capsys.readouterr().err

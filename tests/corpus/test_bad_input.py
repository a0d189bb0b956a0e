"""Bad input: a clear error naming the file, exit status 2, and no output left behind."""

import bz2

import pytest
from testdata import dump_xml, page_xml

GOOD_PAGES = [page_xml(i, f"Page {i}", f"Text of page {i} with a [[Link]].") for i in range(1, 40)]


def good_xml() -> bytes:
    return dump_xml(GOOD_PAGES).encode()


def run_extract(cli, capsys, dump, out, lang="en"):
    status = cli("extract", "--dump", dump, "--lang", lang, "--out", out, "--shards", "2")
    return status, capsys.readouterr().err


def assert_failed_cleanly(status, err, dump, out, *fragments):
    assert status == 2
    assert str(dump) in err
    for fragment in fragments:
        assert fragment in err, err
    assert "Traceback" not in err
    leftovers = [p.name for p in out.iterdir()] if out.exists() else []
    assert leftovers == [], f"partial output left behind: {leftovers}"


def test_truncated_bz2(cli, capsys, tmp_path):
    data = bz2.compress(good_xml())
    dump = tmp_path / "truncated.xml.bz2"
    dump.write_bytes(data[: len(data) // 2])
    status, err = run_extract(cli, capsys, dump, tmp_path / "out")
    assert_failed_cleanly(status, err, dump, tmp_path / "out", "truncated compressed stream")


def test_corrupt_bz2(cli, capsys, tmp_path):
    data = bytearray(bz2.compress(good_xml()))
    data[200:260] = b"\x00" * 60
    dump = tmp_path / "corrupt.xml.bz2"
    dump.write_bytes(bytes(data))
    status, err = run_extract(cli, capsys, dump, tmp_path / "out")
    assert_failed_cleanly(status, err, dump, tmp_path / "out", "compressed stream")


def test_malformed_xml_names_the_page(cli, capsys, tmp_path):
    xml = good_xml().decode().replace("<title>Page 20</title>", "<title>Page 20</titel>")
    dump = tmp_path / "malformed.xml"
    dump.write_text(xml)
    status, err = run_extract(cli, capsys, dump, tmp_path / "out")
    assert_failed_cleanly(status, err, dump, tmp_path / "out", "malformed XML at line", "'Page 19'")


def test_truncated_plain_xml(cli, capsys, tmp_path):
    dump = tmp_path / "cut.xml"
    dump.write_bytes(good_xml()[:-500])
    status, err = run_extract(cli, capsys, dump, tmp_path / "out")
    assert_failed_cleanly(status, err, dump, tmp_path / "out", "malformed XML")


def test_invalid_utf8(cli, capsys, tmp_path):
    data = good_xml().replace(b"Text of page 7", b"Text of p\xffge 7")
    dump = tmp_path / "latin1.xml"
    dump.write_bytes(data)
    status, err = run_extract(cli, capsys, dump, tmp_path / "out")
    assert_failed_cleanly(status, err, dump, tmp_path / "out", "invalid UTF-8", "'Page 6'")


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty dump"),
        (dump_xml([]).encode(), "no <page> elements"),
        (b"<html><body>not a dump</body></html>", "expected <mediawiki>"),
    ],
)
def test_empty_or_foreign_dump(cli, capsys, tmp_path, content, message):
    dump = tmp_path / "empty.xml"
    dump.write_bytes(content)
    status, err = run_extract(cli, capsys, dump, tmp_path / "out")
    assert_failed_cleanly(status, err, dump, tmp_path / "out", message)


def test_missing_file(cli, capsys, tmp_path):
    dump = tmp_path / "nowhere.xml.bz2"
    status, err = run_extract(cli, capsys, dump, tmp_path / "out")
    assert_failed_cleanly(status, err, dump, tmp_path / "out", "not found")


def test_unknown_language(cli, capsys, small_dump, tmp_path):
    status = cli("extract", "--dump", small_dump, "--lang", "xx", "--out", tmp_path / "out")
    err = capsys.readouterr().err
    assert status == 2 and "unknown language 'xx'" in err and "en, zh" in err
    assert not (tmp_path / "out").exists()


def test_failed_rerun_keeps_previous_output_and_rerun_finishes(cli, capsys, small_dump, tmp_path):
    out = tmp_path / "out"
    assert cli("extract", "--dump", small_dump, "--lang", "en", "--out", out) == 0
    before = (out / "shard-000.parquet").read_bytes()
    broken = tmp_path / "broken.xml.bz2"
    broken.write_bytes(small_dump.read_bytes()[:100])
    assert cli("extract", "--dump", broken, "--lang", "en", "--out", out) == 2
    assert (out / "shard-000.parquet").read_bytes() == before  # nothing lost
    assert sorted(p.name for p in out.iterdir()) == ["extract-stats.json", "shard-000.parquet"]  # no temporaries


def test_convert_and_clean_reject_a_file_that_is_not_parquet(cli, capsys, tmp_path):
    bogus = tmp_path / "shard-000.parquet"
    bogus.write_text("not parquet")
    for stage, extra in (("convert", []), ("clean", ["--lang", "en"])):
        status = cli(stage, "--input", bogus, "--out", tmp_path / stage, *extra)
        err = capsys.readouterr().err
        assert status == 2 and str(bogus) in err and "not a readable Parquet file" in err
        assert not list((tmp_path / stage).glob("*")) if (tmp_path / stage).exists() else True

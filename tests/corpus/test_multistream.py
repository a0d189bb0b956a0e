"""Extraction of slices of multistream dumps: the real Wikimedia pair, and larger ones written
from the English sample the way Wikimedia writes them (100 pages per stream, with the index)."""

from __future__ import annotations

import bz2
import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from multistream_writer import write_multistream
from testdata import EN_SAMPLE, REPO

from pipeline.corpus.extract import extract
from pipeline.corpus.merge_slices import merge
from pipeline.corpus.multistream import stream_offsets, stream_slice
from pipeline.errors import InputError

SHARDS = 3


@pytest.fixture(scope="module")
def real_pair(data_root):
    folder = data_root / "wiki" / "multistream"
    dump = folder / "elwikivoyage-pages-articles-p2566p2583.multistream.xml.bz2"
    return dump, folder / "elwikivoyage-pages-articles-p2566p2583.multistream-index.xml.bz2"


@pytest.fixture(scope="module")
def english_pair(data_root, tmp_path_factory):
    source = data_root / EN_SAMPLE
    folder = tmp_path_factory.mktemp("multistream")
    dump, index = folder / "enwiki-multistream.xml.bz2", folder / "enwiki-multistream-index.txt.bz2"
    assert write_multistream(source, dump, index, copies=2) == 412
    return dump, index


def _sliced(dump, index, n, folder):
    slices = []
    for k in range(n):
        extract(dump, "en", folder / f"slice-{k}", SHARDS, index=index, part=f"{k}/{n}")
        slices.append(folder / f"slice-{k}")
    merge(slices, folder / "merged", SHARDS)
    return folder / "merged"


@pytest.mark.parametrize("pair", ["real_pair", "english_pair"])
def test_any_slice_count_gives_the_whole_dumps_shards_byte_for_byte(pair, request, tmp_path):
    dump, index = request.getfixturevalue(pair)
    whole = extract(dump, "en", tmp_path / "whole", SHARDS)
    for n in (1, 2, 4):
        merged = _sliced(dump, index, n, tmp_path / f"n{n}")
        for k in range(SHARDS):
            name = f"shard-{k:03d}.parquet"
            assert (merged / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), (n, name)
        stats = json.loads((merged / "extract-stats.json").read_text())
        assert stats["articles_kept"] == whole["articles_kept"] and stats["pages_seen"] == whole["pages_seen"]
        assert len(stats["slices"]) == n


def test_row_groups_are_cut_as_one_job_cuts_them(english_pair, tmp_path):
    """Small batches: many row groups per shard, cut by count and by size, across slice boundaries."""
    dump, index = english_pair
    batches = {"batch_docs": 7, "batch_chars": 30_000}
    extract(dump, "en", tmp_path / "whole", SHARDS, **batches)
    slices = []
    for k in range(3):
        extract(dump, "en", tmp_path / f"slice-{k}", SHARDS, index=index, part=f"{k}/3", **batches)
        slices.append(tmp_path / f"slice-{k}")
    merge(slices, tmp_path / "merged", SHARDS, **batches)
    for k in range(SHARDS):
        whole = tmp_path / "whole" / f"shard-{k:03d}.parquet"
        assert pq.ParquetFile(whole).num_row_groups > 10
        assert (tmp_path / "merged" / whole.name).read_bytes() == whole.read_bytes()


def test_a_slice_reads_only_its_streams_and_the_union_is_the_dump(english_pair, tmp_path):
    dump, index = english_pair
    offsets = stream_offsets(index)
    assert len(offsets) == 5  # 412 pages, 100 per stream
    whole = pq.read_table(extract(dump, "en", tmp_path / "whole", 1) and tmp_path / "whole" / "shard-000.parquet")
    ids = []
    for k in range(4):
        out = tmp_path / f"cli-{k}"
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pipeline",
                "extract",
                "--dump",
                str(dump),
                "--index",
                str(index),
                "--slice",
                f"{k}/4",
                "--lang",
                "en",
                "--out",
                str(out),
            ],
            check=False,
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, result.stderr
        stats = json.loads((out / "extract-stats.json").read_text())
        part = stream_slice(dump, index, k, 4)
        assert stats["bytes_in"] == part.compressed_bytes < dump.stat().st_size / 2
        ids += pq.read_table(out / "shard-000.parquet", columns=["doc_id"]).column("doc_id").to_pylist()
    assert ids == whole.column("doc_id").to_pylist()


def test_more_slices_than_streams_leave_empty_slices(real_pair, tmp_path):
    dump, index = real_pair
    assert len(stream_offsets(index)) == 4
    stats = extract(dump, "en", tmp_path / "empty", 1, index=index, part="0/6")
    assert stats["pages_seen"] == 0 and pq.read_table(tmp_path / "empty" / "shard-000.parquet").num_rows == 0


def test_bad_index_and_bad_slice_are_refused(real_pair, tmp_path):
    dump, _ = real_pair
    bad = tmp_path / "index.txt.bz2"
    bad.write_bytes(bz2.compress(b"718:2566:A\nnot an index line\n"))
    with pytest.raises(InputError, match="line 2"):
        stream_offsets(bad)
    past = tmp_path / "past.txt"
    past.write_text(f"{dump.stat().st_size + 10}:1:A\n")
    with pytest.raises(InputError, match="past the end"):
        stream_slice(dump, past, 0, 1)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "extract",
            "--dump",
            str(dump),
            "--index",
            str(bad),
            "--slice",
            "0/2",
            "--lang",
            "en",
            "--out",
            str(tmp_path / "out"),
        ],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "line 2" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="0 <= K < N"):
        extract(dump, "en", tmp_path / "x", 1, index=bad, part="2/2")


@pytest.mark.parametrize(
    "args",
    [["--slice", "2/2"], ["--slice", "one/2"], ["--slice", "0/2"]],
    ids=["k-past-n", "not-a-number", "slice-without-index"],
)
def test_bad_slice_arguments_exit_2(real_pair, tmp_path, args):
    dump, _ = real_pair
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "extract",
            "--dump",
            str(dump),
            "--lang",
            "en",
            "--out",
            str(tmp_path / "out"),
            *args,
        ],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr and "--slice" in result.stderr
    assert not (tmp_path / "out").exists()

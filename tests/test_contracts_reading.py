"""Reading a stage output in bounded memory (pipeline/contracts.py ``iter_batches``)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import contracts
from pipeline.errors import InputError


def _rows(first: int, count: int) -> pa.Table:
    return pa.table(
        {"doc_id": pa.array(range(first, first + count), pa.int64()), "text": [f"row {i}" for i in range(count)]}
    )


def test_batches_never_span_row_groups(tmp_path):
    """One row group at a time: Arrow's whole-file reader reads ahead across row groups, which made
    ``clean``'s memory grow with its shard (BENCHMARKS "clean: memory by shard size")."""
    path = tmp_path / "three-groups.parquet"
    with pq.ParquetWriter(path, _rows(0, 1).schema) as writer:
        for group in range(3):
            writer.write_table(_rows(group * 5, 5))
    sizes = [batch.num_rows for batch in contracts.iter_batches(path, batch_rows=4)]
    assert sizes == [4, 1, 4, 1, 4, 1]
    ids = [i for batch in contracts.iter_batches(path, ["doc_id"], 4) for i in batch.column(0).to_pylist()]
    assert ids == list(range(15))


def test_row_order_and_content_unchanged(tmp_path):
    path = tmp_path / "one-group.parquet"
    table = _rows(0, 10)
    pq.write_table(table, path)
    assert pa.Table.from_batches(list(contracts.iter_batches(path, batch_rows=3))).equals(table)


def test_corrupt_file_names_the_file(tmp_path):
    path = tmp_path / "broken.parquet"
    pq.write_table(_rows(0, 100), path)
    data = bytearray(path.read_bytes())
    data[8:200] = b"\xff" * 192  # the first column chunk's pages
    path.write_bytes(bytes(data))
    with pytest.raises(InputError) as caught:
        list(contracts.iter_batches(path))
    assert str(path) in str(caught.value)

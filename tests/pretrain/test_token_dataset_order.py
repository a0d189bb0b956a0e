"""The token dataset is the same whatever the number of shards the sample was cut into."""

from __future__ import annotations

import pyarrow.parquet as pq

from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache


def _rows(dataset: TokenDataset) -> list[tuple]:
    return [
        (row["doc_id"], row["sent_id"], row["input_ids"].tolist()) for row in (dataset[i] for i in range(len(dataset)))
    ]


def test_two_shards_in_any_split_are_the_one_file_dataset(tokens_en, tmp_path):
    table = pq.read_table(tokens_en)
    whole = TokenDataset(build_arrow_cache(tokens_en, tmp_path / "whole.arrow"))
    # rows dealt alternately to two shards (as shard = doc_id mod 2 would interleave documents), reversed in each
    for name, part in (
        ("b", table.take(list(range(0, table.num_rows, 2))[::-1])),
        ("a", table.take(list(range(1, table.num_rows, 2))[::-1])),
    ):
        pq.write_table(part.replace_schema_metadata(table.schema.metadata), tmp_path / f"{name}.parquet")
    split = TokenDataset(build_arrow_cache([tmp_path / "a.parquet", tmp_path / "b.parquet"], tmp_path / "split.arrow"))
    assert len(whole) == len(split) == table.num_rows > 10
    assert _rows(split) == _rows(whole)
    keys = [(row[0], row[1]) for row in _rows(whole)]
    assert keys == sorted(keys)
    assert (split.lengths() == whole.lengths()).all() and (split.column("doc_id") == whole.column("doc_id")).all()

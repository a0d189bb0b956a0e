"""Fixed assignment of documents to shards.

The shard count comes from the config, so Snakemake knows every shard file before the run
(no checkpoints): extraction writes each dump part's documents into ``shards`` files, and
every later corpus stage runs once per (part, shard). Page ids are close to uniform within
a dump part, so ``doc_id mod shards`` balances the shards and is easy to check by hand.
"""

from __future__ import annotations


def shard_of(doc_id: int, shards: int) -> int:
    return doc_id % shards


def shard_name(shard: int) -> str:
    return f"shard-{shard:03d}"

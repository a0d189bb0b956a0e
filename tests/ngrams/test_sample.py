"""The sentence sample: exact size, shard-parallel equals one pass, seeded, uniform, shard-invariant."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from pipeline import contracts
from pipeline.ngrams.sample import sentence_hash


@pytest.fixture
def shards(tmp_path):
    paths = []
    for shard, (first_doc, n_docs) in enumerate([(0, 40), (1000, 5), (2000, 120)]):
        rows = [
            {
                "doc_id": first_doc + d,
                "sent_id": s,
                "text": f"doc {first_doc + d} sentence {s}",
                "spans": [{"start": 0, "end": 2, "n": 2, "pmi": 1.5, "source": "pmi"}],
            }
            for d in range(n_docs)
            for s in range(10)
        ]
        path = tmp_path / f"shard-{shard:03d}" / "marked.parquet"
        path.parent.mkdir()
        contracts.write_table(path, pa.Table.from_pylist(rows, schema=contracts.MARKED), contracts.MARKED)
        paths.append(path)
    return paths


def draw(cli, shards, out, size, seed=0, only=None):
    args = ["sample", "--marked", *shards, "--size", size, "--seed", seed, "--out", out]
    assert cli(*args, *(["--only", only] if only else [])) == 0
    return pl.read_parquet(out)


def test_shard_jobs_together_equal_one_pass(cli, tmp_path, shards):
    whole = draw(cli, shards, tmp_path / "all.parquet", 300)
    parts = [draw(cli, shards, tmp_path / f"part{i}.parquet", 300, only=path) for i, path in enumerate(shards)]
    assert whole.height == 300
    assert pl.concat(parts).equals(whole)
    assert whole.select("doc_id", "sent_id").is_unique().all()
    assert whole["spans"][0][0]["source"] == "pmi"


def test_seeded(cli, tmp_path, shards):
    a = draw(cli, shards, tmp_path / "a.parquet", 100, seed=3)
    b = draw(cli, shards, tmp_path / "b.parquet", 100, seed=3)
    c = draw(cli, shards, tmp_path / "c.parquet", 100, seed=4)
    assert a.equals(b) and not a.equals(c)
    # the listing order of the inputs does not matter
    d = draw(cli, list(reversed(shards)), tmp_path / "d.parquet", 100, seed=3)
    assert a.equals(d)


def test_more_than_the_corpus_takes_everything(cli, tmp_path, shards):
    assert draw(cli, shards, tmp_path / "all.parquet", 10**6).height == 1650


def test_inclusion_is_uniform_over_sentences():
    """Bottom-M by a seeded hash: each sentence is in the sample with probability M / N."""
    doc_ids, sent_ids = np.divmod(np.arange(1650), 10)
    doc_ids = doc_ids + np.where(doc_ids < 40, 0, 960)
    hits = np.zeros(1650)
    for seed in range(400):
        hits[np.argsort(sentence_hash(doc_ids, sent_ids, seed), kind="stable")[:330]] += 1
    assert np.allclose(hits.mean() / 400, 0.2)
    assert hits.std() / 400 < 0.035  # binomial(400, 0.2) spread: 0.02
    # a block of 400 sentences (a "shard") gets its share on average
    assert abs(hits[:400].sum() / 400 - 80) < 2


def resharded(tmp_path, shards, n_shards):
    """The same marked sentences spread over n_shards files by doc_id mod n_shards."""
    whole = pl.concat([pl.read_parquet(p) for p in shards])
    paths = []
    for k in range(n_shards):
        path = tmp_path / f"{n_shards}-shards" / f"shard-{k:03d}.parquet"
        path.parent.mkdir(exist_ok=True)
        part = whole.filter(pl.col("doc_id") % n_shards == k).to_arrow()
        contracts.write_table(path, part, contracts.MARKED)
        paths.append(path)
    return paths


@pytest.mark.parametrize("size", [1, 137, 1649])
def test_sample_is_the_same_set_for_1_2_and_3_shards(cli, tmp_path, shards, size):
    samples = []
    for n_shards in (1, 2, 3):
        paths = resharded(tmp_path, shards, n_shards)
        parts = [
            draw(cli, paths, tmp_path / f"{n_shards}-{k}.parquet", size, seed=7, only=path)
            for k, path in enumerate(paths)
        ]
        samples.append(pl.concat(parts).sort("doc_id", "sent_id"))
    assert samples[0].height == size
    assert samples[0].equals(samples[1]) and samples[0].equals(samples[2])


def test_bad_only_is_an_error(cli, tmp_path, shards, capsys):
    stray = tmp_path / "elsewhere.parquet"
    assert cli("sample", "--marked", *shards, "--size", 5, "--only", stray, "--out", tmp_path / "x.parquet") == 2
    assert str(stray) in capsys.readouterr().err
    assert not (tmp_path / "x.parquet").exists()


def test_both_presets_sample_the_same_sentences(cli, data_root, tmp_path):
    """BURT masking reads the burt vocabulary and MiSAD the ulr one (workflow/rules/ngrams.smk); both
    pre-train on the same sentences, since the sample depends on (doc_id, sent_id) and the seed only."""
    samples = {}
    for preset in ("ulr", "burt"):
        out = tmp_path / preset
        sentences = data_root / "reference_pmi" / "sentences.parquet"
        assert (
            cli("ngrams", "--sentences", sentences, "--lang", "en", "--lowercase", "--preset", preset, "--out", out)
            == 0
        )
        samples[preset] = draw(cli, [out / "marked.parquet"], tmp_path / f"{preset}-sample.parquet", 500, seed=3)
    ulr, burt = samples["ulr"], samples["burt"]
    assert ulr.height == 500
    assert ulr.select("doc_id", "sent_id", "text").equals(burt.select("doc_id", "sent_id", "text"))
    assert not ulr["spans"].equals(burt["spans"])  # the same sentences, marked with different vocabularies

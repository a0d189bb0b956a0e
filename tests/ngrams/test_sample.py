"""The sentence sample: exact size, shard-parallel equals one pass, seeded, uniform, shard-invariant."""

from __future__ import annotations

import json

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
    for preset in ("ulr", "burt_recurring"):  # in English, ulr and burt are both the released code's
        out = tmp_path / preset
        sentences = data_root / "reference_pmi" / "sentences.parquet"
        assert (
            cli("ngrams", "--sentences", sentences, "--lang", "en", "--lowercase", "--preset", preset, "--out", out)
            == 0
        )
        samples[preset] = draw(cli, [out / "marked.parquet"], tmp_path / f"{preset}-sample.parquet", 500, seed=3)
    ulr, burt = samples["ulr"], samples["burt_recurring"]
    assert ulr.height == 500
    assert ulr.select("doc_id", "sent_id").equals(burt.select("doc_id", "sent_id"))
    # the English ulr is the released code's (reference mode), whose marked text is its own words: folded
    # as asked and without the [().,?;'!:] it strips; the words are the same
    from pipeline.ngrams.token_batch import REFERENCE_STRIP

    for reference, text in zip(ulr["text"], burt["text"]):
        assert reference.split() == REFERENCE_STRIP.sub("", text.lower()).split()
    assert not ulr["spans"].equals(burt["spans"])  # the same sentences, marked with different vocabularies


def draw_pairs(cli, shards, out, size, seed=0, only=None):
    return draw(cli, [*shards, "--with-next"], out, size, seed, only)


def next_sentences(sampled: pl.DataFrame, every: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``every`` that follow a row of ``sampled`` in its document."""
    following = sampled.select("doc_id", (pl.col("sent_id") + 1).alias("sent_id"))
    return every.join(following, on=["doc_id", "sent_id"], how="semi")


@pytest.mark.parametrize("n_shards", [1, 2, 3])
@pytest.mark.parametrize("size", [137, 1649])
def test_with_next_adds_the_next_sentences_flagged_and_keeps_the_sample(cli, tmp_path, shards, n_shards, size):
    """--with-next (NSP / SOP, ULR-BERT §7.1): the same sampled sentences as without it, flagged, plus
    each one's next sentence of its document; shard jobs find them in their own shard."""
    paths = resharded(tmp_path, shards, n_shards)
    plain, pairs = [], []
    for k, path in enumerate(paths):
        plain.append(draw(cli, paths, tmp_path / f"plain-{k}.parquet", size, seed=7, only=path))
        pairs.append(draw_pairs(cli, paths, tmp_path / f"pairs-{k}.parquet", size, seed=7, only=path))
        assert pairs[-1].filter(pl.col("sampled")).drop("sampled").equals(plain[-1])
    plain, pairs = pl.concat(plain).sort("doc_id", "sent_id"), pl.concat(pairs).sort("doc_id", "sent_id")
    every = pl.concat([pl.read_parquet(p) for p in shards]).sort("doc_id", "sent_id")
    assert pairs.select("doc_id", "sent_id").is_unique().all()
    assert pairs.filter(pl.col("sampled")).drop("sampled").equals(plain)
    expected = pl.concat([plain, next_sentences(plain, every)]).unique().sort("doc_id", "sent_id")
    assert pairs.drop("sampled").equals(expected)
    # the last sentence of a document (sent_id 9 here) has no next sentence: it adds no row
    without_next = plain.filter(pl.col("sent_id") == 9).height
    assert next_sentences(plain, pairs).height == size - without_next > 0
    stats = [json.loads((tmp_path / f"pairs-{k}.stats.json").read_text()) for k in range(n_shards)]
    assert sum(s["sentences_out"] for s in stats) == size  # the sampled rows only
    assert sum(s["sampled_without_next"] for s in stats) == without_next
    assert sum(s["next_only_rows"] for s in stats) == pairs.filter(~pl.col("sampled")).height


def test_with_next_takes_only_sentences_in_the_input(cli, tmp_path, shards):
    """A sampled sentence whose next sentence is not in the input (a gap in sent_id) gets none."""
    whole = pl.concat([pl.read_parquet(p) for p in shards]).filter(pl.col("sent_id") % 2 == 0)
    path = tmp_path / "gappy.parquet"
    contracts.write_table(path, whole.to_arrow(), contracts.MARKED)
    pairs = draw_pairs(cli, [path], tmp_path / "pairs.parquet", 10**6)
    assert pairs["sampled"].all() and pairs.height == whole.height
    stats = json.loads((tmp_path / "pairs.stats.json").read_text())
    assert stats["sampled_with_next"] == 0 and stats["next_only_rows"] == 0

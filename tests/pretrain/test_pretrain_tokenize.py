"""tiny-model and tokenize: a reproducible tiny BERT, and spans mapped onto sub-word tokens."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pretrain_builders import TINY_SIZE, write_marked
from transformers import AutoModelForMaskedLM, AutoTokenizer

from pipeline import contracts
from pipeline.errors import InputError
from pipeline.models.directory import vocab_sha256


def test_tiny_model_loads_and_is_reproducible(tiny_en, marked_en, tmp_path, cli):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    model = AutoModelForMaskedLM.from_pretrained(tiny_en)
    assert model.config.hidden_size == 32 and model.config.num_hidden_layers == 2
    assert model.config.vocab_size == len(tokenizer) <= 1500
    assert tokenizer.cls_token == "[CLS]" and tokenizer.is_fast
    again = tmp_path / "again"
    assert (
        cli(
            "tiny-model",
            "--sentences",
            marked_en,
            "--lang",
            "en",
            "--out",
            again,
            *TINY_SIZE,
        )
        == 0
    )
    assert (again / "model.safetensors").read_bytes() == (tiny_en / "model.safetensors").read_bytes()
    assert (again / "tokenizer.json").read_text() == (tiny_en / "tokenizer.json").read_text()
    record = json.loads((tiny_en / "tiny_model.json").read_text())["provenance"]
    assert record["vocab_sha256"] == vocab_sha256(tokenizer) and record["seed"] == 0


def test_token_spans_cover_exactly_the_marked_words(tokens_en, marked_en, tiny_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    normalize = tokenizer.backend_tokenizer.normalizer.normalize_str  # lower case, accents stripped
    marked = {(r["doc_id"], r["sent_id"]): r for r in pq.read_table(marked_en).to_pylist()}
    rows = contracts.read_table(tokens_en, contracts.TOKENS).to_pylist()
    assert len(rows) == len(marked)
    checked = 0
    for row in rows:
        source = marked[(row["doc_id"], row["sent_id"])]
        ids, word_ids = row["input_ids"], row["word_ids"]
        assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id and len(ids) <= 64
        assert word_ids[0] == word_ids[-1] == -1 and min(word_ids[1:-1]) >= 0
        words = source["text"].split()
        for span in row["ngram_spans"]:
            units = sorted(set(word_ids[span["start"] : span["end"]]))
            assert units == list(range(units[0], units[-1] + 1))
            # the whole words, nothing more: neighbours belong to other words
            assert word_ids[span["start"] - 1] != units[0] and word_ids[span["end"]] != units[-1]
            text = normalize(" ".join(words[units[0] : units[-1] + 1]))
            decoded = tokenizer.decode(ids[span["start"] : span["end"]])
            assert decoded.replace(" ", "") == text.replace(" ", "") or "[UNK]" in decoded
            checked += 1
        entity_keys = {(s["start"], s["end"]) for s in row["entity_spans"]}
        assert entity_keys <= {(s["start"], s["end"]) for s in row["ngram_spans"]}
    assert checked > 500


def test_tokenize_counts_truncated_spans_and_records_the_vocabulary(tokens_en, tiny_en):
    stats = json.loads(tokens_en.with_suffix(".stats.json").read_text())
    assert stats["sentences_truncated"] > 0 and stats["spans_truncated"] > 0
    assert stats["spans_kept"] + stats["spans_truncated"] + stats.get("spans_misaligned", 0) == stats["spans_in"]
    params = contracts.read_provenance(tokens_en)["params"]
    assert params["vocab_sha256"] == vocab_sha256(AutoTokenizer.from_pretrained(tiny_en))
    assert params["max_length"] == 64


def ocnli_sentences(data_root, count: int) -> list[str]:
    lines = (data_root / "chinese" / "ocnli" / "dev.json").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["sentence1"] for line in lines[:count]]


def test_chinese_spans_are_characters_and_digit_runs_are_not_split(data_root, tmp_path, cli):
    texts = ocnli_sentences(data_root, 300)
    special = "他在1990年去了北京"  # the digits are one or two WordPiece tokens but four characters
    corpus = tmp_path / "corpus.parquet"
    write_marked(
        corpus,
        [
            {"doc_id": i // 10, "sent_id": i % 10, "text": t, "spans": []}
            for i, t in enumerate([*texts, special, special, special])
        ],
    )
    model = tmp_path / "tiny-zh"
    assert (
        cli(
            "tiny-model",
            "--sentences",
            corpus,
            "--lang",
            "zh",
            "--out",
            model,
            "--vocab-size",
            "2000",
            "--hidden",
            "32",
        )
        == 0
    )
    tokenizer = AutoTokenizer.from_pretrained(model)
    offsets = tokenizer(special, return_offsets_mapping=True)["offset_mapping"]
    inside = next(a + 1 for a, b in offsets if b - a >= 2)  # a character inside a multi-character token
    marked = tmp_path / "marked.parquet"
    write_marked(
        marked,
        [
            {
                "doc_id": 999,
                "sent_id": 0,
                "text": special,
                "spans": [
                    {"start": 0, "end": 2, "n": 2, "pmi": 1.0, "source": "pmi"},  # 他在
                    {"start": inside, "end": 7, "n": 7 - inside, "pmi": 1.0, "source": "pmi"},  # cuts a token
                    {"start": 9, "end": 11, "n": 2, "pmi": 1.0, "source": "entity"},
                ],
            }
        ],
    )  # 北京
    out = tmp_path / "tokens.parquet"
    assert cli("tokenize", "--marked", marked, "--model", model, "--lang", "zh", "--out", out) == 0
    row = pq.read_table(out).to_pylist()[0]
    spans = [(s["start"], s["end"]) for s in row["ngram_spans"]]
    assert [tokenizer.decode(row["input_ids"][a:b]).replace(" ", "") for a, b in spans] == ["他在", "北京"]
    assert len(row["entity_spans"]) == 1
    assert json.loads(out.with_suffix(".stats.json").read_text())["spans_misaligned"] == 1


def test_tokenize_rejects_bad_spans_and_other_inputs(marked_en, tiny_en, tmp_path, cli, capsys):
    bad = tmp_path / "bad.parquet"
    write_marked(
        bad,
        [
            {
                "doc_id": 1,
                "sent_id": 0,
                "text": "two words",
                "spans": [{"start": 1, "end": 3, "n": 2, "pmi": 0.0, "source": "pmi"}],
            }
        ],
    )
    assert cli("tokenize", "--marked", bad, "--model", tiny_en, "--lang", "en", "--out", tmp_path / "o.parquet") == 2
    assert "outside the sentence" in capsys.readouterr().err and not (tmp_path / "o.parquet").exists()
    wrong = tmp_path / "wrong.parquet"
    pq.write_table(pa.table({"doc_id": [1], "text": ["x y"]}), wrong)
    assert cli("tokenize", "--marked", wrong, "--model", tiny_en, "--lang", "en", "--out", tmp_path / "o.parquet") == 2
    assert "missing column" in capsys.readouterr().err
    assert (
        cli(
            "tokenize",
            "--marked",
            marked_en,
            "--model",
            tmp_path / "nowhere",
            "--lang",
            "en",
            "--out",
            tmp_path / "o.parquet",
        )
        == 2
    )


@pytest.mark.parametrize("rows", [1, 7])
def test_memory_mapped_dataset_matches_the_parquet_rows(tokens_en, tmp_path, rows):
    from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache

    dataset = TokenDataset(build_arrow_cache(tokens_en, tmp_path / "t.arrow", batch_rows=rows * 50))
    table = pq.read_table(tokens_en).to_pylist()
    assert len(dataset) == len(table)
    for i in (0, 1, 49, 50, 51, len(table) - 1):
        item = dataset[i]
        assert item["idx"] == i and item["doc_id"] == table[i]["doc_id"]
        assert item["input_ids"].tolist() == table[i]["input_ids"]
        assert item["ngram_spans"].tolist() == [[s["start"], s["end"]] for s in table[i]["ngram_spans"]]
    assert np.array_equal(dataset.lengths(), [len(r["input_ids"]) for r in table])
    with pytest.raises(IndexError):
        dataset[len(table)]


def test_tiny_model_rejects_files_without_text(tmp_path, cli, capsys):
    wrong = tmp_path / "wrong.parquet"
    pq.write_table(pa.table({"doc_id": [1], "sentence": ["x y"]}), wrong)
    assert cli("tiny-model", "--sentences", wrong, "--lang", "en", "--out", tmp_path / "m") == 2
    assert "missing column 'text'" in capsys.readouterr().err and not (tmp_path / "m").exists()
    assert cli("tiny-model", "--sentences", wrong, "--lang", "fr", "--out", tmp_path / "m") == 2


def test_shards_of_several_parts_share_file_names(marked_en, tiny_en, tmp_path, cli):
    """The sample's shards are part/shard-NNN.parquet: equal names in different folders are one corpus."""
    import shutil

    import pyarrow.parquet as pq

    for part in ("part-a", "part-b"):
        (tmp_path / part).mkdir()
        shutil.copy(marked_en, tmp_path / part / "shard-000.parquet")
    out = tmp_path / "tokens.parquet"
    assert (
        cli(
            "tokenize",
            "--marked",
            tmp_path / "part-a" / "shard-000.parquet",
            tmp_path / "part-b" / "shard-000.parquet",
            "--model",
            tiny_en,
            "--lang",
            "en",
            "--out",
            out,
        )
        == 0
    )
    assert pq.read_metadata(out).num_rows == 2 * pq.read_metadata(marked_en).num_rows


def test_a_with_next_sample_keeps_its_sampled_column(marked_en, tiny_en, tmp_path, cli, capsys):
    """sample --with-next (the NSP / SOP sample, ULR-BERT §7.1) → tokens pairs: the flag per row, carried
    through tokenize and the memory-mapped dataset; a plain shard among such shards is refused."""
    from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache

    sample, plain = tmp_path / "pairs" / "shard-000.parquet", tmp_path / "plain" / "shard-000.parquet"
    for out, extra in ((sample, ["--with-next"]), (plain, [])):
        assert cli("sample", "--marked", marked_en, "--size", 100, "--seed", 1, *extra, "--out", out) == 0
    tokens = tmp_path / "tokens.parquet"
    assert cli("tokenize", "--marked", sample, "--model", tiny_en, "--lang", "en", "--out", tokens) == 0
    contracts.check_schema(tokens, contracts.TOKENS_PAIRS)
    marked = pq.read_table(sample).sort_by([("doc_id", "ascending"), ("sent_id", "ascending")])
    dataset = TokenDataset(build_arrow_cache(tokens, tmp_path / "tokens.arrow"))
    assert dataset.has_sampled and dataset.column("sampled").sum() == 100
    assert dataset.column("sampled").tolist() == marked.column("sampled").to_pylist()
    assert json.loads(tokens.with_suffix(".stats.json").read_text())["provenance"]["params"]["pairs"] is True
    mixed = ["--marked", sample, plain, "--model", tiny_en, "--lang", "en", "--out", tmp_path / "mixed.parquet"]
    assert cli("tokenize", *mixed) == 2
    assert "a file without column 'sampled' among --with-next ones" in capsys.readouterr().err
    plain_tokens = tmp_path / "plain.parquet"
    assert cli("tokenize", "--marked", plain, "--model", tiny_en, "--lang", "en", "--out", plain_tokens) == 0
    assert "sampled" not in pq.read_schema(plain_tokens).names
    assert not TokenDataset(build_arrow_cache(plain_tokens, tmp_path / "plain.arrow")).has_sampled
    with pytest.raises(InputError, match="a file without column .sampled. among --with-next ones"):
        build_arrow_cache([tokens, plain_tokens], tmp_path / "mixed.arrow")


def test_a_sentence_of_unknown_tokens_only_is_dropped_and_counted(tiny_en, tmp_path, cli):
    """[UNK] is one of the tokenizer's special ids, which masking never draws: a sentence of characters
    the vocabulary lacks (rare CJK characters for a Chinese BERT) has nothing to mask. tokenize drops it,
    as it drops an empty one, instead of leaving the pretrain stage's check to stop a whole job on it
    (found by the paper-zh rehearsal: a tiny vocabulary made '各地区音乐' all [UNK])."""
    from pipeline.pretrain.token_dataset import check_token_rows

    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    unknown = "𠀀𠀁𠀂"
    assert set(tokenizer(unknown)["input_ids"]) <= set(tokenizer.all_special_ids)
    marked = tmp_path / "marked.parquet"
    rows = [{"doc_id": 1, "sent_id": i, "text": t, "spans": []} for i, t in enumerate(["the city of", unknown])]
    write_marked(marked, rows)
    out = tmp_path / "tokens.parquet"
    assert cli("tokenize", "--marked", marked, "--model", tiny_en, "--lang", "en", "--out", out) == 0
    kept = pq.read_table(out).to_pylist()
    assert [row["sent_id"] for row in kept] == [0]
    assert json.loads(out.with_suffix(".stats.json").read_text())["sentences_unknown_only"] == 1
    check_token_rows(out, len(tokenizer), special_ids=tokenizer.all_special_ids)  # pretrain's check passes

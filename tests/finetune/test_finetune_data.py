"""NLI and PPDB 2.0 readers, PI negative sampling, PTC mapping and balance, on real and official-format data."""

from __future__ import annotations

import gzip
import json
import zipfile
from collections import Counter

import pytest
from finetune_builders import NLI_TRAIN, PPDB

from pipeline.errors import InputError
from pipeline.finetune import ppdb, ppdb_tasks
from pipeline.finetune.ppdb import PPDBPair
from pipeline.tasks import nli


def test_snli_jsonl_skips_pairs_without_gold_label():
    pairs = nli.read_source(str(NLI_TRAIN))
    rows = [json.loads(line) for line in NLI_TRAIN.read_text().splitlines()]
    gold = [r for r in rows if r["gold_label"] != "-"]
    assert len(pairs) == len(gold) and pairs.skipped == len(rows) - len(gold) == 1
    assert pairs.premises[0] == gold[0]["sentence1"] and pairs.hypotheses[0] == gold[0]["sentence2"]
    assert [nli.LABELS[i] for i in pairs.labels] == [r["gold_label"] for r in gold]


def test_three_file_layout_and_mnli_csv_on_the_real_data(data_root):
    snli = nli.read_source(f"{data_root}/nli/snli_dev_test:dev")
    assert len(snli) == 9842 and snli.skipped == 0  # SOURCES.md: dev 9,842 pairs with a gold label
    assert snli.premises[0].startswith("Two women are embracing") and nli.LABELS[snli.labels[0]] == "neutral"
    mnli = nli.read_source(f"{data_root}/nli/mnli_dev/multinli_1.0_dev_matched.csv")
    assert len(mnli) == 9815 and mnli.skipped == 185  # 10,000 rows, 185 without a gold label
    counts = Counter(nli.LABELS[i] for i in mnli.labels)
    assert counts == {"entailment": 3479, "neutral": 3123, "contradiction": 3213}
    merged = nli.read_sources(
        [f"{data_root}/nli/snli_dev_test:dev", f"{data_root}/nli/mnli_dev/multinli_1.0_dev_matched.csv"]
    )
    assert len(merged) == len(snli) + len(mnli) and len(merged.files) == 4


def test_official_zip_is_read_without_unpacking(tmp_path):
    archive = tmp_path / "snli_1.0.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("snli_1.0/snli_1.0_train.jsonl", NLI_TRAIN.read_text())
        bundle.writestr("snli_1.0/snli_1.0_dev.jsonl", "")
    assert len(nli.read_source(f"{archive}:train")) == len(nli.read_source(str(NLI_TRAIN)))


@pytest.mark.parametrize(
    "name, text, where",
    [
        (
            "bad-label.jsonl",
            (
                '{"sentence1": "A man.", "sentence2": "A person.", "gold_label": "entailment"}\n'
                '{"sentence1": "A man.", "sentence2": "A dog.", "gold_label": "paraphrase"}\n'
            ),
            "line 2",
        ),
        (
            "no-label.csv",
            "pairID,sentence1,sentence2,label\n1e,A man.,A person.,entailment\n2n,A man.,A dog.\n",
            "line 3",
        ),
        ("broken.jsonl", '{"sentence1": "A man.", "sentence2": "A pers', "line 1"),
    ],
)
def test_bad_nli_files_name_file_and_line(tmp_path, name, text, where):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as error:
        nli.read_source(str(path))
    assert error.value.path == str(path) and error.value.where == where


def test_three_file_layout_errors(tmp_path):
    for name, text in (
        ("s1.dev", "A man sleeps .\nA dog runs .\n"),
        ("s2.dev", "A man rests .\nA cat runs .\n"),
        ("labels.dev", "entailment\ncontradictions\n"),
    ):
        (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as error:
        nli.read_source(f"{tmp_path}:dev")
    assert error.value.path == str(tmp_path / "labels.dev") and error.value.where == "line 2"
    with pytest.raises(InputError, match="DIR:SPLIT"):
        nli.read_source(str(tmp_path))
    with pytest.raises(InputError, match="missing file"):
        nli.read_source(f"{tmp_path}:test")
    with pytest.raises(InputError, match="not found"):
        nli.read_source(str(tmp_path / "absent.jsonl"))


def test_ppdb_reader_on_official_lines_plain_and_gzipped(tmp_path):
    pairs = ppdb.read(PPDB)
    assert len(pairs) == len(PPDB.read_text().splitlines())
    first = PPDB.read_text().splitlines()[0].split(" ||| ")
    assert pairs[0] == PPDBPair(first[1], first[2], first[5])
    assert {p.relation for p in pairs} == set(ppdb.RELATIONS)
    packed = tmp_path / "ppdb-2.0-s-phrasal.gz"
    packed.write_bytes(gzip.compress(PPDB.read_bytes()))
    assert ppdb.read(packed) == pairs


def test_ppdb_line_with_wrong_field_count_names_file_and_line(tmp_path):
    lines = PPDB.read_text().splitlines()
    lines[3] = " ||| ".join(lines[3].split(" ||| ")[:5])  # the relation column lost
    path = tmp_path / "ppdb-2.0-s-phrasal"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as error:
        ppdb.read(path)
    assert error.value.path == str(path) and error.value.where == "line 4" and "found 5" in error.value.message
    lines[3] = PPDB.read_text().splitlines()[3].rsplit(" ||| ", 1)[0] + " ||| Synonym"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="'Synonym' is not one of"):
        ppdb.read(path)


@pytest.mark.parametrize("k", [1, 3, 7])
def test_pi_negatives_never_the_true_paraphrase_and_k_honoured(k):
    pairs = ppdb.read(PPDB)
    examples = ppdb_tasks.paraphrase_identification(pairs, k, seed=0)
    positives = [p for p in pairs if p.relation in ppdb_tasks.PARAPHRASE_RELATIONS]
    related = {(p.phrase, p.paraphrase) for p in pairs} | {(p.paraphrase, p.phrase) for p in pairs}
    assert len(examples) == len(positives) * (k + 1)
    for i, pair in enumerate(positives):
        block = slice(i * (k + 1), (i + 1) * (k + 1))
        first, second, labels = examples.first[block], examples.second[block], examples.labels[block]
        assert labels == [1] + [0] * k and set(first) == {pair.phrase} and second[0] == pair.paraphrase
        negatives = second[1:]
        assert len(set(negatives)) == k and pair.paraphrase not in negatives and pair.phrase not in negatives
        assert not any((pair.phrase, negative) in related for negative in negatives)
    again = ppdb_tasks.paraphrase_identification(pairs, k, seed=0)
    assert again == examples and ppdb_tasks.paraphrase_identification(pairs, k, seed=1) != examples


def test_ptc_mapping_on_official_lines_and_balanced_classes():
    pairs = ppdb.read(PPDB)
    examples = ppdb_tasks.pairwise_text_classification(pairs, seed=0)
    by_pair = {(p.phrase, p.paraphrase): p.relation for p in pairs}
    expected = {
        "Equivalence": "equivalence",
        "ForwardEntailment": "entailment",
        "ReverseEntailment": "entailment",
        "Independent": "independent",
    }
    for first, second, label in zip(examples.first, examples.second, examples.labels):
        relation = by_pair[(first, second)]
        assert relation not in ("Exclusion", "OtherRelated")
        assert ppdb_tasks.PTC_CLASSES[label] == expected[relation]
    counts = Counter(examples.labels)
    smallest = min(Counter(expected[p.relation] for p in pairs if p.relation in expected).values())
    assert counts == {0: smallest, 1: smallest, 2: smallest}
    # Forward and Reverse entailment both reach the entailment class
    relations = {by_pair[(a, b)] for a, b, label in zip(examples.first, examples.second, examples.labels) if label == 1}
    assert relations <= {"ForwardEntailment", "ReverseEntailment"}


def test_ptc_needs_every_class():
    pairs = [PPDBPair("a dog", "an animal", "ForwardEntailment"), PPDBPair("a big car", "a large car", "Equivalence")]
    with pytest.raises(InputError, match="independent"):
        ppdb_tasks.pairwise_text_classification(pairs, seed=0)

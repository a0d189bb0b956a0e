"""PPDB 2.0 readers, PI negative sampling, PTC mapping and balance, on real and official-format data."""

from __future__ import annotations

import gzip
from collections import Counter

import pytest
from finetune_builders import PPDB

from pipeline.errors import InputError
from pipeline.finetune import ppdb, ppdb_tasks
from pipeline.finetune.ppdb import PPDBPair


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

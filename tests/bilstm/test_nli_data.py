"""The NLI readers on real SNLI / MultiNLI rows (both layouts) and on bad labels."""

from __future__ import annotations

import pytest

from pipeline.bilstm import nli_data
from pipeline.errors import InputError


def test_snli_three_file_layout_on_real_rows(data_root):
    pairs = nli_data.read(data_root / "nli/snli_dev_test/s1.dev")
    assert len(pairs) == 9842 and pairs.skipped == 0  # SOURCES.md: dev 9,842 gold pairs
    assert pairs.premises[0] == "Two women are embracing while holding to go packages ."
    assert pairs.hypotheses[0].startswith("The sisters are hugging goodbye")
    assert nli_data.LABELS[pairs.labels[0]] == "neutral"


def test_csv_layout_drops_pairs_without_gold_label(data_root):
    matched = nli_data.read(data_root / "nli/mnli_dev/multinli_1.0_dev_matched.csv")
    assert (len(matched), matched.skipped) == (9815, 185)  # SOURCES.md: 185 '-' rows dropped
    snli = nli_data.read(data_root / "nli/snli_dev_test_csv/snli_1.0_dev.csv")
    assert (len(snli), snli.skipped) == (9842, 158)
    # the CSV and the tokenized copy hold the same labels in the same order
    assert snli.labels == nli_data.read(data_root / "nli/snli_dev_test/s1.dev").labels


def test_the_original_tab_separated_release_layout(tmp_path):
    path = tmp_path / "snli_1.0_train.txt"
    path.write_text(
        "gold_label\tsentence1_binary_parse\tsentence1\tsentence2\n"
        'contradiction\t( ( A dog ) runs )\tA dog runs.\tA cat "sleeps".\n-\t( x )\tx\ty\n'
    )
    pairs = nli_data.read(path)
    assert (pairs.premises, pairs.hypotheses, pairs.labels, pairs.skipped) == (
        ["A dog runs."],
        ['A cat "sleeps".'],
        [2],
        1,
    )


def test_a_label_outside_the_set_names_file_and_line(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("pairID,sentence1,sentence2,label\n1,a,b,neutral\n2,c,d,maybe\n")
    with pytest.raises(InputError) as error:
        nli_data.read(path)
    assert (error.value.path, error.value.where) == (str(path), "line 3")
    for name, text in (("s1.x", "a\nb\n"), ("s2.x", "c\nd\n"), ("labels.x", "entailment\nENTAILS\n")):
        (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as error:
        nli_data.read(tmp_path / "s1.x")
    assert (error.value.path, error.value.where) == (str(tmp_path / "labels.x"), "line 2")

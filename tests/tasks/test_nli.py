"""SNLI / MultiNLI readers (pipeline.tasks.nli) in every official layout, on real and official-format data."""

from __future__ import annotations

import json
import zipfile
from collections import Counter

import pytest
from testdata import DEMO_DATA

from pipeline.errors import InputError
from pipeline.tasks import nli

NLI_TRAIN = DEMO_DATA / "nli" / "snli_1.0_demo_train.jsonl"


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


def _nli_csv(path, rows):
    path.write_text("pairID,sentence1,sentence2,label\n" + "".join(row + "\n" for row in rows), encoding="utf-8")
    return str(path)


def test_quoted_commas_in_one_line_csv_fields_still_read(tmp_path):
    """MultiNLI's CSV quotes a sentence holding a comma: that is CSV on one line, read as such."""
    rows = ["0,A man rides.,Someone rides.,entailment", '1,"I like him, but not much.",A man rides.,neutral']
    pairs = nli.read_source(_nli_csv(tmp_path / "nli.csv", rows))
    assert len(pairs) == 2 and pairs.premises[1] == "I like him, but not much."


def test_stray_quote_in_a_tab_separated_release_is_text(tmp_path):
    """The .txt / .tsv releases are read without quote processing (csv.QUOTE_NONE, as their own loaders)."""
    rows = ["gold_label\tsentence1\tsentence2"] + [
        f"entailment\tA man number {i} rides.\tSomeone rides." for i in range(12)
    ]
    rows[4] = 'entailment\t"A stray quote opens here\tSomeone rides.'
    rows[5] = 'entailment\tand closes" here\tSomeone rides.'
    path = tmp_path / "snli_1.0_dev.tsv"
    path.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    pairs = nli.read_source(str(path))
    assert len(pairs) == 12 and pairs.premises[3] == '"A stray quote opens here'

"""Every task's reader on the real files (counts as SOURCES.md of the public data documents them), and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.classify import tasks
from pipeline.errors import InputError

# (task, split) -> examples; pairs without a gold label ("-") are dropped (MNLI, OCNLI)
REAL_COUNTS = {
    ("cola", "train"): 8551,
    ("cola", "dev"): 1043,
    ("cola", "test"): 1063,
    ("sst2", "train"): 67349,
    ("sst2", "dev"): 872,
    ("sst2", "test"): 1821,
    ("mrpc", "train"): 3668,
    ("mrpc", "dev"): 408,
    ("mrpc", "test"): 1725,
    ("rte", "train"): 2490,
    ("rte", "dev"): 277,
    ("rte", "test"): 3000,
    ("qnli", "dev"): 5463,
    ("qnli", "test"): 5463,
    ("mnli", "dev"): 10000 - 185,
    ("mnli", "dev_mm"): 10000 - 168,
    ("stsb", "train"): 5749,
    ("stsb", "dev"): 1500,
    ("stsb", "test"): 1379,
    ("tnews", "train"): 1185,
    ("tnews", "dev"): 1098,
    ("tnews", "test"): 2010,
    ("iflytek", "train"): 3024,
    ("iflytek", "dev"): 1373,
    ("iflytek", "test"): 1749,
    ("cluewsc", "train"): 160,
    ("cluewsc", "dev"): 159,
    ("cluewsc", "test"): 976,
    ("afqmc", "dev"): 4316,
    ("csl", "train"): 160,
    ("csl", "dev"): 160,
    ("csl", "test"): 2838,
    ("ocnli", "dev"): 3000 - 50,
    ("cmrc2018", "dev"): 3219,
    ("chid", "train"): 202,
    ("chid", "dev"): 202,
    ("chid", "test"): 2002,
    ("c3", "train"): 5856 + 6013,
    ("c3", "dev"): 1825 + 1991,
    ("c3", "test"): 1890 + 2002,
}
UNLABELLED_TESTS = {"cola", "sst2", "mrpc", "rte", "qnli"}  # GLUE test labels are not public


@pytest.mark.parametrize("task_name, split", sorted(REAL_COUNTS))
def test_reader_on_real_rows(data_root, task_name, split):
    task = tasks.TASKS[task_name]
    examples = task.read(task.split_files(data_root, split))
    assert len(examples) == REAL_COUNTS[(task_name, split)]
    labelled = [e.label is not None for e in examples]
    assert all(labelled) if not (split == "test" and task_name in UNLABELLED_TESTS) else not any(labelled)
    # CoLA train/dev have no ids (the line number stands in); MultiNLI mismatched repeats a few pairIDs
    assert len({e.id for e in examples}) == len(examples) or task_name in ("cola", "mnli")
    if task.head == "classification" and all(labelled):
        assert {e.label for e in examples} <= set(task.labels)
    if task.head == "choice":
        assert all(0 <= e.label < len(e.choices) for e in examples if e.label is not None)


def test_every_task_of_the_papers_tables_is_registered():
    assert set(tasks.GLUE_TASKS) == {"cola", "sst2", "mnli", "qnli", "rte", "mrpc", "qqp", "stsb"}
    assert set(tasks.CLUE_TASKS) == {"tnews", "iflytek", "cluewsc", "afqmc", "csl", "ocnli", "cmrc2018", "chid", "c3"}
    assert tasks.get("SST-2") is tasks.TASKS["sst2"] and tasks.get("wsc") is tasks.TASKS["cluewsc"]
    with pytest.raises(InputError, match="unknown task"):
        tasks.get("wnli")


def test_real_rows_keep_their_text(data_root):
    """Quirks of the files: MRPC's BOM and unbalanced quotes, CSL's CRLF, IFLYTEK's U+2028, WSC's spans."""
    mrpc = tasks.TASKS["mrpc"].read(tasks.TASKS["mrpc"].split_files(data_root, "dev"))
    assert mrpc[0].label == "1" and mrpc[0].text_b.startswith('"The foodservice pie business')
    csl = tasks.TASKS["csl"].read(tasks.TASKS["csl"].split_files(data_root, "train"))
    assert not any("\r" in e.text_b or "\r" in e.text_a for e in csl)
    assert csl[0].text_a.split()[0] == "无线传感器网络"
    iflytek = tasks.TASKS["iflytek"].read(tasks.TASKS["iflytek"].split_files(data_root, "train"))
    assert any("\u2028" in e.text_a for e in iflytek)
    wsc = tasks.TASKS["cluewsc"].read(tasks.TASKS["cluewsc"].split_files(data_root, "train"))
    assert wsc[0].text_a == "为什么要出现一个身穿军装的高大男人？就像一片_树叶_飘入了树林，[他]走到了我的家人中间。"
    assert tasks.TASKS["tnews"].num_labels == 15 and tasks.TASKS["iflytek"].num_labels == 119
    cmrc = tasks.TASKS["cmrc2018"].read(tasks.TASKS["cmrc2018"].split_files(data_root, "dev"))
    first = cmrc[0]
    text, start = first.answers[0]
    assert first.context[start : start + len(text)] == text == "光荣和ω-force"


def test_qqp_and_glue_releases_by_column_name(tmp_path):
    """QQP, MNLI train and GLUE's STS-B are absent here: their GLUE layouts, written as the release has them."""
    (tmp_path / "glue/QQP").mkdir(parents=True)
    (tmp_path / "glue/QQP/dev.tsv").write_text(
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        "201359\t303345\t303346\tWhy are African-Americans so beautiful?\tWhy are hispanics so beautiful?\t0\n"
        "263843\t69383\t380476\tI want to pursue PhD in Computer Science about social network?\t"
        "I handle social media for a non-profit.\t0\n"
    )
    (tmp_path / "glue/QQP/test.tsv").write_text(
        "id\tquestion1\tquestion2\n0\tWhy do rockets look white?\tWhy are rockets and boosters painted white?\n"
    )
    qqp = tasks.TASKS["qqp"]
    dev = qqp.read(qqp.split_files(tmp_path, "dev"))
    assert [(e.id, e.label) for e in dev] == [("201359", "0"), ("263843", "0")]
    assert qqp.read(qqp.split_files(tmp_path, "test"))[0].label is None
    (tmp_path / "glue/MNLI").mkdir()
    header = (
        "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"
        "sentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label\n"
    )
    (tmp_path / "glue/MNLI/train.tsv").write_text(
        header + "0\t31193\t31193n\tgovernment\t(x)\t(y)\t(X)\t(Y)\tConceptually cream skimming has two basic "
        "dimensions - product and geography.\tProduct and geography are what make cream skimming work. \tneutral\t"
        "neutral\n"
    )
    mnli = tasks.TASKS["mnli"].read(tasks.TASKS["mnli"].split_files(tmp_path, "train"))
    assert mnli[0].label == "neutral" and mnli[0].text_a.startswith("Conceptually")


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "name, relative, text, message",
    [
        (
            "rte",
            "glue/RTE/dev.tsv",
            "index\tsentence1\tsentence2\tlabel\n0\tA man sleeps.\tA man is asleep.\tmaybe\n",
            r"label 'maybe' is not one of the task's labels \(entailment, not_entailment\)",
        ),
        (
            "rte",
            "glue/RTE/dev.tsv",
            "index\tsentence1\tlabel\n0\tA man sleeps.\tentailment\n",
            "no column 'sentence2' in the header",
        ),
        ("rte", "glue/RTE/dev.tsv", "index\tsentence1\tsentence2\tlabel\n", "no examples"),
        ("cola", "glue/CoLA/dev.tsv", "gj04\t1\t\tThe book was written.\ngj04\t1\tThe book.\n", "3 fields"),
        (
            "tnews",
            "chinese/tnews/dev.json",
            '{"label": "105", "sentence": "农村依然很重视土葬", "id": 0}\n',
            "label '105' is not one of",
        ),
        (
            "afqmc",
            "chinese/afqmc/dev.json",
            '{"sentence1": "双十一花呗提额在哪", "label": "0", "idx": 0}\n',
            "missing key 'sentence2'",
        ),
        (
            "cluewsc",
            "chinese/cluewsc2020/dev.json",
            (
                '{"target": {"span2_index": 3, "span1_index": 0, "span1_text": "毛豆", "span2_text": "他"}, "idx": 0, '
                '"label": "true", "text": "毛豆说她很生气"}\n'
            ),
            "span2_text '他' is not at span2_index 3",
        ),
    ],
)
def test_bad_input_names_the_file_and_line(tmp_path, name, relative, text, message):
    task = tasks.TASKS[name]
    path = _write(tmp_path / relative, text)
    with pytest.raises(InputError, match=message) as error:
        task.read(task.split_files(tmp_path, "dev"))
    assert error.value.path == str(path)


def test_unpack_a_member_of_a_release_archive(cli, tmp_path, capsys):
    import zipfile

    archive = tmp_path / "clue-afqmc.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("train.json", '{"sentence1": "花呗怎么还款", "sentence2": "花呗如何还钱", "label": "1"}\n')
    out = tmp_path / "chinese/afqmc/train.json"
    assert cli("classify-unpack", "--archive", archive, "--member", "train.json", "--out", out) == 0
    assert tasks.TASKS["afqmc"].read([out])[0].label == "1"
    assert cli("classify-unpack", "--archive", archive, "--member", "dev.json", "--out", tmp_path / "x.json") == 2
    assert "no member 'dev.json'" in capsys.readouterr().err and not (tmp_path / "x.json").exists()


def _chid_release(data_root, folder: Path, rows: int = 6) -> list[dict]:
    """CLUE's own ChID layout (candidates + passages with numbered blanks; answers in dev_answer.json),
    written from real FewCLUE ChID rows: two rows per line as two passages, the first with a second
    blank appended (#idiom0001NN#)."""
    few = [json.loads(line) for line in (data_root / "chinese/fewclue/chid/dev_few_all.json").open(encoding="utf-8")]
    lines, answers = [], {}
    for k in range(0, 2 * rows, 2):
        first, second = few[k], few[k + 1]
        tags = (f"#idiom{k:06d}#", f"#idiom{k + 1:06d}#", f"#idiom{100 + k:06d}#")
        passages = [
            first["content"].replace("#idiom#", tags[0], 1) + tags[2],
            second["content"].replace("#idiom#", tags[1], 1),
        ]
        answers.update({tags[0]: first["answer"], tags[1]: 0, tags[2]: 1})
        lines.append({"candidates": first["candidates"], "content": passages})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dev.json").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    (folder / "dev_answer.json").write_text(json.dumps(answers, ensure_ascii=False), "utf-8")
    return lines


def test_chid_in_clues_own_layout(data_root, tmp_path):
    from pipeline.classify import submission

    lines = _chid_release(data_root, tmp_path / "chinese/chid")
    chid = tasks.TASKS["chid"]
    files = chid.split_files(tmp_path, "dev")
    assert files == [tmp_path / "chinese/chid/dev.json"]  # CLUE's release before FewCLUE's
    examples = chid.read(files)
    answers = json.loads((tmp_path / "chinese/chid/dev_answer.json").read_text("utf-8"))
    assert {e.id for e in examples} == set(answers) and len(examples) == 3 * len(lines)
    for example in examples:
        assert example.label == answers[example.id] and len(example.choices) == 7
        assert all("#idiom" not in choice for choice in example.choices)  # every other blank left out
    first, passage = examples[0], lines[0]["content"][0]  # blanks #idiom000000# and #idiom000100#
    assert first.id == "#idiom000000#" and examples[1].id == "#idiom000100#"
    expected = passage.replace("#idiom000000#", lines[0]["candidates"][first.label]).replace("#idiom000100#", "")
    assert first.choices[first.label] == expected
    ids = [e.id for e in examples]
    text = submission.render(chid, ids, [e.label for e in examples])
    assert json.loads(text) == answers
    assert submission.validate(chid, _write(tmp_path / "chid11_predict.json", text), ids) == []
    (tmp_path / "chinese/chid/dev_answer.json").write_text(json.dumps({"#idiom000000#": 9}), "utf-8")
    with pytest.raises(InputError, match="not an index|no answer for #idiom000100#"):
        chid.read(files)

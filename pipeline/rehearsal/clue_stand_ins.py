"""The rehearsal mirror's CLUE stand-ins, served by :class:`pipeline.rehearsal.stand_ins.StandIns`.

Made from the real data root (a :class:`~pipeline.rehearsal.stand_ins.DataRoot`); an archive's maker
returns its members (name → bytes) and what they are made of, and the caller zips them
deterministically and checks that they hold every member ``classification-sources.yaml`` names:

- ``clue-{tnews,iflytek,cluewsc2020,csl}.zip`` (``train.json``, ``dev.json``, ``test.json``,
  ``labels.json`` where CLUE ships one): the FewCLUE copies' rows (train: ``train_few_all``, dev:
  ``dev_few_all``, lines verbatim; test: ``test_public`` without labels);
- ``clue-afqmc.zip``: the real AFQMC dev set cut into train / dev / test (test rows: ``id``,
  ``sentence1``, ``sentence2``);
- ``clue-chid.zip`` (CLUE 1.0's ``chid_public.zip``: ``train.json``, ``train_answer.json``,
  ``dev.json``, ``dev_answer.json``, ``test1.0.json``): CLUE's own ChID layout written from the
  FewCLUE ChID rows (train: ``train_few_all``, dev / test: the first rows of ``dev_few_all`` /
  ``test_public``). Each row is one line ``{"candidates": [its 7 idioms], "content": [its text]}``,
  its ``#idiom#`` blank numbered ``#idiom000001#``, ``#idiom000002#``… through train, dev and test
  (tags unique across the splits, as CLUE's are); the answers ``{tag: candidate index}`` are in
  ``<split>_answer.json``, none for test (CLUE ships none);
- ``ocnli/train.50k.json``: the first lines of OCNLI's real ``train.10k.json``, verbatim;
- ``cmrc2018_train.json``: the first 5 articles of the real CMRC 2018 dev set.
"""

from __future__ import annotations

import json
from typing import Protocol


class DataRoot(Protocol):
    """What the makers read of :class:`pipeline.rehearsal.stand_ins.DataRoot` (not imported: it imports
    this module)."""

    def lines(self, relative: str) -> list[str]: ...

    def text(self, relative: str) -> str: ...


# archive name (classification-sources.yaml) -> the task it is made for
ARCHIVES = {
    "clue-tnews.zip": "tnews",
    "clue-iflytek.zip": "iflytek",
    "clue-cluewsc2020.zip": "cluewsc",
    "clue-csl.zip": "csl",
    "clue-afqmc.zip": "afqmc",
    "clue-chid.zip": "chid",
}
CHID_BLANK = "#idiom#"  # FewCLUE's one blank per row
CHID_TAG = "#idiom{:06d}#"  # CLUE's numbered blanks
CHID_SPLITS = (  # member, FewCLUE file, answers member (None: unlabelled, as CLUE's test)
    ("train.json", "train_few_all", "train_answer.json"),
    ("dev.json", "dev_few_all", "dev_answer.json"),
    ("test1.0.json", "test_public", None),
)


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def _lines(data: DataRoot, relative: str, count: int) -> list[str]:
    return [line for line in data.lines(relative) if line.strip()][:count]


def archive_members(data: DataRoot, name: str, train_rows: int, eval_rows: int) -> tuple[dict[str, bytes], str]:
    """(members, what they are made of) of the CLUE archive ``name`` (a key of :data:`ARCHIVES`)."""
    task = ARCHIVES[name]
    if task == "afqmc":
        return afqmc(data, train_rows, eval_rows)
    if task == "chid":
        return chid(data, train_rows, eval_rows)
    return fewclue(data, task, train_rows, eval_rows)


def tnews_labels(data: DataRoot) -> bytes:
    rows = [json.loads(line) for line in data.lines("chinese/fewclue/tnews/label_index2en2zh.json") if line]
    return _jsonl([{"label": row["label"], "label_desc": row["label_desc"]} for row in rows])


def iflytek_labels(data: DataRoot) -> bytes:
    pairs = set()
    for split in ("train_few_all", "dev_few_all", "test_public"):
        for line in data.lines(f"chinese/fewclue/iflytek/{split}.json"):
            if line.strip():
                row = json.loads(line)
                pairs.add((int(row["label"]), row["label_des"]))
    return _jsonl([{"label": str(label), "label_des": name} for label, name in sorted(pairs)])


LABELS = {"tnews": tnews_labels, "iflytek": iflytek_labels}  # the tasks CLUE ships a labels.json with


def clue_splits(train: list[str], dev: list[str], test: list[str]) -> dict[str, bytes]:
    unlabelled = []
    for line in test:
        row = {k: v for k, v in json.loads(line).items() if k not in ("label", "label_desc", "label_des")}
        unlabelled.append(row)
    return {
        "train.json": ("\n".join(train) + "\n").encode("utf-8"),
        "dev.json": ("\n".join(dev) + "\n").encode("utf-8"),
        "test.json": _jsonl(unlabelled),
    }


def fewclue(data: DataRoot, task: str, train_rows: int, eval_rows: int) -> tuple[dict[str, bytes], str]:
    folder = f"chinese/fewclue/{task}/"
    members = clue_splits(
        _lines(data, f"{folder}train_few_all.json", train_rows),
        _lines(data, f"{folder}dev_few_all.json", eval_rows),
        _lines(data, f"{folder}test_public.json", eval_rows),
    )
    if task in LABELS:
        members["labels.json"] = LABELS[task](data)
    return members, f"real FewCLUE rows of {folder}"


def afqmc(data: DataRoot, train_rows: int, eval_rows: int) -> tuple[dict[str, bytes], str]:
    lines = [line for line in data.lines("chinese/afqmc/dev.json") if line.strip()]
    t, e = train_rows, train_rows + eval_rows
    members = clue_splits(lines[:t], lines[t:e], [])
    rows = [json.loads(line) for line in lines[e : e + eval_rows]]
    members["test.json"] = _jsonl(
        [{"id": i, "sentence1": row["sentence1"], "sentence2": row["sentence2"]} for i, row in enumerate(rows)]
    )
    return members, "real AFQMC dev rows of chinese/afqmc/dev.json"


def chid(data: DataRoot, train_rows: int, eval_rows: int) -> tuple[dict[str, bytes], str]:
    members, number = {}, 0
    for member, split, answer_member in CHID_SPLITS:
        count = train_rows if member == "train.json" else eval_rows
        lines, answers = [], {}
        for line in _lines(data, f"chinese/fewclue/chid/{split}.json", count):
            row = json.loads(line)
            number += 1
            tag = CHID_TAG.format(number)
            lines.append({"candidates": row["candidates"], "content": [row["content"].replace(CHID_BLANK, tag, 1)]})
            answers[tag] = row["answer"]
        members[member] = _jsonl(lines)
        if answer_member:
            members[answer_member] = (json.dumps(answers) + "\n").encode("utf-8")
    what = (
        "real FewCLUE rows of chinese/fewclue/chid/ in CLUE's release layout (blanks numbered "
        f"{CHID_TAG.format(1)} to {CHID_TAG.format(number)}, answers in <split>_answer.json)"
    )
    return members, what


def ocnli_train(data: DataRoot, rows: int) -> tuple[bytes, str]:
    lines = data.lines("chinese/ocnli/train.10k.json")[:rows]
    return ("\n".join(lines) + "\n").encode("utf-8"), (
        f"stand-in: the first {rows} lines of chinese/ocnli/train.10k.json (real OCNLI), verbatim"
    )


def cmrc_train(data: DataRoot) -> tuple[bytes, str]:
    document = json.loads(data.text("chinese/cmrc2018/cmrc2018_dev.json"))
    subset = {"version": document.get("version"), "data": document["data"][:5]}
    return json.dumps(subset, ensure_ascii=False, indent=2).encode("utf-8"), (
        "stand-in: the first 5 articles of chinese/cmrc2018/cmrc2018_dev.json (real CMRC 2018 dev)"
    )

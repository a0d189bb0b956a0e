"""Readers of SentEval's transfer tasks (paper 004 §3.3, Table 1; SentEval's own file layouts).

Paths are under the data root (``shared/data/SOURCES.md``):

- MR ``senteval/MR/rt-polarity.{pos,neg}``, CR ``senteval/CR/custrev.{pos,neg}``, SUBJ
  ``senteval/SUBJ/subj.{objective,subjective}``, MPQA ``senteval/MPQA/mpqa.{pos,neg}``: one
  sentence per line, the label is the file;
- SST-2 ``senteval/SST/binary/sentiment-{train,dev,test}``: ``sentence TAB 0|1``;
- TREC ``senteval/TREC/train_5500.label``, ``TREC_10.label``: ``COARSE:fine question``, the six
  coarse classes (the training file is ISO-8859-1);
- MRPC ``glue/MRPC/msr_paraphrase_{train,test}.txt``: ``Quality TAB #1 ID TAB #2 ID TAB #1 String
  TAB #2 String`` with a header;
- SICK-E / SICK-R ``sick/SICK.txt``: TRAIN / TRIAL (dev) / TEST by ``SemEval_set``, gold
  ``entailment_label`` / ``relatedness_score``;
- STS14 ``sts/STS14/`` and STS-B ``sts/STSBenchmark/sts-{train,dev,test}.csv``: the readers of
  :mod:`pipeline.tasks.sts`.

SentEval reads these files as Latin-1, which never fails; so does this module. A label outside
a task's set, or a line with the wrong number of fields, stops with an
:class:`~pipeline.errors.InputError` naming the file and the line.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field

from pipeline.errors import InputError
from pipeline.tasks import sts
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.numbered_lines import finite_number

SINGLE_FILES = {  # task -> (folder, {file: label})
    "MR": ("senteval/MR", {"rt-polarity.neg": 0, "rt-polarity.pos": 1}),
    "CR": ("senteval/CR", {"custrev.neg": 0, "custrev.pos": 1}),
    "SUBJ": ("senteval/SUBJ", {"subj.objective": 0, "subj.subjective": 1}),
    "MPQA": ("senteval/MPQA", {"mpqa.neg": 0, "mpqa.pos": 1}),
}
TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
SICK_LABELS = ("CONTRADICTION", "NEUTRAL", "ENTAILMENT")
SICK_SPLITS = {"train": "TRAIN", "dev": "TRIAL", "test": "TEST"}


@dataclass
class Split:
    """Sentences (or sentence pairs) of one split with their labels or scores."""

    left: list[str] = field(default_factory=list)
    right: list[str] | None = None  # second sentences of a pair task
    y: list = field(default_factory=list)
    # each item's 0-based line in the file it was read from (SICK: of SICK.txt, header line 0): the
    # scoreboard's item ids; None where the readers do not record them (the k-fold tasks, which write no ids)
    rows: list[int] | None = None

    def __len__(self) -> int:
        return len(self.y)

    def ids(self) -> list[int]:
        """Each item's id: its line where recorded, else its position."""
        return list(self.rows) if self.rows is not None and len(self.rows) == len(self) else list(range(len(self)))

    def texts(self) -> list[str]:
        return self.left + (self.right or [])


def _lines(path) -> list[str]:
    """Every line (empty ones too, as SentEval's ``splitlines``), without the final newline."""
    return path.read_bytes().decode("latin-1").splitlines()


def _label(path, number: int, value: str, allowed) -> str:
    if value not in allowed:
        raise InputError(path, f"label {value!r} is not one of {', '.join(map(str, allowed))}", where=f"line {number}")
    return value


def read_single(data: DataRoot, task: str) -> Split:
    folder, files = SINGLE_FILES[task]
    split = Split()
    for name, label in files.items():
        for line in _lines(data.file(f"{folder}/{name}", f"{task} file")):
            split.left.append(line.strip())  # SentEval keeps the 4 empty lines of CR as empty sentences
            split.y.append(label)
    return split


def read_sst(path) -> Split:
    split = Split(rows=[])
    for number, line in enumerate(_lines(path), 1):
        sentence, tab, label = line.rpartition("\t")
        if not tab:
            raise InputError(path, "expected 'sentence TAB label'", where=f"line {number}")
        split.left.append(sentence.strip())
        split.y.append(int(_label(path, number, label.strip(), ("0", "1"))))
        split.rows.append(number - 1)
    return split


def read_trec(path) -> Split:
    split = Split(rows=[])
    for number, line in enumerate(_lines(path), 1):
        label, space, question = line.partition(" ")
        coarse = label.split(":")[0]
        if not space or ":" not in label:
            raise InputError(path, "expected 'COARSE:fine question'", where=f"line {number}")
        split.left.append(question.strip())
        split.y.append(TREC_CLASSES.index(_label(path, number, coarse, TREC_CLASSES)))
        split.rows.append(number - 1)
    return split


def read_mrpc(path) -> Split:
    split = Split(right=[], rows=[])
    lines = _lines(path)
    for number, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) != 5:
            raise InputError(path, f"expected 5 TAB-separated fields, found {len(fields)}", where=f"line {number}")
        split.y.append(int(_label(path, number, fields[0].lstrip("\ufeff"), ("0", "1"))))
        split.left.append(fields[3].strip())
        split.right.append(fields[4].strip())
        split.rows.append(number - 1)
    return split


def read_sick(path, score: bool) -> dict[str, Split]:
    """SICK's three splits: relatedness scores (``score``) or entailment labels (0-2)."""
    splits = {name: Split(right=[], rows=[]) for name in SICK_SPLITS}
    by_set = {value: splits[name] for name, value in SICK_SPLITS.items()}
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        needed = {"sentence_A", "sentence_B", "entailment_label", "relatedness_score", "SemEval_set"}
        if not needed <= set(reader.fieldnames or ()):
            raise InputError(path, f"header lacks {sorted(needed - set(reader.fieldnames or ()))}", where="line 1")
        for row in reader:
            number = reader.line_num
            if None in row.values() or None in row:
                raise InputError(path, "wrong number of fields", where=f"line {number}")
            split = by_set.get(row["SemEval_set"].strip())
            if split is None:
                raise InputError(
                    path, f"SemEval_set {row['SemEval_set']!r} is not TRAIN, TRIAL or TEST", where=f"line {number}"
                )
            split.left.append(row["sentence_A"])
            split.right.append(row["sentence_B"])
            split.rows.append(number - 1)  # one line a row (no quoting): the header is line 0
            if score:
                split.y.append(finite_number(path, number, row["relatedness_score"], "relatedness_score"))
            else:
                split.y.append(SICK_LABELS.index(_label(path, number, row["entailment_label"].strip(), SICK_LABELS)))
    for name, split in splits.items():
        if not len(split):
            raise InputError(path, f"no {SICK_SPLITS[name]} rows")
    return splits


def read_stsb(data: DataRoot) -> dict[str, Split]:
    splits = {}
    for name in ("train", "dev", "test"):
        pairs = sts.read_stsb(data.file(f"sts/STSBenchmark/sts-{name}.csv", f"STS Benchmark {name}"))
        splits[name] = Split(*pairs, rows=sts.row_ids(pairs))
    return splits


def load_task(data: DataRoot, task: str):
    """The task's data: a :class:`Split` (k-fold tasks), {split: Split}, or STS14's {subset: pairs}."""
    if task in SINGLE_FILES:
        return read_single(data, task)
    if task == "SST2":
        return {
            name: read_sst(data.file(f"senteval/SST/binary/sentiment-{name}", f"SST-2 {name}"))
            for name in ("train", "dev", "test")
        }
    if task == "TREC":
        return {
            "train": read_trec(data.file("senteval/TREC/train_5500.label", "TREC train")),
            "test": read_trec(data.file("senteval/TREC/TREC_10.label", "TREC test")),
        }
    if task == "MRPC":
        return {
            name: read_mrpc(data.file(f"glue/MRPC/msr_paraphrase_{name}.txt", f"MRPC {name}"))
            for name in ("train", "test")
        }
    if task in ("SICK-E", "SICK-R"):
        return read_sick(data.file("sick/SICK.txt", "SICK corpus"), score=task == "SICK-R")
    if task == "STS14":
        return sts.year_subsets(data, "STS14")
    if task == "STS-B":
        return read_stsb(data)
    raise ValueError(f"unknown transfer task {task!r}")

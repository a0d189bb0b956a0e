"""The task registry: every GLUE and CLUE task of the papers' tables, with its files, head and metrics.

GLUE (ULR-BERT §5.1.2, BURT §4.1.1): CoLA, SST-2, MNLI (matched / mismatched dev), QNLI, RTE,
MRPC, QQP, STS-B. CLUE (BURT §4.1.2): TNEWS, IFLYTEK, CLUEWSC2020, AFQMC, CSL, OCNLI, CMRC 2018,
ChID, C3. Metrics as the papers report them (ULR-BERT Table 3, BURT Tables V and VI): CoLA
Matthews correlation, MRPC / QQP F1 (and accuracy), STS-B Pearson (and Spearman), CMRC EM
(and F1), accuracy elsewhere; the first metric is the one a table prints.

Each split names candidate files relative to the data root, the first that exists wins: the
benchmark's own release first (what the download rules fetch), then the copies of the public
data root (FewCLUE versions of TNEWS, IFLYTEK, CSL, CLUEWSC and ChID; MultiNLI's own dev CSV;
the STS Benchmark original; OCNLI's 10k training subset). Those copies are *substitutes*: a
smaller or different set than the paper's, so they are used only where the caller allows them
(``classify --allow-substitutes``; ``classify.allow_substitutes`` in the config, off in the paper
configs). Otherwise a missing release stops with one line naming its file and the substitute
that exists. The files a run used, and which of them are substitutes, are recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.classify import clue_readers, glue_readers
from pipeline.classify.examples import Example
from pipeline.errors import InputError

TNEWS_LABELS = tuple(str(code) for code in range(100, 117) if code not in (105, 111))
IFLYTEK_LABELS = tuple(str(code) for code in range(119))
NLI3 = ("entailment", "neutral", "contradiction")
ENTAILMENT2 = ("entailment", "not_entailment")
BINARY = ("0", "1")


@dataclass(frozen=True)
class Task:
    name: str  # the CLI's lower-case name
    title: str  # as the papers print it
    benchmark: str  # glue | clue
    lang: str
    head: str  # classification | regression | span | choice
    labels: tuple[str, ...] | None
    metrics: tuple[str, ...]  # the first is the table's number
    splits: dict[str, tuple[str, ...]]  # split -> candidate files (relative to the data root)
    reader: Callable
    submission: str  # file name the benchmark's server expects
    extra_dev: dict[str, tuple[str, ...]] = field(default_factory=dict)  # e.g. MNLI mismatched
    # further unlabelled test sets: name -> (candidate files, the server's file name), e.g. MNLI-mm
    extra_test: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    multi_file: bool = False  # the reader takes every file of a split (C3: dialogue + mixed)

    @property
    def test_sets(self) -> dict[str, str]:
        """Every test set -> the file name its predictions go to on the benchmark's server."""
        return {"test": self.submission, **{name: file for name, (_, file) in self.extra_test.items()}}

    @property
    def num_labels(self) -> int:
        if self.head == "regression":
            return 1
        return len(self.labels) if self.labels else 0

    def candidates(self, split: str) -> list[tuple[str, ...]]:
        """The candidate file groups of ``split``, the benchmark's own release first."""
        names = self.splits.get(split) or self.extra_dev.get(split) or self.extra_test.get(split, ((),))[0]
        return [tuple(name.split("+")) if self.multi_file else (name,) for name in names]

    def split_files(self, root: Path, split: str, allow_substitutes: bool = True) -> list[Path] | None:
        """The files of ``split`` under ``root``: the first candidate that exists (all of them for
        multi-file tasks), or None. A substitute (any candidate after the first) is refused with an
        :class:`InputError` naming the missing release unless ``allow_substitutes``."""
        groups = self.candidates(split)
        found = next((group for group in groups if all((root / name).is_file() for name in group)), None)
        if found is None:
            return None
        if found != groups[0] and not allow_substitutes:
            missing = next(root / name for name in groups[0] if not (root / name).is_file())
            raise InputError(
                missing,
                f"{self.title} {split} split not found; the substitute {'+'.join(found)} exists but substitutes "
                "are not allowed (classify --allow-substitutes; classify.allow_substitutes in the config)",
            )
        return [root / name for name in found]

    def substitutes(self, root: Path, files: dict) -> dict[str, str]:
        """``{split: file}`` for the splits whose files are a substitute, not the benchmark's release."""
        return {
            split: "+".join(str(path.relative_to(root)) for path in paths)
            for split, paths in files.items()
            if paths and tuple(str(path.relative_to(root)) for path in paths) != self.candidates(split)[0]
        }

    def read(self, files: list[Path]) -> list[Example]:
        examples = self.reader(files, self.labels) if self.multi_file else self.reader(files[0], self.labels)
        if not examples:
            raise InputError(files[0], f"no examples in this {self.title} split")
        return examples


def _glue(name, title, head, labels, metrics, folder, reader, submission, train=None, dev=None, test=None, **extra):
    return Task(
        name,
        title,
        "glue",
        "en",
        head,
        labels,
        metrics,
        {
            "train": train or (f"glue/{folder}/train.tsv",),
            "dev": dev or (f"glue/{folder}/dev.tsv",),
            "test": test or (f"glue/{folder}/test.tsv",),
        },
        reader,
        submission,
        **extra,
    )


def _clue(
    name,
    title,
    head,
    labels,
    metrics,
    folder,
    reader,
    submission,
    fewclue=None,
    train=None,
    dev=None,
    test=None,
    **extra,
):
    few = (lambda split: (f"chinese/fewclue/{fewclue}/{split}.json",)) if fewclue else (lambda split: ())
    return Task(
        name,
        title,
        "clue",
        "zh",
        head,
        labels,
        metrics,
        {
            "train": train or (f"chinese/{folder}/train.json", *few("train_few_all")),
            "dev": dev or (f"chinese/{folder}/dev.json", *few("dev_few_all")),
            "test": test or (f"chinese/{folder}/test.json", *few("test_public")),
        },
        reader,
        submission,
        **extra,
    )


TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        _glue("cola", "CoLA", "classification", BINARY, ("mcc", "acc"), "CoLA", glue_readers.read_cola, "CoLA.tsv"),
        _glue("sst2", "SST-2", "classification", BINARY, ("acc",), "SST-2", glue_readers.read_sst2, "SST-2.tsv"),
        _glue(
            "mnli",
            "MNLI",
            "classification",
            NLI3,
            ("acc",),
            "MNLI",
            glue_readers.read_mnli,
            "MNLI-m.tsv",
            dev=("glue/MNLI/dev_matched.tsv", "nli/mnli_dev/multinli_1.0_dev_matched.csv"),
            test=("glue/MNLI/test_matched.tsv",),
            extra_dev={"dev_mm": ("glue/MNLI/dev_mismatched.tsv", "nli/mnli_dev/multinli_1.0_dev_mismatched.csv")},
            extra_test={"test_mm": (("glue/MNLI/test_mismatched.tsv",), "MNLI-mm.tsv")},
        ),
        _glue("qnli", "QNLI", "classification", ENTAILMENT2, ("acc",), "QNLI", glue_readers.read_qnli, "QNLI.tsv"),
        _glue("rte", "RTE", "classification", ENTAILMENT2, ("acc",), "RTE", glue_readers.read_rte, "RTE.tsv"),
        _glue("mrpc", "MRPC", "classification", BINARY, ("f1", "acc"), "MRPC", glue_readers.read_mrpc, "MRPC.tsv"),
        _glue("qqp", "QQP", "classification", BINARY, ("f1", "acc"), "QQP", glue_readers.read_qqp, "QQP.tsv"),
        _glue(
            "stsb",
            "STS-B",
            "regression",
            None,
            ("pearson", "spearman"),
            "STS-B",
            glue_readers.read_stsb,
            "STS-B.tsv",
            train=("glue/STS-B/train.tsv", "sts/STSBenchmark/sts-train.csv"),
            dev=("glue/STS-B/dev.tsv", "sts/STSBenchmark/sts-dev.csv"),
            test=("glue/STS-B/test.tsv", "sts/STSBenchmark/sts-test.csv"),
        ),
        _clue(
            "tnews",
            "TNEWS",
            "classification",
            TNEWS_LABELS,
            ("acc",),
            "tnews",
            clue_readers.read_single,
            "tnews11_predict.json",
            fewclue="tnews",
        ),
        _clue(
            "iflytek",
            "IFLYTEK",
            "classification",
            IFLYTEK_LABELS,
            ("acc",),
            "iflytek",
            clue_readers.read_single,
            "iflytek_predict.json",
            fewclue="iflytek",
        ),
        _clue(
            "cluewsc",
            "WSC",
            "classification",
            ("true", "false"),
            ("acc",),
            "cluewsc2020",
            clue_readers.read_wsc,
            "cluewsc11_predict.json",
            fewclue="cluewsc",
        ),
        _clue(
            "afqmc", "AFQMC", "classification", BINARY, ("acc",), "afqmc", clue_readers.read_pair, "afqmc_predict.json"
        ),
        _clue(
            "csl",
            "CSL",
            "classification",
            BINARY,
            ("acc",),
            "csl",
            clue_readers.read_csl,
            "csl_predict.json",
            fewclue="csl",
        ),
        _clue(
            "ocnli",
            "OCNLI",
            "classification",
            NLI3,
            ("acc",),
            "ocnli",
            clue_readers.read_pair,
            "ocnli_50k_predict.json",
            train=("chinese/ocnli/train.50k.json", "chinese/ocnli/train.10k.json"),
        ),
        _clue(
            "cmrc2018",
            "CMRC18",
            "span",
            None,
            ("em", "f1"),
            "cmrc2018",
            clue_readers.read_cmrc,
            "cmrc2018_predict.json",
            train=("chinese/cmrc2018/cmrc2018_train.json",),
            dev=("chinese/cmrc2018/cmrc2018_dev.json",),
            test=("chinese/cmrc2018/cmrc2018_test.json",),
        ),
        _clue(
            "chid",
            "ChID",
            "choice",
            None,
            ("acc",),
            "chid",
            clue_readers.read_chid,
            "chid11_predict.json",
            fewclue="chid",
            # CLUE's release (answers in <split>_answer.json beside each split), else FewCLUE's
            train=("chinese/chid/train.json", "chinese/fewclue/chid/train_few_all.json"),
            dev=("chinese/chid/dev.json", "chinese/fewclue/chid/dev_few_all.json"),
            test=("chinese/chid/test1.0.json", "chinese/chid/test.json", "chinese/fewclue/chid/test_public.json"),
        ),
        Task(
            "c3",
            "C3",
            "clue",
            "zh",
            "choice",
            None,
            ("acc",),
            {
                split: (f"chinese/c3/c3-d-{split}.json+chinese/c3/c3-m-{split}.json",)
                for split in ("train", "dev", "test")
            },
            clue_readers.read_c3,
            "c311_predict.json",
            multi_file=True,
        ),
    )
}
GLUE_TASKS = tuple(name for name, task in TASKS.items() if task.benchmark == "glue")
CLUE_TASKS = tuple(name for name, task in TASKS.items() if task.benchmark == "clue")
ALIASES = {
    "sst-2": "sst2",
    "sts-b": "stsb",
    "wsc": "cluewsc",
    "cluewsc2020": "cluewsc",
    "cmrc": "cmrc2018",
    "mnli-m": "mnli",
}


def get(name: str) -> Task:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in TASKS:
        raise InputError(name, f"unknown task (known: {', '.join(TASKS)})")
    return TASKS[key]

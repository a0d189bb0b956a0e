"""The similarity tables of BURT twin: sentence similarity (Table 2, by cosine and as SentEval scores it) and
phrase and word similarity (Table 3), with the cells functions that read them from the ``sts``, ``wordsim``,
``ppdb``, ``semeval5a``, ``scws`` and ``transfer`` metrics files; the twin ablation (Table 4) reuses them."""

from __future__ import annotations

from pipeline.report.metrics_files import MetricsFile
from pipeline.report.spec import Cells, Column, TableSpec

# column key -> the name of the set in a metrics file's ``scores``
STS_SCORES = {
    "sts12": "STS12",
    "sts13": "STS13",
    "sts14": "STS14",
    "sts15": "STS15",
    "sts16": "STS16",
    "stsb": "STS-B",
    "sickr": "SICK-R",
}
STS_YEARS = ("sts12", "sts13", "sts14", "sts15", "sts16")  # STS* of Table 4 is their mean
WORDSIM_PHRASES = {"ppdb": "PPDB", "semeval": "SemEval"}
WORDSIM_WORDS = {"simlex": "SimLex-999", "ws_sim": "WS-353-SIM", "ws_rel": "WS-353-REL", "men": "MEN", "scws": "SCWS"}
# the transfer harness's (``evaluate transfer``) names of its trained STS-B / SICK-R regression tasks
TRANSFER_REGRESSION = {"stsb": "STS-B", "sickr": "SICK-R"}


def sts_cells(metrics: MetricsFile) -> Cells:
    scores = metrics.require("scores")
    cells = {key: metrics.number("scores", name) if name in scores else None for key, name in STS_SCORES.items()}
    cells["avg"] = metrics.number("avg")
    return [(None, cells)]


def senteval_sts_cells(metrics: MetricsFile) -> Cells:
    """BURT twin Table 2 in SentEval's protocol: STS12-16 by cosine from the ``sts`` task; STS-B and
    SICK-R come from the transfer harness's trained regression (:func:`transfer_regression_cells`)."""
    cells = {key: None for key in STS_SCORES}
    scores = metrics.require("scores")
    for key in STS_YEARS:
        if STS_SCORES[key] in scores:
            cells[key] = metrics.number("scores", STS_SCORES[key])
    cells["avg"] = None
    return [(None, cells)]


def transfer_regression_cells(metrics: MetricsFile) -> Cells:
    """STS-B and SICK-R as SentEval scores them (a regression trained on the train split, tested on
    test): Spearman x 100 under ``tasks.<task name>.spearman`` of a ``transfer`` metrics file. A file
    without those tasks leaves the cells empty."""
    tasks = metrics.data.get("tasks")
    cells = {}
    for key, name in TRANSFER_REGRESSION.items():
        entry = tasks.get(name) if isinstance(tasks, dict) else None
        cells[key] = (
            metrics.number("tasks", name, "spearman") if isinstance(entry, dict) and "spearman" in entry else None
        )
    return [(None, cells)]


def seven_set_average(cells: dict[str, float | None]) -> None:
    """Table 2's Avg.: the mean of the seven sets, once the regression's STS-B and SICK-R are merged."""
    cells["avg"] = mean_of_all([cells[key] for key in STS_SCORES])


def mean_of_all(values: list[float | None]) -> float | None:
    """The mean of ``values``; None unless every one is known (an average of some sets is not the paper's)."""
    return sum(values) / len(values) if None not in values else None


def wordsim_cells(metrics: MetricsFile) -> Cells:
    """BURT twin Table 3; its Avg. is the mean of the five word sets, so it stays empty
    unless all five were evaluated (SCWS is not in the public data)."""
    scores = metrics.require("scores")
    cells = {
        key: metrics.number("scores", name) if name in scores else None
        for key, name in {**WORDSIM_PHRASES, **WORDSIM_WORDS}.items()
    }
    five_word_average(cells)
    return [(None, cells)]


def five_word_average(cells: dict[str, float | None]) -> None:
    """Table 3's Avg.: the mean of the five word sets, once every task's cells are merged."""
    cells["avg"] = mean_of_all([cells[key] for key in WORDSIM_WORDS])


def ppdb_cells(metrics: MetricsFile) -> Cells:
    """The PPDB column from the ``ppdb`` task: Spearman on its headline file (``ppdb-sample``)."""
    return [(None, {"ppdb": metrics.number("scores", metrics.data.get("headline", "ppdb-sample"))})]


def semeval_cells(metrics: MetricsFile) -> Cells:
    """The SemEval column from the ``semeval5a`` task: test accuracy (fine-tuned encoder or frozen features)."""
    return [(None, {"semeval": metrics.number("accuracy")})]


def scws_cells(metrics: MetricsFile) -> Cells:
    return [(None, {"scws": metrics.number("scores", "SCWS")})]


# The word columns of Tables 3 and 4, then their Avg.
WORD_COLUMNS = (
    Column("simlex", "SimLex", "Words"),
    Column("ws_sim", "WS-sim", "Words"),
    Column("ws_rel", "WS-rel", "Words"),
    Column("men", "MEN", "Words"),
    Column("scws", "SCWS", "Words"),
    Column("avg", "Avg."),
)
# BURT twin Table 2's columns, scored by cosine (``sts``) or as SentEval does (``sts_senteval``).
STS_COLUMNS = tuple(Column(key, name) for key, name in STS_SCORES.items()) + (Column("avg", "Avg."),)

STS = TableSpec(
    name="sts",
    title="Sentence similarity, Spearman x 100 of cosine similarity (BURT twin Table 2)",
    task="sts",
    columns=STS_COLUMNS,
    published=("twin_t2",),
    cells=sts_cells,
    notes=(
        (
            "STS12-16: mean over each year's subsets. The paper scores STS-B and SICK-R with SentEval's "
            "trained regression; runs score the test sets by cosine similarity without training."
        ),
    ),
)

WORDSIM = TableSpec(
    name="wordsim",
    title="Phrase and word similarity, Spearman x 100; SemEval: accuracy (BURT twin Table 3)",
    task="wordsim",
    columns=(
        Column("ppdb", "PPDB (human labels)", "Phrases"),
        Column("semeval", "SemEval 5(a) (Y&D)", "Phrases"),
        *WORD_COLUMNS,
    ),
    published=("twin_t3",),
    cells=wordsim_cells,
    notes=(
        (
            "Avg. is the mean of the five word sets; it is left empty for a run that lacks one of them "
            "(SCWS is not redistributed: its column fills only where scws/ratings.txt is in the data)."
        ),
        (
            "PPDB: runs give Spearman x 100 of cosine against the PPDB 2.0 human paraphrase-quality "
            "judgements (ppdb-sample.tsv, the pairs with a multi-word side), a stand-in for the paper's "
            "32,202-pair PPDB test set, which is not public; the published rows are on the paper's set."
        ),
        (
            "SemEval 5(a) (Y&D): test accuracy on Yu & Dredze's POS-tagged subset of SemEval-2013 Task 5(a) "
            "(11,175 train / 7,490 test; the paper's is 11,722 / 7,814). As the paper's section 4.2, a "
            "transformer is first fine-tuned on the training pairs with a softmax head on [u; v; |u-v|] "
            "(finetune-semeval); a fixed encoder (bag of vectors, BiLSTM) stays frozen under a logistic "
            "regression on [u; v; |u-v|; u*v]. Each file's 'protocol' says which."
        ),
    ),
    merged=(("ppdb", ppdb_cells), ("semeval5a", semeval_cells), ("scws", scws_cells)),
    finish=five_word_average,
)

STS_SENTEVAL = TableSpec(
    name="sts_senteval",
    title="Sentence similarity as the paper scores it: STS12-16 by cosine, STS-B and SICK-R by a trained "
    "regression, Spearman x 100 (BURT twin Table 2)",
    task="sts",
    columns=STS_COLUMNS,
    published=("twin_t2",),
    cells=senteval_sts_cells,
    notes=(
        (
            "SentEval's protocol, as the paper's section 4.1: STS12-16 (mean over each year's subsets) by cosine "
            "similarity without training; STS-B and SICK-R by a regression on frozen features trained on their "
            "train splits (the transfer harness's STS-B / SICK-R regression, its Spearman), empty for a run "
            "without it. The sts table gives the cosine scores of all seven."
        ),
    ),
    merged=(("transfer", transfer_regression_cells),),
    finish=seven_set_average,
)

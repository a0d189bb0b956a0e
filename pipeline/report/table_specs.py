"""The papers' result tables: their columns, and where each cell comes from in a metrics JSON.

One :class:`TableSpec` per paper table (docs/method.md §5 "Tables"): the columns in the paper's order
with the paper's headers and decimals, the published rows it shows (ids in
``published.yaml``) and a function that turns one metrics file (the pinned format written by
``python -m pipeline evaluate``) into its rows. Tables whose paper rows come from several
splits or data sets (GEOGRANNO splits, FAQ data sets) have a leading *facet* column, so a run
gives one row per split or data set and the papers' rows say which one they used.

The GEOGRANNO buckets of ULR-BERT Table 9 live here too, so the evaluation harness groups
queries under exactly the labels the table reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipeline.report.metrics_files import MetricsFile

# ULR-BERT Table 9, left block: query length |q| in words, inclusive ranges. The paper's
# longest query has 15 words; the last bucket is open-ended so that every query is counted.
GEOGRANNO_QUERY_LENGTH_BUCKETS: dict[str, tuple[int, int | None]] = {"1~6": (1, 6), "7~8": (7, 8), "9~15": (9, None)}
# Table 9, right block: abs(|q| - |Q|) (query vs. its canonical utterance, in words). The
# buckets are cumulative thresholds ("≥ 2" holds every query whose difference is at least 2),
# so "≥ 0" is the whole split.
GEOGRANNO_LENGTH_DIFFERENCE_BUCKETS: dict[str, int] = {"≥ 0": 0, "≥ 2": 2, "≥ 3": 3}
GEOGRANNO_LENGTH_BUCKETS = {
    "by_query_length": GEOGRANNO_QUERY_LENGTH_BUCKETS,
    "by_length_difference": GEOGRANNO_LENGTH_DIFFERENCE_BUCKETS,
}
# The split of Table 4: every train and dev question against the 158 distinct canonical
# utterances of train ∪ dev (the paper's "train-dev set"); the published GEOGRANNO rows carry it.
GEOGRANNO_TRAIN_DEV_SPLIT = "all"


def canonical_bucket(label: str) -> str | None:
    """The Table 9 label a metrics file means: the paper's own, or an ASCII spelling ("1-6", ">=2")."""

    def compact(text: str) -> str:
        return text.replace(" ", "").replace(">=", "≥").replace("-", "~")

    known = {compact(known): known for buckets in GEOGRANNO_LENGTH_BUCKETS.values() for known in buckets}
    return known.get(compact(label))


def query_length_bucket(length: int) -> str | None:
    """The Table 9 bucket label of a query of ``length`` words (None for an empty query)."""
    for label, (low, high) in GEOGRANNO_QUERY_LENGTH_BUCKETS.items():
        if length >= low and (high is None or length <= high):
            return label
    return None


def length_difference_buckets(difference: int) -> list[str]:
    """Every Table 9 bucket that holds a query whose abs(|q| - |Q|) is ``difference``."""
    return [label for label, low in GEOGRANNO_LENGTH_DIFFERENCE_BUCKETS.items() if abs(difference) >= low]


@dataclass(frozen=True)
class Column:
    """One numeric column: ``key`` links it to ``published.yaml``; ``metric_scale`` converts
    the metrics' percentages into the paper's unit (FAQ MRR is printed on a 0-1 scale)."""

    key: str
    header: str
    group: str = ""
    decimals: int = 1
    metric_scale: float = 1.0


@dataclass(frozen=True)
class Joined:
    """Columns the paper prints in one cell, e.g. Table 8's "29.6/58.9/67.1" (CSV keeps them apart)."""

    header: str
    keys: tuple[str, ...]
    separator: str = "/"
    optional_tail: bool = False  # print "52.1" rather than "52.1 ± –" where only the first is known


# (facet value or None, {column key: value in metric units or None}) for each row of one file
Cells = list[tuple[str | None, dict[str, float | None]]]


@dataclass(frozen=True)
class TableSpec:
    name: str
    title: str
    task: str
    columns: tuple[Column, ...]
    published: tuple[str, ...]
    cells: Callable[[MetricsFile], Cells]
    facet: str | None = None
    joined: tuple[Joined, ...] = ()
    gain: tuple[str, str] | None = None  # (gain column, the column it is the difference of)
    gain_base: Callable[[str], str | None] | None = None  # row label → its baseline's label, without --gain-over
    notes: tuple[str, ...] = ()
    extra_tasks: tuple[str, ...] = ()  # more tasks whose files fill the same rows (by model, pooling, facet)
    row_order: Callable[[str | None], tuple] | None = None  # sort key of the run rows, by facet
    # Paper tables whose columns come from several tasks: (task, cells of one file of that task), merged
    # into the row of the same model and pooling; then ``finish`` fills what is computed from the merged
    # cells (an average over columns of several tasks).
    merged: tuple[tuple[str, Callable[[MetricsFile], dict[str, float | None]]], ...] = ()
    finish: Callable[[dict[str, float | None]], None] | None = None

    def column(self, key: str) -> Column:
        return next(column for column in self.columns if column.key == key)


LEVELS = ("word", "phrase", "sentence")


def analogy_cells(metrics: MetricsFile) -> Cells:
    """docs/method.md §5: level sem / syn / Avg.; the last Avg. is ``overall`` (mean of the level averages)."""
    cells: dict[str, float | None] = {"avg": metrics.number("overall"), "gain": None}
    levels = metrics.require("levels")
    for level in LEVELS:
        for part in ("sem", "syn", "avg"):
            cells[f"{level}_{part}"] = metrics.number("levels", level, part) if level in levels else None
    return [(None, cells)]


def ppr_pnr_cells(metrics: MetricsFile) -> Cells:
    """Paper 003 Table 6: PPR / PNR of the phrase and sentence levels against the word level."""
    cells = {}
    for measure in ("ppr", "pnr"):
        per_level = metrics.require(measure)
        if not isinstance(per_level, dict):
            metrics.fail(f"key {measure!r} must map levels (phrase, sentence) to numbers, found {per_level!r}")
        for level in ("phrase", "sentence"):
            cells[f"{level}_{measure}"] = metrics.number(measure, level) if level in per_level else None
    return [(None, cells)]


STS_SCORES = {
    "sts12": "STS12",
    "sts13": "STS13",
    "sts14": "STS14",
    "sts15": "STS15",
    "sts16": "STS16",
    "stsb": "STS-B",
    "sickr": "SICK-R",
}


def sts_cells(metrics: MetricsFile) -> Cells:
    scores = metrics.require("scores")
    cells = {key: metrics.number("scores", name) if name in scores else None for key, name in STS_SCORES.items()}
    cells["avg"] = metrics.number("avg")
    return [(None, cells)]


WORDSIM_PHRASES = {"ppdb": "PPDB", "semeval": "SemEval"}
WORDSIM_WORDS = {"simlex": "SimLex-999", "ws_sim": "WS-353-SIM", "ws_rel": "WS-353-REL", "men": "MEN", "scws": "SCWS"}


def wordsim_cells(metrics: MetricsFile) -> Cells:
    """Paper 001 Table 3; its Avg. is the mean of the five word sets, so it stays empty
    unless all five were evaluated (SCWS is not in the public data)."""
    scores = metrics.require("scores")
    cells = {
        key: metrics.number("scores", name) if name in scores else None
        for key, name in {**WORDSIM_PHRASES, **WORDSIM_WORDS}.items()
    }
    words = [cells[key] for key in WORDSIM_WORDS]
    cells["avg"] = sum(words) / len(words) if None not in words else None
    return [(None, cells)]


def five_word_average(cells: dict[str, float | None]) -> None:
    """Paper 001 Table 3's Avg.: the mean of the five word sets, once every task's cells are merged."""
    words = [cells[key] for key in WORDSIM_WORDS]
    cells["avg"] = sum(words) / len(words) if None not in words else None


def ppdb_cells(metrics: MetricsFile) -> dict[str, float | None]:
    """The PPDB column from the ``ppdb`` task: Spearman on its headline file (``ppdb-sample``)."""
    return {"ppdb": metrics.number("scores", metrics.data.get("headline", "ppdb-sample"))}


def semeval_cells(metrics: MetricsFile) -> dict[str, float | None]:
    """The SemEval column from the ``semeval5a`` task: test accuracy of the classifier on frozen features."""
    return {"semeval": metrics.number("accuracy")}


def scws_cells(metrics: MetricsFile) -> dict[str, float | None]:
    return {"scws": metrics.number("scores", "SCWS")}


def senteval_sts_cells(metrics: MetricsFile) -> Cells:
    """Paper 001 Table 2 in SentEval's protocol: STS12-16 by cosine from the ``sts`` task; STS-B and
    SICK-R come from the transfer harness's trained regression (:func:`transfer_regression_cells`)."""
    cells = {key: None for key in STS_SCORES}
    scores = metrics.require("scores")
    for key, name in STS_SCORES.items():
        if name.startswith("STS1") and name in scores:
            cells[key] = metrics.number("scores", name)
    cells["avg"] = None
    return [(None, cells)]


# the transfer harness's (``evaluate transfer``) names of its trained STS-B / SICK-R regression tasks
TRANSFER_REGRESSION = {"stsb": "STS-B", "sickr": "SICK-R"}


def transfer_regression_cells(metrics: MetricsFile) -> dict[str, float | None]:
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
    return cells


def seven_set_average(cells: dict[str, float | None]) -> None:
    values = [cells[key] for key in STS_SCORES]
    cells["avg"] = sum(values) / len(values) if None not in values else None


def in_order(names, preferred: tuple[str, ...]) -> list[str]:
    """``names`` with the ``preferred`` ones first, in that order (metrics JSONs sort their keys)."""
    names = list(names)
    return sorted(
        names, key=lambda name: (preferred.index(name) if name in preferred else len(preferred), names.index(name))
    )


GEOGRANNO_SPLITS = (GEOGRANNO_TRAIN_DEV_SPLIT, "train", "dev")
FAQ_DATASETS = ("BQ", "AFQMC", "BUSTM")


def geogranno_cells(metrics: MetricsFile) -> Cells:
    rows = []
    for split in in_order(metrics.require("splits"), GEOGRANNO_SPLITS):
        rows.append((split, {f"top{k}": metrics.number("splits", split, f"top{k}") for k in (1, 5, 10)}))
    return rows


def geogranno_baseline_cells(metrics: MetricsFile) -> Cells:
    """ULR-BERT Table 8: GEOGRANNO Top-1/5/10 plus the GLUE dev average, which no evaluate task makes."""
    return [(split, {**cells, "glue_dev": None}) for split, cells in geogranno_cells(metrics)]


def geogranno_length_cells(metrics: MetricsFile) -> Cells:
    """ULR-BERT Table 9: Top-10 accuracy per bucket of query length and of length difference."""
    columns = {
        "by_query_length": dict(zip(GEOGRANNO_QUERY_LENGTH_BUCKETS, ("q_1_6", "q_7_8", "q_9_15"))),
        "by_length_difference": dict(zip(GEOGRANNO_LENGTH_DIFFERENCE_BUCKETS, ("d_ge0", "d_ge2", "d_ge3"))),
    }
    rows: dict[str, dict[str, float | None]] = {}
    for grouping, keys in columns.items():
        for split, buckets in metrics.require(grouping).items():
            cells = rows.setdefault(split, dict.fromkeys(key for group in columns.values() for key in group.values()))
            for bucket in buckets:
                if canonical_bucket(bucket) not in keys:
                    metrics.fail(
                        f"unknown bucket {bucket!r} in {grouping}.{split} (the table's buckets: {', '.join(keys)})"
                    )
                cells[keys[canonical_bucket(bucket)]] = metrics.number(grouping, split, bucket, "top10")
    return [(split, rows[split]) for split in in_order(rows, GEOGRANNO_SPLITS)]


def faq_cells(metrics: MetricsFile) -> Cells:
    """Paper 002 Table X per data set (BQ, AFQMC, BUSTM stand in for the private insurance FAQ),
    then their average: ``avg`` (Acc@1) with ``avg_mrr``, or ``avg`` as {acc1, mrr}."""
    rows = [
        (name, {"acc": metrics.number("datasets", name, "acc1"), "mrr": metrics.number("datasets", name, "mrr")})
        for name in in_order(metrics.require("datasets"), FAQ_DATASETS)
    ]
    if isinstance(metrics.require("avg"), dict):
        average = {"acc": metrics.number("avg", "acc1"), "mrr": metrics.number("avg", "mrr")}
    else:
        average = {
            "acc": metrics.number("avg"),
            "mrr": metrics.number("avg_mrr") if "avg_mrr" in metrics.data else None,
        }
    rows.append(("Avg.", average))
    return rows


# BURT twin Table 4: its blocks and the values of each, in the paper's order; the paper's defaults
# (objectives nli+pi+ptc, mean pooling, [u; v; |u-v|], k = 3) make the row every block shares.
ABLATION_BLOCKS = {
    "objectives": ("Objectives", {"nli": "NLI", "nli+pi": "NLI+PI", "nli+ptc": "NLI+PTC", "nli+pi+ptc": "NLI+PI+PTC"}),
    "pooling": ("Pooling", {"cls": "CLS", "max": "MAX", "mean": "MEAN"}),
    "concatenation": (
        "Concatenation",
        {
            "uv": "[u; v]",
            "diff": "[|u−v|]",
            "prod": "[u∗v]",
            "uv-diff": "[u; v; |u−v|]",
            "uv-prod": "[u; v; u∗v]",
            "diff-prod": "[|u−v|; u∗v]",
            "uv-diff-prod": "[u; v; |u−v|; u∗v]",
        },
    ),
    "negatives": ("Negative sampling", {1: "k = 1", 3: "k = 3", 5: "k = 5", 7: "k = 7"}),
}
ABLATION_DEFAULTS = {"objectives": "nli+pi+ptc", "pooling": "mean", "concatenation": "uv-diff", "negatives": 3}
FINETUNE_CONFIG = "finetune_config.json"


def ablation_facet(block: str, value) -> str:
    title, names = ABLATION_BLOCKS[block]
    return f"{title}: {names.get(value, value if block != 'negatives' else f'k = {value}')}"


def ablation_facets(settings: dict) -> list[str]:
    """The Table 4 rows a twin run belongs to: every block for the default run, the block of the one
    setting it changes otherwise, none when it changes more than one."""
    changed = [block for block in ABLATION_BLOCKS if settings.get(block) != ABLATION_DEFAULTS[block]]
    if not changed:
        return [ablation_facet(block, ABLATION_DEFAULTS[block]) for block in ABLATION_BLOCKS]
    return [ablation_facet(changed[0], settings[changed[0]])] if len(changed) == 1 else []


def ablation_order(facet: str | None) -> tuple:
    """Sort key of a Table 4 row: block, then the value's place in the paper's block."""
    for index, (block, (title, names)) in enumerate(ABLATION_BLOCKS.items()):
        if facet and facet.startswith(f"{title}: "):
            labels = [ablation_facet(block, value) for value in names]
            return (index, labels.index(facet) if facet in labels else len(labels))
    return (len(ABLATION_BLOCKS), 0)


def finetune_settings(metrics: MetricsFile) -> dict | None:
    """The fine-tuning settings of the evaluated model (its ``finetune_config.json``), None if it has none."""
    import json
    from pathlib import Path

    path = metrics.model.get("path")
    config = Path(path) / FINETUNE_CONFIG if path else None
    if config is None or not config.is_file():
        return None
    return json.loads(config.read_text(encoding="utf-8"))


PHRASE_AND_WORD_CELLS = {"ppdb": ppdb_cells, "semeval5a": semeval_cells, "scws": scws_cells}


def ablation_cells(metrics: MetricsFile) -> Cells:
    """BURT twin Table 4: STS* (mean of STS12-16), STS-B, SICK-R from an ``sts`` file; the phrase columns from
    the ``ppdb`` and ``semeval5a`` files, the word columns (and their Avg., the mean of the five word sets) from
    the ``wordsim`` and ``scws`` files, as Table 3 takes them. Twin runs only."""
    settings = finetune_settings(metrics)
    if settings is None or settings.get("recipe") != "twin":
        return []
    if metrics.task == "sts":
        scores = sts_cells(metrics)[0][1]
        years = [scores[key] for key in ("sts12", "sts13", "sts14", "sts15", "sts16")]
        cells = {
            "sts_star": sum(years) / len(years) if None not in years else None,
            "stsb": scores["stsb"],
            "sickr": scores["sickr"],
        }
    elif metrics.task in PHRASE_AND_WORD_CELLS:
        cells = PHRASE_AND_WORD_CELLS[metrics.task](metrics)
    else:
        cells = {key: value for key, value in wordsim_cells(metrics)[0][1].items() if value is not None}
    return [(facet, cells) for facet in ablation_facets(settings)]


def snli_cells(metrics: MetricsFile) -> Cells:
    """Paper 004 Table 2: sentence vector size, encoder parameters (millions), SNLI dev / test accuracy."""
    parameters = metrics.number("parameters")
    return [
        (
            None,
            {
                "dim": metrics.number("dim"),
                "params": None if parameters is None else parameters / 1e6,
                "dev": metrics.number("dev"),
                "test": metrics.number("test"),
            },
        )
    ]


# Paper 004 Table 3 columns, then the tasks the harness adds (MRPC, STS-B) and the dev averages.
TRANSFER_SCORES = {
    "mr": "MR",
    "cr": "CR",
    "subj": "SUBJ",
    "mpqa": "MPQA",
    "sst": "SST2",
    "trec": "TREC",
    "sickr": "SICK-R",
    "sicke": "SICK-E",
    "mrpc": "MRPC",
    "stsb": "STS-B",
    "micro": "micro",
    "macro": "macro",
}


def transfer_cells(metrics: MetricsFile) -> Cells:
    """Paper 004 Table 3 from a transfer metrics JSON (tasks a run left out stay empty)."""
    data = metrics.data
    cells = {key: metrics.number(name) if name in data else None for key, name in TRANSFER_SCORES.items()}
    tasks = metrics.require("tasks")
    cells["mrpc_f1"] = metrics.number("tasks", "MRPC", "f1") if "MRPC" in tasks else None
    for measure in ("pearson", "spearman"):
        cells[f"sts14_{measure}"] = metrics.number("tasks", "STS14", measure) if "STS14" in tasks else None
    return [(None, cells)]


def _levels(*parts: str) -> tuple[Column, ...]:
    columns = []
    for level in LEVELS:
        for part in parts:
            columns.append(Column(f"{level}_{part}", {"sem": "sem", "syn": "syn", "avg": "Avg."}[part], level.title()))
    return tuple(columns)


# ULR-BERT Table 8's columns: GEOGRANNO Top-1/5/10 beside the GLUE dev average (the base models in
# ``geogranno_baselines``, the runs in ``glue_backbones``).
ULR_T8_COLUMNS = (
    Column("top1", "Top-1", "GEOGRANNO"),
    Column("top5", "Top-5", "GEOGRANNO"),
    Column("top10", "Top-10", "GEOGRANNO"),
    Column("glue_dev", "GLUE dev"),
)

# BURT twin Table 2's columns, scored by cosine (``sts``) or as SentEval does (``sts_senteval``).
STS_COLUMNS = (
    Column("sts12", "STS12"),
    Column("sts13", "STS13"),
    Column("sts14", "STS14"),
    Column("sts15", "STS15"),
    Column("sts16", "STS16"),
    Column("stsb", "STS-B"),
    Column("sickr", "SICK-R"),
    Column("avg", "Avg."),
)

TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        name="analogy",
        title="Universal analogy accuracy (ULR-BERT Table 2, BURT Table VIII, ALBURT Table 4)",
        task="analogy",
        columns=_levels("sem", "syn", "avg") + (Column("avg", "Avg."), Column("gain", "Gain")),
        published=("ulr_t2", "burt_t8", "alburt_t4"),
        cells=analogy_cells,
        gain=("gain", "avg"),
        notes=(
            (
                "sem = semantic categories, syn = syntactic ones; a level's Avg. = (sem + syn) / 2; the last Avg. "
                "is the mean of the three level averages (ALBURT Table 4 calls it All)."
            ),
            (
                "Gain: the paper's improvement over the starting checkpoint; for runs, the difference to the row "
                "named by --gain-over, if given."
            ),
        ),
    ),
    TableSpec(
        name="analogy_ppr_pnr",
        title="PPR and PNR on the phrase and sentence analogy sets (ALBURT Table 6)",
        task="analogy",
        columns=(
            Column("phrase_ppr", "PPR", "Phrase"),
            Column("phrase_pnr", "PNR", "Phrase"),
            Column("sentence_ppr", "PPR", "Sentence"),
            Column("sentence_pnr", "PNR", "Sentence"),
        ),
        published=("alburt_t6",),
        cells=ppr_pnr_cells,
        notes=(
            (
                "PPR: share of the questions answered correctly at the word level that are still answered "
                "correctly at this level; PNR: share of those answered wrongly at the word level that are "
                "answered correctly here."
            ),
        ),
    ),
    TableSpec(
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
    ),
    TableSpec(
        name="wordsim",
        title="Phrase and word similarity, Spearman x 100; SemEval: accuracy (BURT twin Table 3)",
        task="wordsim",
        columns=(
            Column("ppdb", "PPDB (human labels)", "Phrases"),
            Column("semeval", "SemEval 5(a) (Y&D)", "Phrases"),
            Column("simlex", "SimLex", "Words"),
            Column("ws_sim", "WS-sim", "Words"),
            Column("ws_rel", "WS-rel", "Words"),
            Column("men", "MEN", "Words"),
            Column("scws", "SCWS", "Words"),
            Column("avg", "Avg."),
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
                "SemEval 5(a) (Y&D): runs give test accuracy of a logistic regression on frozen pair features "
                "[u; v; |u-v|; u*v], on Yu & Dredze's POS-tagged subset of SemEval-2013 Task 5(a) (11,175 train / "
                "7,490 test); the paper fine-tunes on the full 11,722 / 7,814."
            ),
        ),
        merged=(("ppdb", ppdb_cells), ("semeval5a", semeval_cells), ("scws", scws_cells)),
        finish=five_word_average,
    ),
    TableSpec(
        name="geogranno",
        title="GEOGRANNO question paraphrase retrieval accuracy (ULR-BERT Table 4)",
        task="geogranno",
        columns=(Column("top1", "Top-1"), Column("top5", "Top-5"), Column("top10", "Top-10")),
        published=("ulr_t4",),
        cells=geogranno_cells,
        facet="Split",
        notes=(
            (
                f"Split {GEOGRANNO_TRAIN_DEV_SPLIT}: every train and dev question ranks the 158 distinct canonical "
                'utterances of train + dev, the paper\'s "train-dev set".'
            ),
        ),
    ),
    TableSpec(
        name="geogranno_baselines",
        title="Base models on GEOGRANNO (Top-1/5/10) and GLUE dev (ULR-BERT Table 8)",
        task="geogranno",
        columns=ULR_T8_COLUMNS,
        published=("ulr_t8",),
        cells=geogranno_baseline_cells,
        facet="Split",
        joined=(Joined("GEOGRANNO", ("top1", "top5", "top10")),),
        notes=(
            (
                "GLUE dev is the paper's average over the GLUE dev sets; the evaluation harness does not "
                "compute it, so runs leave it empty."
            ),
        ),
    ),
    TableSpec(
        name="geogranno_by_length",
        title="GEOGRANNO Top-10 accuracy by query length and length difference (ULR-BERT Table 9)",
        task="geogranno",
        columns=tuple(
            Column(key, label, "|q|")
            for key, label in zip(("q_1_6", "q_7_8", "q_9_15"), GEOGRANNO_QUERY_LENGTH_BUCKETS)
        )
        + tuple(
            Column(key, label, "abs(|q| - |Q|)")
            for key, label in zip(("d_ge0", "d_ge2", "d_ge3"), GEOGRANNO_LENGTH_DIFFERENCE_BUCKETS)
        ),
        published=("ulr_t9",),
        cells=geogranno_length_cells,
        facet="Split",
        notes=(
            (
                "|q|: query length in words; |Q|: length of its canonical utterance. The length-difference "
                "buckets are cumulative (≥ 0 is every query)."
            ),
        ),
    ),
    TableSpec(
        name="faq",
        title="FAQ retrieval, top-1 accuracy and MRR (BURT Table X)",
        task="faq",
        columns=(Column("acc", "Acc."), Column("mrr", "MRR", decimals=3, metric_scale=0.01)),
        published=("burt_t10", "alburt_t8"),
        cells=faq_cells,
        facet="Dataset",
        notes=(
            (
                "The papers' FAQ sets are private insurance FAQs; runs use the public question-matching sets "
                "BQ, AFQMC and BUSTM turned into FAQ retrieval. MRR is printed on the papers' 0-1 scale."
            ),
        ),
    ),
    TableSpec(
        name="ablation",
        title="Ablation of the twin structure: objectives, pooling, concatenation, k (BURT twin Table 4)",
        task="sts",
        extra_tasks=("wordsim", "ppdb", "semeval5a", "scws"),
        columns=(
            Column("sts_star", "STS*", "Sentences"),
            Column("stsb", "STS-B", "Sentences"),
            Column("sickr", "SICK-R", "Sentences"),
            Column("ppdb", "PPDB", "Phrases"),
            Column("semeval", "SemEval", "Phrases"),
            Column("simlex", "SimLex", "Words"),
            Column("ws_sim", "WS-sim", "Words"),
            Column("ws_rel", "WS-rel", "Words"),
            Column("men", "MEN", "Words"),
            Column("scws", "SCWS", "Words"),
            Column("avg", "Avg."),
        ),
        published=("twin_t4",),
        cells=ablation_cells,
        facet="Variant",
        row_order=ablation_order,
        notes=(
            (
                "Rows: twin runs (python -m pipeline finetune --recipe twin) that change one setting of the "
                "paper's defaults (NLI+PI+PTC, MEAN, [u; v; |u−v|], k = 3); the default run appears in every "
                "block, as in the paper. STS*: mean of STS12-16. STS-B and SICK-R by cosine similarity. Avg.: mean "
                "of the five word sets."
            ),
        ),
    ),
    TableSpec(
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
    ),
)


# The fine-tuning tables build on the classes above (hence the late import).
from pipeline.report.glue_tables import GLUE_TABLES

TABLES = TABLES + GLUE_TABLES
TABLES += (
    TableSpec(
        name="bilstm_snli",
        title="BiLSTM encoders on SNLI, accuracy (paper 004 Table 2)",
        task="snli",
        columns=(
            Column("dim", "Dim", decimals=0),
            Column("params", "Params (M)", decimals=2),
            Column("dev", "Dev"),
            Column("test", "Test"),
        ),
        published=("bf_t2",),
        cells=snli_cells,
        notes=(
            (
                "The paper trains on the 550k SNLI training pairs with GloVe 300d. Runs on the public data train on "
                "SNLI dev + MultiNLI dev (matched and mismatched) with the word vectors of the config, hold out a "
                "seeded share of those pairs as Dev, and report Test on SNLI test."
            ),
            "Dim: size of the sentence vector (2 x LSTM units per direction); Params: trainable encoder weights.",
        ),
    ),
    TableSpec(
        name="transfer",
        title="Transfer tasks, SentEval protocol (paper 004 Table 3)",
        task="transfer",
        columns=(
            Column("mr", "MR"),
            Column("cr", "CR"),
            Column("subj", "SUBJ"),
            Column("mpqa", "MPQA"),
            Column("sst", "SST"),
            Column("trec", "TREC"),
            Column("sickr", "SICK-R", decimals=3, metric_scale=0.01),
            Column("sicke", "SICK-E"),
            Column("sts14_pearson", "STS14 Pearson", decimals=2, metric_scale=0.01),
            Column("sts14_spearman", "STS14 Spearman", decimals=2, metric_scale=0.01),
            Column("mrpc", "MRPC acc."),
            Column("mrpc_f1", "MRPC F1"),
            Column("stsb", "STS-B", decimals=3, metric_scale=0.01),
            Column("micro", "micro", "dev"),
            Column("macro", "macro", "dev"),
        ),
        published=("bf_t3",),
        cells=transfer_cells,
        joined=(Joined("STS14", ("sts14_pearson", "sts14_spearman")),),
        notes=(
            (
                "Test accuracy (MR, CR, SUBJ, MPQA: 10-fold cross-validation), SICK-R and STS-B Pearson of the "
                "trained regression, STS14 Pearson / Spearman of cosine similarity, on the paper's 0-1 scale. "
                "MRPC, STS-B and the dev averages (micro: weighted by dev size; macro: plain mean over MR, CR, "
                "SUBJ, MPQA, SST, TREC, MRPC, SICK-E) are not in the paper's table."
            ),
        ),
    ),
)

TABLE_NAMES = tuple(spec.name for spec in TABLES)
TASKS = tuple(
    sorted(
        {spec.task for spec in TABLES}
        | {task for spec in TABLES for task, _ in spec.merged}
        | {task for spec in TABLES for task in spec.extra_tasks}
    )
)

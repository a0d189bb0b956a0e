"""The fine-tuning tables: GLUE and CLUE by model, objective, seed spread, sampling and backbone.

ULR-BERT Tables 3 and 5 (GLUE test, by model and by objective), 6 (std / mean / max over 5
seeds on the CoLA, RTE and MRPC dev sets), 7 (sampling strategies, GLUE dev), 8 (backbones:
GEOGRANNO Top-1/5/10 beside the GLUE dev average); BURT Tables V (CLUE test) and VI (GLUE
test). Run rows come from the ``classify-summary`` metrics JSONs (one per model and
benchmark) and are dev results, mean ± std over seeds; the published rows say test or dev as
the paper does (the facet column "Split").
"""

from __future__ import annotations

from pipeline.report.metrics_files import MetricsFile
from pipeline.report.spec import Cells, Column, Gain, Joined, TableSpec

GLUE_COLUMNS = (
    ("cola", "CoLA (mc)"),
    ("sst2", "SST-2 (acc)"),
    ("mnli_m", "MNLI-m (acc)"),
    ("mnli_mm", "MNLI-mm (acc)"),
    ("qnli", "QNLI (acc)"),
    ("rte", "RTE (acc)"),
    ("mrpc", "MRPC (F1)"),
    ("qqp", "QQP (F1)"),
    ("stsb", "STS-B (pc)"),
)
CLUE_COLUMNS = (
    ("tnews", "TNEWS (acc)"),
    ("iflytek", "IFLYTEK (acc)"),
    ("cluewsc", "WSC (acc)"),
    ("afqmc", "AFQMC (acc)"),
    ("csl", "CSL (acc)"),
    ("ocnli", "OCNLI (acc)"),
    ("cmrc2018", "CMRC18 (EM)"),
    ("chid", "ChID (acc)"),
    ("c3", "C3 (acc)"),
)
SEED_TASKS = {"cola": "CoLA", "rte": "RTE", "mrpc": "MRPC"}  # ULR-BERT Table 6: task -> header
RUN_SPLIT = "dev"
# ULR-BERT Table 8's columns: GEOGRANNO Top-1/5/10 beside the GLUE dev average and its spread over seeds (the
# base models in retrieval_tables.GEOGRANNO_BASELINES, the fine-tuned backbones in GLUE_BACKBONES here)
ULR_T8_COLUMNS = (
    Column("top1", "Top-1", "GEOGRANNO"),
    Column("top5", "Top-5", "GEOGRANNO"),
    Column("top10", "Top-10", "GEOGRANNO"),
    Column("glue_dev", "GLUE dev"),
    Column("glue_dev_std", "GLUE dev std"),
)
ULR_T8_JOINED = (
    Joined("GEOGRANNO", ("top1", "top5", "top10")),
    Joined("GLUE dev", ("glue_dev", "glue_dev_std"), separator=" ± ", optional_tail=True),
)


def _task_key(column: str) -> tuple[str, str]:
    """Column key → (task, evaluation set): MNLI's two columns are its matched and mismatched dev sets."""
    return {"mnli_m": ("mnli", "dev"), "mnli_mm": ("mnli", "dev_mm")}.get(column, (column, "dev"))


def _result(metrics: MetricsFile, column: str) -> dict | None:
    task, set_name = _task_key(column)
    result = metrics.require("tasks").get(task)
    if result is None or set_name not in result:
        return None
    return result[set_name].get(result["metric"])


def score_cells(columns: tuple[tuple[str, str], ...], gain: bool = False):
    def cells(metrics: MetricsFile) -> Cells:
        values: dict[str, float | None] = {}
        for key, _ in columns:
            spread = _result(metrics, key)
            values[key] = spread["mean"] if spread else None
            values[f"{key}_std"] = spread["std"] if spread else None
        values["avg"], values["avg_std"] = glue_average(metrics)
        if gain:
            values["gain"] = None  # filled from the starting checkpoint's row (GAIN, assemble.add_gain)
        return [(RUN_SPLIT, values)]

    return cells


def glue_average(metrics: MetricsFile) -> tuple[float | None, float | None]:
    """The papers' Avg. of one model (classify-summary ``avg.mean``) and its sample std over the seeds'
    averages: what every table that prints a GLUE or CLUE average prints (ULR-BERT Tables 3, 5, 7 and 8; BURT
    Tables V and VI)."""
    return metrics.number("avg", "mean"), average_std(metrics)


def average_std(metrics: MetricsFile) -> float | None:
    """The sample std over seeds of each seed's average (classify-summary ``avg.std``); None where the summary
    has none (one seed, seeds that differ between tasks, or a summary written before it was kept)."""
    average = metrics.require("avg")
    if not isinstance(average, dict) or average.get("std") is None:
        return None
    return metrics.number("avg", "std")


def seed_cells(metrics: MetricsFile) -> Cells:
    values: dict[str, float | None] = {}
    for task in SEED_TASKS:
        spread = _result(metrics, task)
        for part in ("std", "mean", "max"):
            values[f"{task}_{part}"] = spread[part] if spread else None
    return [(RUN_SPLIT, values)]


def backbone_cells(metrics: MetricsFile) -> Cells:
    geogranno = metrics.data.get("geogranno") or {}
    return [(None, {f"top{k}": geogranno.get(f"top{k}") for k in (1, 5, 10)} | glue_dev_cells(metrics))]


def glue_dev_cells(metrics: MetricsFile) -> dict[str, float | None]:
    """ULR-BERT Table 8's GLUE dev column: the GLUE average and its spread over seeds (:func:`glue_average`)."""
    mean, std = glue_average(metrics)
    return {"glue_dev": mean, "glue_dev_std": std}


def base_checkpoint(label: str) -> str | None:
    """A ``backbone+objective`` run's starting checkpoint (the row its gain is computed against)."""
    return label.split("+", 1)[0] if "+" in label else None


# Avg. is the mean of the columns a run filled, so a row is compared only with a base that ran the same tasks.
GAIN = Gain("gain", "avg", base=base_checkpoint, same_columns=True)
RUNS_NOTE = (
    "Runs: dev sets, mean ± std over seeds at the batch size chosen on dev; Avg. is the mean of the "
    "columns that were run (the papers average all of them), so compare it only between rows that ran "
    "the same tasks."
)


def score_table(
    name: str,
    title: str,
    task: str,
    scores: tuple[tuple[str, str], ...],
    published: tuple[str, ...],
    notes: tuple[str, ...],
    gain: Gain | None = None,
) -> TableSpec:
    """A table of benchmark scores (``scores``: column key, header), each printed as "mean ± std", then the
    Avg. as "mean ± std" over the seeds' averages (and the Gain column where ``gain`` is given); one row per model on the dev sets."""
    columns, joined = [], []
    for key, header in scores:
        columns += [Column(key, header), Column(f"{key}_std", f"{header} std")]
        joined.append(Joined(header, (key, f"{key}_std"), separator=" ± ", optional_tail=True))
    columns += [Column("avg", "Avg."), Column("avg_std", "Avg. std")]
    joined.append(Joined("Avg.", ("avg", "avg_std"), separator=" ± ", optional_tail=True))
    if gain is not None:
        columns.append(Column(gain.column, "Gain"))
    return TableSpec(
        name=name,
        title=title,
        task=task,
        columns=tuple(columns),
        published=published,
        cells=score_cells(scores, gain=gain is not None),
        facet="Split",
        joined=tuple(joined),
        gain=gain,
        notes=notes,
    )


GLUE_TABLES: tuple[TableSpec, ...] = (
    score_table(
        "glue",
        "GLUE by model and by pre-training objective (ULR-BERT Tables 3 and 5)",
        "glue",
        GLUE_COLUMNS,
        ("ulr_t3", "ulr_t5"),
        (
            RUNS_NOTE,
            "Gain: a backbone+objective run's Avg. minus its starting checkpoint's, from our own runs.",
            "mc = Matthews correlation, pc = Pearson correlation; published rows are GLUE test server scores.",
        ),
        gain=GAIN,
    ),
    score_table(
        "glue_burt",
        "GLUE results (BURT Table VI)",
        "glue",
        GLUE_COLUMNS,
        ("burt_t6",),
        (RUNS_NOTE, "Published rows are GLUE test server scores; MLM and Span rows are BURT's baselines."),
    ),
    TableSpec(
        name="glue_seeds",
        title="Seed spread on GLUE dev: std, mean and max over seeds (ULR-BERT Table 6)",
        task="glue",
        columns=tuple(
            Column(f"{task}_{part}", part if part != "std" else "std.", title, decimals=2 if part == "std" else 1)
            for task, title in SEED_TASKS.items()
            for part in ("std", "mean", "max")
        ),
        published=("ulr_t6",),
        cells=seed_cells,
        facet="Split",
        notes=("std is the sample standard deviation over the seeds (the paper uses 5); CoLA in MCC, MRPC in F1.",),
    ),
    score_table(
        "glue_sampling",
        "GLUE dev by span sampling strategy (ULR-BERT Table 7)",
        "glue",
        GLUE_COLUMNS,
        ("ulr_t7",),
        (
            RUNS_NOTE,
            (
                "ULR-BERT §7.2 replaces MiSAD's n-gram w: Random Spans = the misad-span objective (w a SpanBERT "
                "span, Geometric(0.2), 1..6 words), Named Entities = misad-entity (w a named entity), PMI "
                "n-grams = misad. The two variants draw w uniformly (the paper gives them no score); misad as "
                "pretrain.misad_choice says."
            ),
        ),
    ),
    TableSpec(
        name="glue_backbones",
        title="Backbones on GEOGRANNO (Top-1/5/10) and the GLUE dev average (ULR-BERT Table 8)",
        task="glue",
        columns=ULR_T8_COLUMNS,
        published=("ulr_t8",),
        cells=backbone_cells,
        joined=ULR_T8_JOINED,
        notes=(
            (
                "GEOGRANNO on the train-dev set (Table 4); GLUE dev is the average of the GLUE dev columns run, "
                "mean ± std over the seeds' averages."
            ),
        ),
    ),
    score_table(
        "clue",
        "CLUE results (BURT Table V)",
        "clue",
        CLUE_COLUMNS,
        ("burt_t5",),
        # which data stood in for a CLUE release (FewCLUE splits, say) is the run's own: each row's
        # classify-summary carries its substitutes as notes, printed under the table (assemble.row_notes)
        (RUNS_NOTE, "Published rows are CLUE test server scores; CMRC18 is exact match."),
    ),
)

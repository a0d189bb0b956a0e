"""The retrieval tables: GEOGRANNO question paraphrase retrieval (ULR-BERT Tables 4, 8 and 9) and FAQ
retrieval (BURT Table X), from the ``geogranno`` and ``faq`` metrics files.

Their run rows come one per split or data set (the facet column), in the papers' order. The GEOGRANNO
splits and Table 9's buckets are the task's own (:mod:`pipeline.tasks.geogranno`), so the table reads
exactly the labels the evaluation writes."""

from __future__ import annotations

from pipeline.report.glue_tables import ULR_T8_COLUMNS, ULR_T8_JOINED, glue_dev_cells
from pipeline.report.metrics_files import MetricsFile
from pipeline.report.spec import Cells, Column, TableSpec
from pipeline.tasks import faq, geogranno

GEOGRANNO_SPLITS = (geogranno.TRAIN_DEV_SPLIT, *geogranno.SPLITS)
FAQ_DATASETS = tuple(faq.DATASETS)
# Table 9's column keys, bucket by bucket
LENGTH_COLUMNS = {
    "by_query_length": dict(zip(geogranno.QUERY_LENGTH_BUCKETS, ("q_1_6", "q_7_8", "q_9_15"))),
    "by_length_difference": dict(zip(geogranno.LENGTH_DIFFERENCE_BUCKETS, ("d_ge0", "d_ge2", "d_ge3"))),
}


def in_order(names, preferred: tuple[str, ...]) -> list[str]:
    """``names`` with the ``preferred`` ones first, in that order (metrics JSONs sort their keys)."""
    names = list(names)
    return sorted(
        names, key=lambda name: (preferred.index(name) if name in preferred else len(preferred), names.index(name))
    )


def geogranno_cells(metrics: MetricsFile) -> Cells:
    rows = []
    for split in in_order(metrics.require("splits"), GEOGRANNO_SPLITS):
        rows.append((split, {f"top{k}": metrics.number("splits", split, f"top{k}") for k in (1, 5, 10)}))
    return rows


def glue_average_cells(metrics: MetricsFile) -> Cells:
    """ULR-BERT Table 8's GLUE dev average beside GEOGRANNO on the train-dev set, the split Table 8 prints: the
    average and its spread over seeds as the GLUE tables print them (:func:`glue_tables.glue_dev_cells`)."""
    return [(geogranno.TRAIN_DEV_SPLIT, glue_dev_cells(metrics))]


def geogranno_length_cells(metrics: MetricsFile) -> Cells:
    """ULR-BERT Table 9: Top-10 accuracy per bucket of query length and of length difference."""
    rows: dict[str, dict[str, float | None]] = {}
    for grouping, keys in LENGTH_COLUMNS.items():
        for split, buckets in metrics.require(grouping).items():
            cells = rows.setdefault(
                split, dict.fromkeys(key for group in LENGTH_COLUMNS.values() for key in group.values())
            )
            for bucket in buckets:
                label = geogranno.canonical_bucket(bucket)
                if label not in keys:
                    metrics.fail(
                        f"unknown bucket {bucket!r} in {grouping}.{split} (the table's buckets: {', '.join(keys)})"
                    )
                cells[keys[label]] = metrics.number(grouping, split, bucket, "top10")
    return [(split, rows[split]) for split in in_order(rows, GEOGRANNO_SPLITS)]


def faq_cells(metrics: MetricsFile) -> Cells:
    """BURT Table X per data set (BQ, AFQMC, BUSTM stand in for the private insurance FAQ),
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


GEOGRANNO = TableSpec(
    name="geogranno",
    title="GEOGRANNO question paraphrase retrieval accuracy (ULR-BERT Table 4)",
    task="geogranno",
    columns=(Column("top1", "Top-1"), Column("top5", "Top-5"), Column("top10", "Top-10")),
    published=("ulr_t4",),
    cells=geogranno_cells,
    facet="Split",
    notes=(
        (
            f"Split {geogranno.TRAIN_DEV_SPLIT}: every train and dev question ranks the 158 distinct canonical "
            'utterances of train + dev, the paper\'s "train-dev set".'
        ),
    ),
)

GEOGRANNO_BASELINES = TableSpec(
    name="geogranno_baselines",
    title="Base models on GEOGRANNO (Top-1/5/10) and GLUE dev (ULR-BERT Table 8)",
    task="geogranno",
    columns=ULR_T8_COLUMNS,
    published=("ulr_t8",),
    cells=geogranno_cells,
    facet="Split",
    joined=ULR_T8_JOINED,
    notes=(
        (
            "GLUE dev is the paper's average over the GLUE dev sets: a run's is its GLUE summary's average "
            "(classify-summary), mean ± std over the seeds' averages, beside GEOGRANNO's train-dev split "
            "(all) at every pooling."
        ),
    ),
    merged=(("glue", glue_average_cells),),
    every_pooling=("glue",),
)

GEOGRANNO_BY_LENGTH = TableSpec(
    name="geogranno_by_length",
    title="GEOGRANNO Top-10 accuracy by query length and length difference (ULR-BERT Table 9)",
    task="geogranno",
    columns=tuple(
        Column(key, label, group)
        for group, keys in zip(("|q|", "abs(|q| - |Q|)"), LENGTH_COLUMNS.values())
        for label, key in keys.items()
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
)

FAQ = TableSpec(
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
)

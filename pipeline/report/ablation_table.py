"""BURT twin Table 4, the ablation of the twin structure: which rows a twin run fills (its blocks, from the
run's ``finetune_config.json``) and its cells, merged from the run's ``sts``, ``wordsim``, ``ppdb``,
``semeval5a`` and ``scws`` files (docs/method.md §4)."""

from __future__ import annotations

from pathlib import Path

from pipeline.errors import InputError
from pipeline.report.metrics_files import MetricsFile, read_json
from pipeline.report.similarity_tables import (
    STS_YEARS,
    WORD_COLUMNS,
    mean_of_all,
    ppdb_cells,
    scws_cells,
    semeval_cells,
    sts_cells,
    wordsim_cells,
)
from pipeline.report.spec import Cells, CellsOf, Column, TableSpec

# Table 4's blocks and the values of each, in the paper's order; the paper's defaults (objectives
# nli+pi+ptc, mean pooling, [u; v; |u-v|], k = 3) make the row every block shares.
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
    path = metrics.model.get("path")
    config = Path(path) / FINETUNE_CONFIG if path else None
    if config is None or not config.is_file():
        return None
    settings = read_json(config)
    if not isinstance(settings, dict):
        raise InputError(config, f"expected a JSON object, found {type(settings).__name__}")
    return settings


def twin_rows(cells_of: CellsOf) -> CellsOf:
    """``cells_of`` for a twin run's files, once per Table 4 row the run belongs to; nothing for other runs."""

    def cells(metrics: MetricsFile) -> Cells:
        settings = finetune_settings(metrics)
        if settings is None or settings.get("recipe") != "twin":
            return []
        return [(facet, values) for _, values in cells_of(metrics) for facet in ablation_facets(settings)]

    return cells


def sentence_cells(metrics: MetricsFile) -> Cells:
    """STS* (the mean of STS12-16), STS-B and SICK-R, all by cosine, from an ``sts`` file."""
    scores = sts_cells(metrics)[0][1]
    return [
        (
            None,
            {
                "sts_star": mean_of_all([scores[key] for key in STS_YEARS]),
                "stsb": scores["stsb"],
                "sickr": scores["sickr"],
            },
        )
    ]


ABLATION = TableSpec(
    name="ablation",
    title="Ablation of the twin structure: objectives, pooling, concatenation, k (BURT twin Table 4)",
    task="sts",
    columns=(
        Column("sts_star", "STS*", "Sentences"),
        Column("stsb", "STS-B", "Sentences"),
        Column("sickr", "SICK-R", "Sentences"),
        Column("ppdb", "PPDB", "Phrases"),
        Column("semeval", "SemEval", "Phrases"),
        *WORD_COLUMNS,
    ),
    published=("twin_t4",),
    cells=twin_rows(sentence_cells),
    facet="Variant",
    # the word columns and their Avg. come from the wordsim file (the Avg. only where it has all five sets)
    merged=(
        ("wordsim", twin_rows(wordsim_cells)),
        ("ppdb", twin_rows(ppdb_cells)),
        ("semeval5a", twin_rows(semeval_cells)),
        ("scws", twin_rows(scws_cells)),
    ),
    row_order=ablation_order,
    notes=(
        (
            "Rows: twin runs (python -m pipeline finetune --recipe twin) that change one setting of the "
            "paper's defaults (NLI+PI+PTC, MEAN, [u; v; |u−v|], k = 3); the default run appears in every "
            "block, as in the paper. STS*: mean of STS12-16. STS-B and SICK-R by cosine similarity. Avg.: mean "
            "of the five word sets."
        ),
    ),
)

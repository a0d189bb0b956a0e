"""The universal analogy tables: accuracy per level (ULR-BERT Table 2, BURT Table VIII, ALBURT Table 4) and
PPR / PNR (ALBURT Table 6), from the ``analogy`` metrics files, and the printed questions' candidate scores
(BURT Table VII, ALBURT Table 5) from the ``analogy_examples`` ones (docs/method.md §5)."""

from __future__ import annotations

from pipeline.report.metrics_files import MetricsFile
from pipeline.report.spec import Cells, Column, Gain, TableSpec
from pipeline.tasks.analogy import LEVELS
from pipeline.tasks.analogy_examples import read_questions

PARTS = {"sem": "sem", "syn": "syn", "avg": "Avg."}  # column key part -> header


def analogy_cells(metrics: MetricsFile) -> Cells:
    """docs/method.md §5: level sem / syn / Avg.; the last Avg. is ``overall`` (mean of the level averages)."""
    cells: dict[str, float | None] = {"avg": metrics.number("overall"), "gain": None}
    levels = metrics.require("levels")
    for level in LEVELS:
        for part in PARTS:
            cells[f"{level}_{part}"] = metrics.number("levels", level, part) if level in levels else None
    return [(None, cells)]


def ppr_pnr_cells(metrics: MetricsFile) -> Cells:
    """ALBURT Table 6: PPR / PNR of the phrase and sentence levels against the word level."""
    cells = {}
    for measure in ("ppr", "pnr"):
        per_level = metrics.require(measure)
        if not isinstance(per_level, dict):
            metrics.fail(f"key {measure!r} must map levels (phrase, sentence) to numbers, found {per_level!r}")
        for level in ("phrase", "sentence"):
            cells[f"{level}_{measure}"] = metrics.number(measure, level) if level in per_level else None
    return [(None, cells)]


ANALOGY = TableSpec(
    name="analogy",
    title="Universal analogy accuracy (ULR-BERT Table 2, BURT Table VIII, ALBURT Table 4)",
    task="analogy",
    columns=tuple(
        Column(f"{level}_{part}", header, level.title()) for level in LEVELS for part, header in PARTS.items()
    )
    + (Column("avg", "Avg."), Column("gain", "Gain")),
    published=("ulr_t2", "burt_t8", "alburt_t4"),
    cells=analogy_cells,
    gain=Gain("gain", "avg"),
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
)

PPR_PNR = TableSpec(
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
)


def example_cells(metrics: MetricsFile) -> Cells:
    """BURT Table VII, ALBURT Table 5: each printed candidate's cos(b - a + c, d) x 100."""
    return [(None, {key: metrics.number("scores", key) for key in EXAMPLE_KEYS})]


# the candidates of the printed questions, in the package file's order (pipeline/tasks/analogy_examples.yaml)
EXAMPLE_QUESTIONS = read_questions()
EXAMPLE_KEYS = tuple(key for question in EXAMPLE_QUESTIONS for key, _ in question.candidates)

ANALOGY_EXAMPLES = TableSpec(
    name="analogy_examples",
    title="Candidate scores of the printed Negation analogy questions (BURT Table VII, ALBURT Table 5)",
    task="analogy_examples",
    columns=tuple(
        Column(key, "gold" if index == 0 else "other", question.key, decimals=2, metric_scale=0.01)
        for question in EXAMPLE_QUESTIONS
        for index, (key, _) in enumerate(question.candidates)
    ),
    published=("burt_t7", "alburt_t5"),
    cells=example_cells,
    notes=tuple(
        f"{question.key} ({', '.join(question.tables)}): {question.a} : {question.b} :: {question.c} ? "
        + "; ".join(f"{'gold' if i == 0 else 'other'}: {text}" for i, (_, text) in enumerate(question.candidates))
        for question in EXAMPLE_QUESTIONS
    )
    + (
        (
            "Each cell is cos(b - a + c, d) of the candidate d over L2-normalised embeddings (the analogy's "
            "score), on the papers' 0-1 scale; gold is the candidate the papers print in bold."
        ),
    ),
)

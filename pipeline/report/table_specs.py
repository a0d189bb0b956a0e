"""The table registry: every table the ``tables`` stage writes, in the order it writes and lists them. The
workflow's ``tables`` rule (``workflow/rules/report.smk``) reads its outputs from here, each with its caption
``workflow/report/table_<name>.rst``, and the tests their lists: a new table is its spec in its family's
module, one entry here, its caption and its test. A table of ours alone names no published source
(``published=()``).

Each table is specified (:class:`~pipeline.report.spec.TableSpec`) in the module of its paper family:
analogy, similarity (BURT twin Tables 2 and 3), the twin ablation (Table 4), retrieval (GEOGRANNO, FAQ),
fine-tuning (GLUE, CLUE) and the BiLSTM encoders.
"""

from __future__ import annotations

from pipeline.report import ablation_table, analogy_tables, bilstm_tables, glue_tables, retrieval_tables
from pipeline.report import similarity_tables as similarity
from pipeline.report.spec import TableSpec

TABLES: tuple[TableSpec, ...] = (
    analogy_tables.ANALOGY,
    analogy_tables.PPR_PNR,
    analogy_tables.ANALOGY_EXAMPLES,
    similarity.STS,
    similarity.WORDSIM,
    retrieval_tables.GEOGRANNO,
    retrieval_tables.GEOGRANNO_BASELINES,
    retrieval_tables.GEOGRANNO_BY_LENGTH,
    retrieval_tables.FAQ,
    ablation_table.ABLATION,
    similarity.STS_SENTEVAL,
    *glue_tables.GLUE_TABLES,
    bilstm_tables.SNLI,
    bilstm_tables.TRANSFER,
)
TABLE_NAMES = tuple(spec.name for spec in TABLES)

"""The BiLSTM encoder tables of paper 004: SNLI accuracy (Table 2) and the SentEval transfer tasks (Table 3),
from the ``snli`` and ``transfer`` metrics files of the ``bilstm`` and ``evaluate transfer`` stages."""

from __future__ import annotations

from pipeline.report.metrics_files import MetricsFile
from pipeline.report.spec import Cells, Column, Joined, TableSpec

# Paper 004 Table 3 columns, then the tasks the harness adds (MRPC, STS-B) and the dev averages: column key ->
# the key of a transfer metrics file.
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


def transfer_cells(metrics: MetricsFile) -> Cells:
    """Paper 004 Table 3 from a transfer metrics JSON (tasks a run left out stay empty)."""
    data = metrics.data
    cells = {key: metrics.number(name) if name in data else None for key, name in TRANSFER_SCORES.items()}
    tasks = metrics.require("tasks")
    cells["mrpc_f1"] = metrics.number("tasks", "MRPC", "f1") if "MRPC" in tasks else None
    for measure in ("pearson", "spearman"):
        cells[f"sts14_{measure}"] = metrics.number("tasks", "STS14", measure) if "STS14" in tasks else None
    return [(None, cells)]


SNLI = TableSpec(
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
)

TRANSFER = TableSpec(
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
)

"""The claims judge their quotes as far as the quotes reach (docs/stages/report.md "The scoreboard", "Claims as
the papers scope them"): every comparison a quote names is judged by a claim with that quote, on the columns it
names, or named in the note (``beyond``) of the claims that quote it, and a comparison judged on the paper's rows
is one the paper config's plan has runs for."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.scoreboard import scoreboard

CONFIGS = Path(__file__).parents[2] / "workflow" / "config"
CLUE_TASKS = ("tnews", "iflytek", "cluewsc", "afqmc", "csl", "ocnli")

# A quote (a fragment of it), the published table it is read from, the pairs of rows it names (higher, lower)
# and the columns it names, and the paper config whose plan runs both rows of every pair.
NAMED = [
    # ULR-BERT §6.2, Table 3: "Our model improves the BERT_BASE and BERT_LARGE by 1.1% and 0.7% on average"
    (
        "improves the BERT_BASE and BERT_LARGE by 1.1% and 0.7%",
        "ulr_t3",
        [("ULR-BERT_BASE", "BERT_BASE"), ("ULR-BERT_LARGE", "BERT_LARGE")],
        ("avg",),
        "paper-en",
    ),
    # ULR-BERT §6.2, Table 3: "exceeds MLM-BERT_BASE and MLM-BERT_LARGE by 0.9% and 0.7% on average"
    (
        "exceeds MLM-BERT_BASE and MLM-BERT_LARGE by 0.9% and 0.7%",
        "ulr_t3",
        [("ULR-BERT_BASE", "MLM-BERT_BASE"), ("ULR-BERT_LARGE", "MLM-BERT_LARGE")],
        ("avg",),
        "paper-en",
    ),
    # ULR-BERT §6.3, Table 4: the base and the large model, over BERT and over MLM-BERT, on Top-1
    (
        "exceeds BERT by 10.1% and 19.2% Top-1 accuracy",
        "ulr_t4",
        [("ULR-BERT_BASE", "BERT_BASE"), ("ULR-BERT_LARGE", "BERT_LARGE")],
        ("top1",),
        "paper-en",
    ),
    (
        "obtains 2.7% and 10.6% improvements compared with MLM-BERT",
        "ulr_t4",
        [("ULR-BERT_BASE", "MLM-BERT_BASE"), ("ULR-BERT_LARGE", "MLM-BERT_LARGE")],
        ("top1",),
        "paper-en",
    ),
    # BURT §6.1, Table V: "both BURT and BURT-wwm-ext outperform the baseline models on 4 out of 6 tasks": each
    # over the pre-trained model it starts from and over its MLM and Span baselines
    (
        "both BURT and BURT-wwm-ext outperform the baseline models on 4 out of 6 tasks",
        "burt_t5",
        [
            ("BURT", "BERT"),
            ("BURT", "MLM [BERT]"),
            ("BURT", "Span [BERT]"),
            ("BURT-wwm-ext", "BERT-wwm-ext"),
            ("BURT-wwm-ext", "MLM [BERT-wwm-ext]"),
            ("BURT-wwm-ext", "Span [BERT-wwm-ext]"),
        ],
        CLUE_TASKS,
        "paper-zh",
    ),
    # BURT §6.3, Table X: "our BURT yields the highest accuracy (82.2%) and MRR (0.872)"
    (
        "our BURT yields the highest accuracy (82.2%) and MRR (0.872)",
        "burt_t10",
        [("BURT", "BERT"), ("BURT", "MLM [BERT]"), ("BURT", "Span [BERT]")],
        ("acc", "mrr"),
        "paper-zh",
    ),
]
# The rest of a quote no claim judges, named in the notes of the claims that quote it (each has a note, which
# may point to another's: "as burt-faq-over-mlm says")
NOTED = {
    # Table X's statistical baselines and LASER have no run; the BERT-wwm-ext rows start from another checkpoint
    "our BURT yields the highest accuracy (82.2%) and MRR (0.872)": ("TF-IDF", "BM25", "LASER", "BERT-wwm-ext"),
}


def quoting(fragment: str) -> list[dict]:
    claims = [claim for claim in scoreboard.load_claims() if fragment in claim["quote"]]
    assert claims, f"no claim quotes {fragment!r}"
    return claims


def judging(claims: list[dict], source: str, high: str, low: str) -> list[dict]:
    return [
        claim
        for claim in claims
        if (claim["higher"]["paper"]["source"], claim["higher"]["paper"]["row"]) == (source, high)
        and (claim["lower"]["paper"]["source"], claim["lower"]["paper"]["row"]) == (source, low)
    ]


@pytest.mark.parametrize(("fragment", "source", "pairs", "columns", "config"), NAMED, ids=[n[0][:40] for n in NAMED])
def test_every_named_comparison_of_a_quote_is_judged_on_its_columns(fragment, source, pairs, columns, config):
    claims = quoting(fragment)
    for high, low in pairs:
        found = judging(claims, source, high, low)
        assert found, f"{fragment!r}: {high} over {low} is judged by no claim"
        (claim,) = found
        assert set(columns) <= set(claim["columns"]), f"{claim['id']} leaves out {set(columns) - set(claim['columns'])}"
        if source == "burt_t5":
            assert claim["at_least"] == 4  # "on 4 out of 6 tasks"


@pytest.mark.parametrize(("fragment", "names"), NOTED.items(), ids=list(NOTED))
def test_what_no_claim_judges_is_named_in_the_note(fragment, names):
    claims = quoting(fragment)
    assert all(claim["beyond"] for claim in claims), [claim["id"] for claim in claims if not claim["beyond"]]
    notes = " ".join(claim["beyond"] for claim in claims)
    assert not [name for name in names if name not in notes]


@pytest.mark.parametrize("config_name", ["paper-en", "paper-zh"])
def test_the_paper_config_runs_both_sides_of_every_named_pair(config_name):
    """The pairs above are judged on the paper's own rows: the paper config's plan maps both rows of each to a
    run, so the verdicts are comparable with the paper's."""
    from pipeline.workflow_config import resolve_config

    mapped = scoreboard.plan_labels(scoreboard.plan_rows(resolve_config(CONFIGS / f"{config_name}.yaml")))
    for fragment, source, pairs, _, config in NAMED:
        if config != config_name:
            continue
        for high, low in pairs:
            (claim,) = judging(quoting(fragment), source, high, low)
            refs = [
                tuple(claim[side]["paper"][key] for key in ("source", "row", "nth")) for side in ("higher", "lower")
            ]
            assert all(ref in mapped for ref in refs), f"{claim['id']}: {config_name}'s plan runs no {refs}"
            # the run templates find the same pair among the config's runs (a config whose rows are not mapped)
            runs = (mapped[refs[0]], mapped[refs[1]])
            assert scoreboard.role_pairs(claim, set(runs)) == [runs], claim["id"]

"""The reproduction scoreboard (pipeline/scoreboard/scoreboard.py): claims judged from a run's tables."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pipeline.scoreboard import scoreboard

FIXTURES = Path(__file__).parents[1] / "report" / "fixtures"
CONFIGS = Path(__file__).parents[2] / "workflow" / "config"


def renamed_metrics(tmp_path: Path, fixture: str, name: str, scale: float) -> Path:
    """A real metrics fixture under another model name, every number of its levels scaled."""
    data = json.loads((FIXTURES / f"{fixture}.json").read_text())
    data["model"]["name"] = name

    def scaled(value):
        if isinstance(value, dict):
            return {k: scaled(v) for k, v in value.items()}
        return value * scale if isinstance(value, float) else value

    for key in ("levels", "overall"):
        data[key] = scaled(data[key])
    path = tmp_path / f"{fixture}-{name}.json"
    path.write_text(json.dumps(data))
    return path


def glue_summary(tmp_path: Path, name: str, cola: list[float]) -> Path:
    """A classify-summary for GLUE CoLA (several seeds), as the stage writes it."""
    mean = sum(cola) / len(cola)
    std = math.sqrt(sum((x - mean) ** 2 for x in cola) / (len(cola) - 1))
    record = {
        "task": "glue",
        "model": {"name": name, "path": f"models/{name}", "kind": "classifier", "pooling": None},
        "tasks": {
            "cola": {
                "metric": "mcc",
                "batch_size": 32,
                "seeds": list(range(len(cola))),
                "search": {"batch32": mean},
                "dev": {"mcc": {"mean": mean, "std": std, "max": max(cola), "min": min(cola)}},
            }
        },
        "avg": {"mean": mean, "columns": ["cola"]},
        "geogranno": None,
        "provenance": {"stage": "classify-summary", "seed": list(range(len(cola)))},
    }
    path = tmp_path / f"glue-{name}.json"
    path.write_text(json.dumps(record))
    return path


@pytest.fixture
def board(cli, tmp_path):
    """Run tables then the scoreboard on metrics files; returns the scoreboard JSON."""

    def make(metrics: list[Path], config: dict) -> dict:
        assert cli("tables", "--metrics", *metrics, "--out", tmp_path / "tables") == 0
        out = tmp_path / "board"
        config_file = tmp_path / "config.json"
        config_file.write_text(json.dumps(config))
        status = cli("scoreboard", "--tables", tmp_path / "tables/tables.json", "--config", config_file, "--out", out)
        assert status == 0
        assert (out / "scoreboard.md").is_file() and (out / "scoreboard.html").is_file()
        return json.loads((out / "scoreboard.json").read_text())

    return make


def demo_config() -> dict:
    import yaml

    from pipeline.workflow_config import resolve_config

    config = resolve_config(CONFIGS / "demo.yaml")
    return json.loads(json.dumps(config, default=str)) | {
        "run": yaml.safe_load((CONFIGS / "demo.yaml").read_text())["run"]
    }


def claim(board: dict, claim_id: str) -> dict:
    return next(c for c in board["claims"] if c["id"] == claim_id)


def test_every_claim_is_listed_with_a_verdict_and_at_least_twenty(board, tmp_path):
    result = board([renamed_metrics(tmp_path, "analogy_minilm", "tiny", 1.0)], demo_config())
    claims = scoreboard.load_claims()
    assert len(claims) >= 20 and len({c["paper"] for c in claims}) == 5
    assert [c["id"] for c in result["claims"]] == [c["id"] for c in claims]
    assert all(c["verdict"] in scoreboard.VERDICTS for c in result["claims"])
    assert sum(result["claim_counts"].values()) == len(claims)


def test_a_role_pair_without_a_test_is_untested_not_judged_by_its_sign(board, tmp_path):
    """tiny+burt scores 20% above tiny on word analogies, one number each and no word pairs in the metrics to
    resample: untested, counted apart from holds / reversed (the sign tells no effect from noise), and marked
    not comparable (models that are not the paper's)."""
    metrics = [
        renamed_metrics(tmp_path, "analogy_minilm", "tiny", 1.0),
        renamed_metrics(tmp_path, "analogy_minilm", "tiny+burt", 1.2),
        renamed_metrics(tmp_path, "analogy_minilm", "tiny+mlm", 1.5),
    ]
    result = board(metrics, demo_config())
    over_bert = claim(result, "burt-analogy-word-over-bert")
    assert over_bert["verdict"] == "untested" and over_bert["comparable"] is False
    (pair,) = over_bert["pairs"]
    assert (pair["higher"]["label"], pair["lower"]["label"]) == ("tiny+burt", "tiny")
    assert pair["higher"]["n"] == 1 and pair["test"].startswith("none: n = 1")
    assert "no per-item outcomes" in pair["test"] and pair["p"] is None
    assert pair["difference"] == pytest.approx(0.2 * pair["lower"]["mean"])
    assert claim(result, "burt-analogy-over-mlm")["verdict"] == "untested"  # mlm scaled higher: still no test
    assert result["claim_counts"]["holds"] == result["claim_counts"]["reversed"] == 0
    assert result["claim_counts"]["untested"] == 2
    assert claim(result, "ulr-analogy-average")["verdict"] == "not run"  # no tiny+misad
    # the paper's own difference comes from published.yaml: BURT-base 72.8 vs BERT-base 55.8 word accuracy
    assert over_bert["paper_difference"] == pytest.approx(72.8 - 55.8)
    text = (tmp_path / "board/scoreboard.md").read_text()
    assert "not comparable at this scale" in text and "burt-analogy-word-over-bert" in text


def test_seeds_give_welch_test_and_the_smallest_detectable_difference(board, tmp_path):
    high, low = [60.0, 62.0, 61.0, 63.0, 59.0], [55.0, 58.0, 54.0, 57.0, 56.0]
    metrics = [glue_summary(tmp_path, "tiny+misad", high), glue_summary(tmp_path, "tiny+mlm", low)]
    result = board(metrics, demo_config())
    (pair,) = claim(result, "ulr-glue-cola")["pairs"]
    assert pair["higher"]["n"] == 5 and pair["lower"]["n"] == 5
    # a direct transcription of Welch's test on the seeds themselves
    direct = stats.ttest_ind(high, low, equal_var=False, alternative="greater")
    assert pair["p"] == pytest.approx(direct.pvalue, rel=1e-6)
    assert pair["verdict"] == "holds" and pair["p"] < 0.025
    se = math.sqrt(stats.tstd(high) ** 2 / 5 + stats.tstd(low) ** 2 / 5)
    df = se**4 / ((stats.tstd(high) ** 2 / 5) ** 2 / 4 + (stats.tstd(low) ** 2 / 5) ** 2 / 4)
    assert pair["detectable"] == pytest.approx((stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) * se, rel=1e-6)


def test_a_difference_inside_seed_noise_is_inconclusive(board, tmp_path):
    metrics = [
        glue_summary(tmp_path, "tiny+misad", [60.0, 50.0, 61.0]),
        glue_summary(tmp_path, "tiny+mlm", [58.0, 57.0, 55.0]),
    ]
    (pair,) = claim(board(metrics, demo_config()), "ulr-glue-cola")["pairs"]
    assert pair["difference"] > 0 and pair["p"] > 0.025 and pair["verdict"] == "inconclusive"


def test_plan_mapped_rows_are_compared_with_the_published_numbers(tmp_path):
    """Where the plan maps a published row to a run, the run's number stands beside the paper's."""
    plan_records = [
        {"source": "burt_t8", "row": "BURT-base", "status": "planned", "label": "bert-base-uncased+burt.packed"},
        {"source": "burt_t8", "row": "BERT-base", "status": "planned", "label": "bert-base-uncased"},
    ]

    def row(label, word_avg):
        cells = {"word_avg": word_avg, "avg": word_avg}
        return {"label": label, "pooling": "mean", "facet": None, "cells": cells, "source": {"seed": 0}}

    tables = {"analogy": {"rows": [row("bert-base-uncased+burt.packed", 70.0), row("bert-base-uncased", 56.0)]}}
    result = scoreboard.build(tables, {"run": "x"}, scoreboard.load_claims(), plan_records)
    over_bert = claim(result, "burt-analogy-word-over-bert")
    assert over_bert["comparable"] is True and over_bert["verdict"] == "untested"  # one number each
    numbers = {(n["row"], n["column"]): n for n in result["published_numbers"]}
    assert numbers[("BURT-base", "word_avg")]["paper"] == 72.8
    assert numbers[("BURT-base", "word_avg")]["delta"] == pytest.approx(70.0 - 72.8)
    assert numbers[("BURT-base", "word_avg")]["within_seed_spread"] is None  # n = 1 cannot tell
    assert numbers[("BURT-base", "phrase_avg")]["status"] == "not run"  # our row has no phrase cell
    assert result["published_counts"]["mapped_rows"] == 2


def test_paper_config_plan_maps_claims_to_its_runs():
    """On paper-en, the plan maps both sides of the headline ULR claim: the verdict would be comparable."""
    from pipeline.workflow_config import resolve_config

    config = resolve_config(CONFIGS / "paper-en.yaml")
    mapped = scoreboard.plan_labels(scoreboard.plan_rows(config))
    assert mapped[("ulr_t2", "ULR-BERT_LARGE", 1)] == "bert-large-uncased+misad"
    assert mapped[("ulr_t2", "BERT_LARGE", 1)] == "bert-large-uncased"


# --------------------------------------------------------------- verdicts, scopes and what a run has
def row(label: str, cells: dict, seeds: int = 1, pooling: str | None = None, facet: str | None = None) -> dict:
    return {"label": label, "pooling": pooling, "facet": facet, "cells": cells, "source": {"seed": list(range(seeds))}}


def spread(cells: dict, std: float = 1.0) -> dict:
    """Cells with a seed spread: each number's std beside it."""
    return cells | {f"{key}_std": std for key, value in cells.items() if value is not None}


def judged(tables: dict, config: dict | None = None) -> dict:
    return scoreboard.build(tables, config or {"run": "x"}, scoreboard.load_claims(), plan_records=[])


def seed_spread(values: list[float]) -> tuple[float, float]:
    return stats.tmean(values), stats.tstd(values)


def glue_tasks_summary(tmp_path: Path, name: str, scores: dict[str, list[float]]) -> Path:
    """A classify-summary over several GLUE tasks, one score per seed, with the average of each seed and their
    spread as the stage computes them (classify_summary.seed_average)."""
    from pipeline.classify.classify_summary import seed_average

    tasks = {}
    for task, values in scores.items():
        mean, std = seed_spread(values)
        tasks[task] = {
            "metric": "acc",
            "batch_size": 32,
            "seeds": list(range(len(values))),
            "per_seed": {str(seed): {"dev": score} for seed, score in enumerate(values)},
            "dev": {"acc": {"mean": mean, "std": std, "max": max(values), "min": min(values)}},
        }
    seeds = sorted({seed for result in tasks.values() for seed in result["seeds"]})
    record = {
        "task": "glue",
        "model": {"name": name, "path": f"models/{name}", "kind": "classifier", "pooling": None},
        "tasks": tasks,
        "avg": seed_average(tasks),
        "geogranno": None,
        "provenance": {"stage": "classify-summary", "seed": seeds},
    }
    path = tmp_path / f"glue-{name}.json"
    path.write_text(json.dumps(record))
    return path


def test_glue_averages_carry_their_seed_spread_into_welch_test(board, tmp_path):
    """classify-summary writes each seed's average over the tasks (avg.per_seed, avg.std): the GLUE average
    claims are tested across seeds, not by the sign."""
    high = glue_tasks_summary(
        tmp_path, "tiny+misad", {"cola": [60.0, 62.0, 61.0, 63.0, 59.0], "rte": [70.0, 71.0, 69.0, 72.0, 70.0]}
    )
    low = glue_tasks_summary(
        tmp_path, "tiny+mlm", {"cola": [55.0, 58.0, 54.0, 57.0, 56.0], "rte": [66.0, 67.0, 65.0, 66.0, 68.0]}
    )
    result = board([high, low], demo_config())
    over_mlm = claim(result, "ulr-glue-over-mlm")
    (pair,) = over_mlm["pairs"]
    averages = {
        side: [(c + r) / 2 for c, r in zip(cola, rte)]
        for side, cola, rte in (
            ("high", [60.0, 62.0, 61.0, 63.0, 59.0], [70.0, 71.0, 69.0, 72.0, 70.0]),
            ("low", [55.0, 58.0, 54.0, 57.0, 56.0], [66.0, 67.0, 65.0, 66.0, 68.0]),
        )
    }
    direct = stats.ttest_ind(averages["high"], averages["low"], equal_var=False, alternative="greater")
    assert pair["higher"]["std"] == pytest.approx(stats.tstd(averages["high"]))
    assert pair["p"] == pytest.approx(direct.pvalue, rel=1e-6) and pair["test"].startswith("Welch")
    assert over_mlm["verdict"] == "holds" and "fine-tuning seeds of one pre-training run" in over_mlm["seeds"]
    assert "fine-tuning seeds of one pre-training run" in (tmp_path / "board/scoreboard.md").read_text()


def test_a_difference_beyond_seed_noise_the_other_way_is_reversed():
    cola = lambda label, mean: row(label, {"cola": mean, "cola_std": 1.0}, seeds=5)
    result = judged({"glue": {"rows": [cola("tiny+misad", 50.0), cola("tiny+mlm", 56.0)]}})
    (pair,) = claim(result, "ulr-glue-cola")["pairs"]
    assert pair["verdict"] == "reversed" and pair["p_reversed"] < 0.025 < pair["p"]
    assert result["claim_counts"]["reversed"] >= 1


def test_four_out_of_six_tasks_counts_the_tasks():
    """BURT §6.1: "outperform the baseline models on 4 out of 6 tasks" holds where BURT wins 4 of the six
    classification tasks, whatever the average says."""
    tasks = ["tnews", "iflytek", "cluewsc", "afqmc", "csl", "ocnli"]
    burt = dict(zip(tasks, [60.0, 60.0, 60.0, 60.0, 40.0, 40.0])) | {"avg": 53.3}
    span = dict(zip(tasks, [50.0, 50.0, 50.0, 50.0, 70.0, 70.0])) | {"avg": 56.7}
    mlm = dict(zip(tasks, [50.0, 50.0, 70.0, 70.0, 70.0, 70.0])) | {"avg": 63.3}
    rows = [row("tiny+burt", spread(burt), 5), row("tiny+spanbert", spread(span), 5), row("tiny+mlm", spread(mlm), 5)]
    result = judged({"clue": {"rows": rows}})
    over_span, over_mlm = claim(result, "burt-clue-over-span"), claim(result, "burt-clue-over-mlm")
    assert over_span["verdict"] == "holds" and over_span["pairs"][0]["columns_holding"] == "4 of 6"
    assert over_mlm["verdict"] == "reversed"  # 4 of 6 reversed: 4 can no longer hold
    assert over_span["paper_columns_higher"] == "5 of 6"  # Table V: BURT below Span on AFQMC only


def test_all_transfer_tasks_means_all_of_them():
    columns = ["mr", "cr", "subj", "mpqa", "sst", "trec", "sickr", "sicke", "sts14_pearson", "sts14_spearman"]
    bf = spread({c: 80.0 for c in columns}, 0.5)
    bilstm_max = spread({c: 78.0 for c in columns} | {"trec": 80.0}, 0.5)
    rows = [row("bilstm-bf-combined-600", bf, 5), row("bilstm-max-600", bilstm_max, 5)]
    over_max = claim(judged({"transfer": {"rows": rows}}), "bf-transfer-over-max")
    assert over_max["at_least"] == 10 and over_max["verdict"] == "inconclusive"  # a tie on TREC
    assert over_max["pairs"][0]["columns_holding"] == "9 of 10"
    assert over_max["paper_columns_higher"] == "9 of 10"  # the paper's own TREC cells tie


def test_twin_ablation_claims_are_judged_on_the_word_sets_a_run_has():
    words = lambda v: {"simlex": v, "ws_sim": v, "ws_rel": v, "men": v, "scws": None, "avg": None}
    rows = [
        row("tiny+twin.mean", words(60.0), pooling="mean", facet="Pooling: MEAN"),
        row("tiny+twin.cls", words(50.0), pooling="cls", facet="Pooling: CLS"),
    ]
    mean_pooling = claim(judged({"ablation": {"rows": rows}}), "twin-mean-pooling")
    assert mean_pooling["verdict"] == "untested"  # one number each, no per-pair scores to resample
    assert mean_pooling["judged_on"]["columns"] == ["simlex", "ws_sim", "ws_rel", "men"]
    assert "SCWS" in mean_pooling["judged_on"]["why"]
    # the paper's difference on the same four sets: BURT MEAN against BURT CLS in Table 4
    paper = (60.8 + 71.5 + 55.7 + 68.5) / 4 - (48.0 + 63.5 + 42.8 + 62.7) / 4
    assert mean_pooling["judged_on"]["paper_difference"] == pytest.approx(paper)


def test_misprinted_paper_cells_are_corrected_and_table_derived_claims_say_so():
    result = judged({})
    # twin Table 2 prints 40.9 for BERT_MEAN's Avg.; its seven scores average 60.6 (published.yaml)
    assert claim(result, "twin-sts-over-bert")["paper_difference"] == pytest.approx(76.8 - 60.6)
    assert claim(result, "twin-multitask-over-nli")["paper_difference"] == pytest.approx(63.7 - 43.1)
    assert "compared with BERT" in claim(result, "burt-analogy-over-span")["derived"]
    assert claim(result, "burt-analogy-word-over-bert")["derived"] is None
    assert claim(result, "bf-snli-over-max")["where"].startswith("§1")


def test_a_rehearsal_judges_nothing(tmp_path):
    rows = [row("tiny", spread({"word_avg": 50.0, "avg": 50.0}), 5), row("tiny+burt", spread({"word_avg": 60.0}), 5)]
    result = judged({"analogy": {"rows": rows}}, {"run": "paper-zh-rehearsal"})
    assert result["rehearsal"] is True and {c["verdict"] for c in result["claims"]} == {"not judged"}
    assert result["claim_counts"]["not judged"] == len(result["claims"]) and result["published_numbers"] == []
    from pipeline.scoreboard import scoreboard_render

    assert "its models are stand-ins" in scoreboard_render.markdown(result)
    # the same tables in a run that is not a rehearsal are judged
    assert claim(judged({"analogy": {"rows": rows}}), "burt-analogy-word-over-bert")["verdict"] == "holds"


# ----------------------------------------------------------------- deterministic evaluations, by item
def geogranno_metrics(tmp_path: Path, name: str, ranks: list[int]) -> Path:
    """The GEOGRANNO fixture under another name, its ``all`` split re-scored from per-query gold ranks."""
    from pipeline.tasks.retrieval import summary

    data = json.loads((FIXTURES / "geogranno_minilm.json").read_text())
    data["model"]["name"] = name
    data["splits"]["all"] = summary(np.asarray(ranks), np.zeros(len(ranks), dtype=bool), ids=range(len(ranks)))
    path = tmp_path / f"geogranno-{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_geogranno_is_judged_by_a_paired_bootstrap_over_its_queries(board, tmp_path):
    """One number per model, but 541 queries each: a paired bootstrap tells an effect from one query's luck,
    which the sign at the table's 0.1 cannot (1 query in 541 is 0.18 points)."""
    rng = np.random.default_rng(1)
    base = list(rng.integers(1, 20, size=541))
    better = [1 if i % 3 == 0 else r for i, r in enumerate(base)]  # a third of the queries found first
    one_less = [2] + better[1:]  # better[0] is 1 (query 0 is one of the third): one query found second
    for name, ranks in (("tiny", base), ("tiny+misad", better), ("tiny+mlm", one_less)):
        geogranno_metrics(tmp_path, name, ranks)
    metrics = sorted(tmp_path.glob("geogranno-*.json"))
    result = board(metrics, demo_config())
    (over_bert,) = claim(result, "ulr-geogranno-over-bert")["pairs"]
    assert over_bert["verdict"] == "holds" and over_bert["test"].startswith("paired bootstrap over items (541 items")
    assert over_bert["p"] < 0.025 and over_bert["interval"][0] > 0
    (over_mlm,) = claim(result, "ulr-geogranno-over-mlm")["pairs"]
    one_query = abs(over_mlm["difference"])
    assert one_query == pytest.approx(100 / 541) and one_query > 0.1  # the sign rule would have judged it
    assert over_mlm["verdict"] == "inconclusive" and over_mlm["p"] > 0.025 and over_mlm["p_reversed"] > 0.025
    again = board(metrics, demo_config())  # a fixed seed: the same input, the same p
    assert claim(again, "ulr-geogranno-over-mlm")["pairs"][0]["p"] == over_mlm["p"]


def test_the_bootstrap_pairs_queries_and_refuses_rows_of_other_queries():
    from pipeline.scoreboard import scoreboard_items

    high = [np.array([1.0, 1, 1, 0, 1, 1, 1, 1])]  # per-item scores: hits
    low = [np.array([0.0, 0, 0, 1, 0, 0, 0, 0])]
    test = scoreboard_items.paired_bootstrap(high, low)
    assert test["p"] < 0.025 < test["p_reversed"]
    assert scoreboard_items.paired_bootstrap(high, [np.array([1, 2])]) is None  # not the same queries
    assert scoreboard_items.paired_bootstrap(high, high + low) is None


def test_a_metrics_path_that_is_no_file_is_untested_without_reading_it(tmp_path):
    """tables.json names each row's metrics file; a device or a FIFO there is not read (it would never end)."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    rows = [
        row("tiny", {"top1": 40.0}, facet="all") | {"source": {"seed": 0, "metrics_file": "/dev/zero"}},
        row("tiny+misad", {"top1": 50.0}, facet="all") | {"source": {"seed": 0, "metrics_file": str(fifo)}},
    ]
    (pair,) = claim(judged({"geogranno": {"rows": rows}}), "ulr-geogranno-over-bert")["pairs"]
    assert pair["verdict"] == "untested" and pair["test"].startswith("none: n = 1")


def test_table_8_glue_dev_average_is_judged_across_its_seeds(board, tmp_path):
    """ULR-BERT Table 8 (§7.3) prints each base model's GEOGRANNO beside its GLUE dev average: the
    geogranno_baselines row carries the GLUE average, its spread over the seeds' averages and those seeds,
    so "enhance the performance of all three pre-trained models" is tested by Welch's test on GLUE dev (five
    seeds a side): ALBERT's gain is beyond seed noise (holds), ELECTRA's within it (inconclusive)."""
    rng = np.random.default_rng(8)
    start = list(rng.integers(1, 20, size=541))
    better = [1 if i % 3 == 0 else rank for i, rank in enumerate(start)]  # a third of the queries found first
    glue = {
        "albert-base-v2": {"cola": [55.0, 58.0, 54.0, 57.0, 56.0], "rte": [66.0, 67.0, 65.0, 66.0, 68.0]},
        "albert-base-v2+misad": {"cola": [60.0, 62.0, 61.0, 63.0, 59.0], "rte": [70.0, 71.0, 69.0, 72.0, 70.0]},
        "electra-base-discriminator": {"cola": [60.0, 50.0, 61.0, 55.0, 58.0], "rte": [70.0, 64.0, 69.0, 66.0, 71.0]},
        "electra-base-discriminator+misad": {
            "cola": [58.0, 57.0, 55.0, 62.0, 59.0],
            "rte": [68.0, 70.0, 66.0, 69.0, 67.0],
        },
    }
    metrics = []
    for name, scores in glue.items():
        metrics.append(geogranno_metrics(tmp_path, name, better if name.endswith("+misad") else start))
        metrics.append(glue_tasks_summary(tmp_path, name, scores))
    result = board(metrics, demo_config())
    averages = {name: [(c + r) / 2 for c, r in zip(s["cola"], s["rte"])] for name, s in glue.items()}
    for claim_id, backbone, expected in (
        ("ulr-albert-geogranno", "albert-base-v2", "holds"),
        ("ulr-electra-geogranno", "electra-base-discriminator", "inconclusive"),
    ):
        judged_claim = claim(result, claim_id)
        (pair,) = judged_claim["pairs"]
        (glue_dev,) = [column for column in pair["columns"] if column["column"] == "glue_dev"]
        assert glue_dev["higher"]["n"] == glue_dev["lower"]["n"] == 5 and glue_dev["test"].startswith("Welch")
        assert glue_dev["higher"]["std"] == pytest.approx(stats.tstd(averages[f"{backbone}+misad"]))
        direct = stats.ttest_ind(
            averages[f"{backbone}+misad"], averages[backbone], equal_var=False, alternative="greater"
        )
        assert glue_dev["p"] == pytest.approx(direct.pvalue, rel=1e-6)
        assert glue_dev["verdict"] == expected and judged_claim["verdict"] == expected
        # GEOGRANNO, evaluated once, keeps its own single run: tested over its queries, not over GLUE's seeds
        (top1,) = [column for column in pair["columns"] if column["column"] == "top1"]
        assert top1["higher"]["n"] == 1 and top1["test"].startswith("paired bootstrap") and top1["verdict"] == "holds"

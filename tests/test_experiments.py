"""Pre-training experiments and fine-tuning starts: each paper's rows with that paper's settings (pipeline/experiments.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from testdata import dry_run_jobs

from pipeline.experiments import finetune_recipes, runs
from pipeline.plan.plan import Planner
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[1]
SECTION = {"backbones": ["bert"], "max_length": 128, "batch_size": 64, "lr": 5e-5, "epochs": 1, "input": "sentences"}


def test_without_experiments_the_section_is_the_one_experiment():
    found = runs({**SECTION, "objectives": ["mlm", "burt"]})
    assert list(found) == ["bert+mlm", "bert+burt"]
    assert found["bert+burt"].settings["batch_size"] == 64 and found["bert+burt"].experiment == ""


def test_experiments_override_the_section_and_label_their_runs():
    experiments = {
        "ulr": {"objectives": ["mlm", "misad"]},
        "burt": {
            "objectives": ["mlm", "burt"],
            "suffix": ".packed",
            "input": "packed",
            "max_length": 512,
            "batch_size": 16,
        },
    }
    found = runs({**SECTION, "objectives": [], "experiments": experiments})
    assert list(found) == ["bert+mlm", "bert+misad", "bert+mlm.packed", "bert+burt.packed"]
    packed = found["bert+mlm.packed"]
    assert (packed.objective, packed.experiment) == ("mlm", "burt")
    assert {k: packed.settings[k] for k in ("input", "max_length", "batch_size", "lr")} == {
        "input": "packed",
        "max_length": 512,
        "batch_size": 16,
        "lr": 5e-5,  # from the section
    }
    assert found["bert+mlm"].settings["batch_size"] == 64


def test_an_experiment_may_train_its_own_backbones():
    """ULR-BERT Table 3's large rows need MLM and MiSAD from BERT-large, not every base baseline."""
    experiments = {
        "ulr": {"objectives": ["mlm", "misad", "nsp"]},
        "ulr-large": {"objectives": ["mlm", "misad"], "backbones": ["large"]},
    }
    found = runs({**SECTION, "objectives": [], "experiments": experiments})
    assert list(found) == ["bert+mlm", "bert+misad", "bert+nsp", "large+mlm", "large+misad"]
    assert (found["large+misad"].backbone, found["large+misad"].experiment) == ("large", "ulr-large")


@pytest.mark.parametrize(
    "experiments, message",
    [
        ({"a": {"objectives": ["mlm"]}, "b": {"objectives": ["mlm"]}}, "both make bert+mlm"),
        ({"a": {"objectives": ["misad"], "input": "packed", "max_length": 512}}, "packed input is for"),
        ({"a": {"objectives": ["mlm"], "max_length": 256}}, "cut at pretrain.max_length"),
    ],
)
def test_configs_that_cannot_run_are_refused(experiments, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        runs({**SECTION, "objectives": [], "experiments": experiments})


def test_an_experiment_sets_its_own_misad_loss_and_span_length():
    section = {**SECTION, "misad_loss": "equation", "span_max_words": 6, "misad_pooling": "pooler"}
    experiments = {
        "ulr": {"objectives": ["misad", "spanbert"]},
        "burt": {"objectives": ["spanbert"], "suffix": ".b", "span_max_words": 10, "misad_loss": "released"},
    }
    found = runs({**section, "objectives": [], "experiments": experiments})
    assert found["bert+misad"].settings["misad_loss"] == "equation"
    assert found["bert+spanbert"].settings["span_max_words"] == 6
    assert found["bert+spanbert.b"].settings["span_max_words"] == 10
    with pytest.raises(ValueError, match=r"pretrain.experiments.ulr.misad_loss: released .*misad_pooling: pooler"):
        runs(
            {
                **section,
                "misad_pooling": "mean",
                "objectives": [],
                "experiments": {"ulr": {**experiments["ulr"], "misad_loss": "released"}},
            }
        )
    # without a MiSAD objective the pooling does not matter
    runs({**section, "misad_pooling": "mean", "misad_loss": "released", "objectives": ["spanbert"]})


def test_objectives_and_experiments_together_are_refused():
    with pytest.raises(ValueError, match="both list objectives"):
        runs({**SECTION, "objectives": ["mlm"], "experiments": {"a": {"objectives": ["burt"]}}})


def test_paper_en_trains_each_papers_rows_with_its_settings(tmp_path):
    """ULR-BERT §4 (single sentences, 128, batch 64) and BURT §5.2 (packed, 512, batch 16)."""
    result, _ = dry_run_jobs(REPO / "workflow/config/paper-en.yaml", tmp_path / "data", print_commands=True)
    assert result.returncode == 0, result.stdout + result.stderr
    commands = {
        re.search(r"--out (\S+)", line).group(1).rsplit("/", 1)[1]: line
        for line in result.stdout.splitlines()
        if "-m pipeline pretrain " in line
    }
    ulr = ["mlm", "misad", "misad-span", "misad-entity", "nsp", "sop"]
    burt = ["mlm.packed", "spanbert.packed", "burt.packed"]
    large = ["mlm", "misad", *burt]  # ULR-BERT Table 3 and BURT Tables VI / VIII's large rows
    expected = [f"bert-base-uncased+{name}" for name in ulr + burt] + [f"bert-large-uncased+{name}" for name in large]
    # and ULR-BERT Table 2's ALBERT and ELECTRA rows (Table 8's ULR-ELECTRA too)
    table_2 = ["albert-base-v2+misad", "albert-xxlarge-v2+misad"]
    table_2 += ["electra-base-discriminator+misad", "electra-large-discriminator+misad"]
    assert sorted(commands) == sorted(expected + table_2)
    for label in table_2[2:]:  # ELECTRA trains with its released generator (pipeline/pretrain/electra.py)
        generator = label.split("-discriminator")[0] + "-generator@locked"
        assert f"--generator={tmp_path}/data/models/google/{generator}" in commands[label]
    assert (
        "--batch-size 64" in commands["albert-base-v2+misad"] and "--pooling pooler" in commands["albert-base-v2+misad"]
    )
    assert "--input packed --max-length 512" in commands["bert-large-uncased+burt.packed"]
    for name in ulr:
        line = commands[f"bert-base-uncased+{name}"]
        assert "--batch-size 64" in line and "--input" not in line
        # NSP / SOP read the pair sample (each sampled sentence with its next one, ULR-BERT §7.1)
        assert f"/tokens/ulr{'-pairs' if name in ('nsp', 'sop') else ''}/" in line
    for name in burt:
        line = commands[f"bert-base-uncased+{name}"]
        assert "--batch-size 16" in line and "--input packed --max-length 512" in line
        assert ("/tokens/burt/" in line) == (name == "burt.packed")
    # MiSAD as the authors' run_mse.py computes it; SpanBERT's 1-10 in BURT's Span rows (run_span.py), ULR-BERT
    # §7.2's 6 for its random-span MiSAD; neither flag where it means nothing
    for label, line in commands.items():
        misad = label.split("+")[1] in ("misad", "misad-span", "misad-entity")
        # ULR-ELECTRA: §3.2's equation (a discriminator has no masked-LM head for the released loss)
        loss = "equation" if label.startswith("electra-") else "released"
        assert (f"--misad-loss {loss}" in line) == misad and line.count("--misad-loss") == misad
        spans = {"spanbert.packed": "10", "misad-span": "6"}.get(label.split("+")[1])
        assert re.findall(r"--span-max-words (\S+)", line) == ([spans] if spans else [])
    # fine-tuning runs only what a published row uses (finetune.start_recipes), and MNRL from BERT-base,
    # the extension beyond the papers (docs/method.md §4)
    finetuned = {
        re.search(r"--out (\S+)", line).group(1).rsplit("/", 1)[1]
        for line in result.stdout.splitlines()
        if "-m pipeline finetune " in line
    }
    records = Planner(resolve_config(REPO / "workflow/config/paper-en.yaml"), "h100", 0.4).records()
    used = {
        label for record in records for target in record.get("targets", []) for label in finetuned if label in target
    }
    # and SBERT from BERT-base: the rows print the released SBERT, the claim compares SBURT with this one
    assert finetuned - used == {"bert-base-uncased+nli-mnrl", "bert-base-uncased+sbert-nli"}
    assert {"albert-base-v2+twin", "albert-xxlarge-v2+twin", "bert-large-uncased+burt.packed+sbert-nli"} <= used


def test_a_start_may_have_its_own_recipes():
    section = {"recipes": ["twin", "sbert-nli"], "start_recipes": {"albert": ["twin"]}}
    assert finetune_recipes(section, "albert") == ["twin"]
    assert finetune_recipes(section, "bert") == ["twin", "sbert-nli"]
    assert finetune_recipes({"recipes": ["twin"]}, "bert") == ["twin"]

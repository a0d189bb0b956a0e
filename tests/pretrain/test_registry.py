"""The objectives' registry (pipeline/objective_registry.py): one entry per objective, read by every stage
that names one; the config schema (YAML) lists the same names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from transformers import AutoTokenizer

from pipeline import experiments
from pipeline import objective_registry as registry
from pipeline.models import card
from pipeline.pretrain import packing
from pipeline.pretrain.masking import STRATEGIES, MaskingCollator
from pipeline.pretrain.misad import W_SOURCES, MisadCollator
from pipeline.pretrain.objectives import make_data
from pipeline.pretrain.sentence_pairs import PairCollator
from pipeline.pretrain.span_sampling import truncated_geometric
from pipeline.workflow_config import ConfigError, check, load_schema

SCHEMA = Path(__file__).resolve().parents[2] / "workflow/schemas/config.schema.yaml"


def test_the_schema_reads_the_registrys_objectives_and_lists_its_settings():
    """Issue 57: the objectives are named in the registry alone; both lists of the schema refer to one
    definition, whose names the workflow's schema (load_schema) takes from the registry."""
    written = yaml.safe_load(SCHEMA.read_text())
    pretrain = written["properties"]["pretrain"]["properties"]
    experiment = pretrain["experiments"]["additionalProperties"]["properties"]
    for where in (pretrain, experiment):
        assert where["objectives"]["items"] == {"$ref": "#/$defs/objective"}
    assert "enum" not in written["$defs"]["objective"]  # no second list to keep equal
    assert load_schema()["$defs"]["objective"]["enum"] == list(registry.OBJECTIVES)
    text = " ".join(pretrain["input"]["description"].split())
    assert "pipeline/objective_registry.py" in text and not any(f" {name}," in text for name in registry.PACKABLE)
    for where in (pretrain, experiment):
        assert where["misad_loss"]["enum"] == list(registry.MISAD_LOSSES)
        assert where["span_max_words"]["maximum"] == registry.MAX_SPAN_WORDS
    assert pretrain["span_max_words"]["default"] == registry.SPAN_MAX_WORDS
    assert set(experiment) - {"objectives", "suffix", "backbones"} == set(experiments.SETTING_KEYS)


@pytest.mark.parametrize("where", ["objectives", "experiments"])
def test_an_objective_not_in_the_registry_is_refused_naming_the_registrys(where):
    pretrain = {"objectives": ["mlmx"]} if where == "objectives" else {"experiments": {"e": {"objectives": ["mlmx"]}}}
    with pytest.raises(ConfigError) as error:
        check({"pretrain": pretrain}, load_schema())
    line = next(line for line in str(error.value).splitlines() if "mlmx" in line)
    assert line.strip().endswith(f"'mlmx' is not one of {', '.join(registry.OBJECTIVES)}"), line


def test_every_entry_names_a_collator_loss_and_masking_that_exist():
    for entry in registry.REGISTRY.values():
        assert entry.collator in registry.COLLATORS and entry.loss in registry.LOSSES
        assert entry.masking in STRATEGIES and entry.data in ("sentences", "pairs")
        assert (entry.collator == "misad") == (entry.loss == "misad") == (entry.misad_source in W_SOURCES)
        assert (entry.collator == "pairs") == (entry.loss == "pair") == (entry.data == "pairs")
        assert not entry.packable or entry.collator == "masking"  # only a plain token sequence is packed
        assert entry.card_text(10) and "{" not in entry.card_text(10)


def test_the_stages_read_the_registry():
    assert experiments.PACKABLE == packing.PACKED_OBJECTIVES == registry.names(packable=True)
    assert experiments.MISAD_OBJECTIVES == ("misad", "misad-span", "misad-entity")
    assert experiments.PAIR_OBJECTIVES == ("nsp", "sop")
    assert registry.SPAN_OBJECTIVES == ("spanbert", "misad-span")
    assert registry.NGRAM_OBJECTIVES == ("burt", "misad")
    with pytest.raises(ValueError, match="unknown objective 'mlmx'"):
        registry.lookup("mlmx")


def test_make_data_builds_each_entrys_collator(tiny_en, dataset_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    kinds = {"masking": MaskingCollator, "misad": MisadCollator, "pairs": PairCollator}
    for name, entry in registry.REGISTRY.items():
        if entry.data == "pairs":
            continue  # a pair sample (tokenize --with-next), built in test_pretrain_pairs
        _, collator = make_data(name, dataset_en, tokenizer, 0, 64, "random")
        collator = getattr(collator, "func", collator)
        assert isinstance(collator, kinds[entry.collator]), name
        masking = collator.masking if entry.collator == "misad" else collator
        assert masking.strategy == entry.masking, name


def test_the_card_describes_the_runs_own_settings():
    text = card.objective_text("spanbert", {"span_max_words": 10})
    assert text.endswith("1..10 words")
    assert card.objective_text("spanbert", {}).endswith("1..6 words")  # a run from before the setting
    assert "run_mse.py" in card.objective_text("misad", {"misad_loss": "released"})
    assert "run_mse.py" not in card.objective_text("misad", {"misad_loss": "equation"})
    assert "run_mse.py" not in card.objective_text("mlm", {"misad_loss": "released"})


def span_words(collator, rows) -> list[int]:
    """The words of each span the collator chooses (its units, before the 80/10/10 draw)."""
    lengths = []
    for row in rows:
        ids = np.asarray(row["input_ids"])
        units = collator.units(row, collator.eligible(ids), collator.rng_for(row))
        word_ids = np.asarray(row["word_ids"])
        lengths += [len(set(word_ids[start:end].tolist())) for start, end in units]
    return lengths


def test_span_max_words_bounds_spanberts_law(tiny_en, dataset_en):
    """BURT's Span rows: SpanBERT's 1-10 (run_span.py); ULR-BERT's keep §7.2's 6, the default."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    rows = [dataset_en[i] for i in range(len(dataset_en))]
    default = MaskingCollator(tokenizer, "span", seed=2)
    six = MaskingCollator(tokenizer, "span", seed=2, span_max_words=6)
    for row in rows[:50]:  # the default is 6, drawn exactly as before the setting
        assert all(np.array_equal(a, b) for a, b in zip(default.mask_example(row), six.mask_example(row)))
    shorter, longer = [], []
    for epoch in range(4):
        for lengths, words in ((shorter, 6), (longer, 10)):
            collator = MaskingCollator(tokenizer, "span", seed=2, span_max_words=words)
            collator.set_epoch(epoch)
            lengths += span_words(collator, rows)
    assert max(shorter) == 6 and 6 < max(longer) <= 10
    # longer spans where the sentences have room for them; lengths 1..6 keep the law's ratios (Geometric(0.2))
    assert np.mean(longer) > np.mean(shorter)
    counts = np.bincount(longer, minlength=11)[1:7].astype(float)
    law = truncated_geometric(0.2, 1, 10)[:6]
    assert np.abs(counts / counts.sum() - law / law.sum()).max() < 0.05


def test_misad_span_draws_w_up_to_span_max_words(tiny_en, dataset_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    rows = [dataset_en[i] for i in range(len(dataset_en))]
    lengths = []
    for epoch in range(3):
        collator = MisadCollator(tokenizer, "random", seed=3, w_source="span", span_max_words=10)
        collator.set_epoch(epoch)
        for row in rows:
            word_ids = np.asarray(row["word_ids"])
            for start, end in collator.candidates(row).tolist():
                lengths.append(len(set(word_ids[start:end].tolist())))
    assert 6 < max(lengths) <= 10


@pytest.mark.parametrize("value", ["0", "65", "six"])
def test_span_max_words_out_of_its_domain_is_refused(value, tmp_path, capsys):
    from pipeline.cli import main

    argv = ["pretrain", "--data", "x.parquet", "--model", "m", "--objective", "spanbert", "--out", str(tmp_path / "o")]
    assert main([*argv, "--span-max-words", value]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "--span-max-words" in err and len(err.splitlines()) == 1

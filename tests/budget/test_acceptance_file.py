"""The GPU acceptance run's file and the plan (issue 48 §1; pipeline/budget/acceptance_file.py): what
python -m pipeline gpu-acceptance writes is what the plan reads, a CPU run never feeds it, a bad file is one line, and
where the file exists the plan's floor, fused ratios, MFU per objective and memory follow it and its
assumption line says "measured on CARD, DATE"."""

from __future__ import annotations

import copy

import pytest
import yaml
from hostile import assert_clean_failure
from testdata import REPO

from pipeline.budget import acceptance_file, memory
from pipeline.budget.cost import ARCHITECTURES
from pipeline.errors import InputError
from pipeline.plan.plan import Planner
from pipeline.workflow_config import resolve_config

PAPER_EN = REPO / "workflow" / "config" / "paper-en.yaml"
GOOD = {
    "card": "NVIDIA H100 80GB HBM3",
    "date": "2026-12-01",
    "device": "cuda",
    "torch": "2.13.0",
    "step_floor_per_layer_ms": 1.0,
    "fused_ratio": {1: 1.0, 4: 0.3, 16: 0.1},
    "mfu": {"mlm": 0.3, "misad.released": 0.2, "albert-xxlarge+misad": 0.5},
    "memory_factor": {"pretrain": 1.05, "fused": 1.5},
}


@pytest.fixture
def accepted(tmp_path, monkeypatch):
    """Point the budget at an acceptance file holding ``write(data)`` (YAML, as the bench writes it)."""
    path = tmp_path / "acceptance.yaml"

    def write(data: dict | str):
        path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
        monkeypatch.setattr(acceptance_file, "ACCEPTANCE", path)
        acceptance_file.measured.cache_clear()
        return path

    yield write
    acceptance_file.measured.cache_clear()


def test_no_file_changes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(acceptance_file, "ACCEPTANCE", tmp_path / "absent.yaml")
    acceptance_file.measured.cache_clear()
    try:
        assert acceptance_file.measured() is None and acceptance_file.source() is None
        assert acceptance_file.memory_factor("fused") == 1.0
    finally:
        acceptance_file.measured.cache_clear()


def test_the_repository_s_measurement_if_any_is_valid():
    """Until `make gpu-acceptance` has run on a GPU and its file is committed, there is none."""
    if acceptance_file.ACCEPTANCE.exists():
        assert acceptance_file.read_acceptance()["device"] == "cuda"


@pytest.mark.parametrize(
    "change, place",
    [
        ({"device": "cpu"}, "device"),
        ({"card": "NVIDIA <b>H100</b>"}, "card"),
        ({"step_floor_per_layer_ms": float("nan")}, "step_floor_per_layer_ms"),
        ({"mfu": {"mlm": 1.5}}, "mfu.mlm"),
        ({"memory_factor": {"pretrain": 0}}, "memory_factor.pretrain"),
        ({"memory_factor": {"decode": 1.0}}, "memory_factor"),
        ({"fused_ratio": {"four": 0.3}}, "fused_ratio"),
        ({"finetune_mfu": {"sentence": {1: 1.2}}}, "finetune_mfu.sentence.1"),
        ({"finetune_mfu": {"sentence": {1: 0}}}, "finetune_mfu.sentence.1"),
        ({"finetune_mfu": {"reading": {1: 0.3}}}, "finetune_mfu"),
        ({"finetune_mfu": {"sentence": {"K16": 0.3}}}, "finetune_mfu.sentence"),
        ({"finetune_mfu": {"sentence": {}}}, "finetune_mfu.sentence"),
        # issue 55 §2: YAML reads these keys as numbers or a boolean, past a key pattern
        ({"fused_ratio": {0: 0.3, 1: 1.0}}, "fused_ratio"),
        ({"fused_ratio": {-4: 0.3, 1: 1.0}}, "fused_ratio"),
        ({"fused_ratio": {True: 0.3, 2: 0.6}}, "fused_ratio"),
    ],
    ids=[
        "cpu run",
        "card html",
        "nan",
        "mfu above 1",
        "zero factor",
        "unknown kind",
        "bad K",
        "finetune mfu above 1",
        "finetune mfu zero",
        "unknown shape",
        "finetune bad K",
        "finetune empty",
        "K 0",
        "K -4",
        "K true",
    ],
)
def test_a_bad_file_is_one_line_naming_the_place(change, place):
    with pytest.raises(InputError) as error:
        acceptance_file.check({**GOOD, **change}, "acceptance.yaml")
    assert place in str(error.value) and "python -m pipeline gpu-acceptance" in str(error.value)


def test_a_bad_file_stops_the_plan_in_one_line(accepted, cli, capsys, tmp_path):
    path = accepted({**GOOD, "device": "cpu"})
    out = tmp_path / "plan.md"
    status = cli("plan", "--configfile", PAPER_EN, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, path, out, "device")


def test_memory_is_corrected_only_past_15_percent(accepted):
    accepted(GOOD)
    assert acceptance_file.memory_factor("pretrain") == 1.0  # 5% off: the estimate stands
    assert acceptance_file.memory_factor("fused") == 1.5
    large = ARCHITECTURES["bert-large-uncased"]
    assert memory.member_bytes(large, 32, 128) == pytest.approx(
        1.5 * memory.member_bytes(large, 32, 128, corrected=False)
    )
    assert memory.largest_fused_members(large, 32, 128) == 4  # 6 by the formula alone (docs/stages/classify.md)


def test_the_plan_reads_the_measurement(accepted, cli, capsys, tmp_path):
    planner = Planner(copy.deepcopy(resolve_config(PAPER_EN)), "h100", 0.4)
    xxlarge = next(r for label, r in planner.runs.items() if "albert-xxlarge" in label and r.objective == "misad")
    settings = planner.pretrain_settings(xxlarge)
    stated = planner.pretrain_cost(xxlarge, settings).flops_hours  # at --mfu 0.4
    accepted(GOOD)
    assert planner.per_layer_ms() == 1.0 and planner.fused_ratio(4) == pytest.approx(4 * 0.3)
    assert planner.objective_mfu(xxlarge, settings) == 0.5  # its family's measurement, not BERT-base's
    assert planner.pretrain_cost(xxlarge, settings).flops_hours == pytest.approx(stated * 0.4 / 0.5)
    out = tmp_path / "plan.md"
    assert cli("plan", "--configfile", PAPER_EN, "--out", out) == 0, capsys.readouterr().err
    assert "measured on NVIDIA H100 80GB HBM3, 2026-12-01 by python -m pipeline gpu-acceptance" in out.read_text()


FINETUNE = {"sentence": {1: 0.1, 16: 0.4}, "multiple-choice": {1: 0.3, 6: 0.5}}


def test_fine_tuning_is_costed_at_the_measured_mfu_of_its_shape(accepted, cli, capsys, tmp_path):
    """Issue 53 §3: the GLUE / CLUE grids and the Siamese fine-tunings at the MFU classify's steps reached at the
    grids' shapes (a multiple-choice task at ChID's, the rest at GLUE's; linear in K between the stacks
    measured), --mfu where nothing was measured; the assumption line says which."""
    planner = Planner(copy.deepcopy(resolve_config(PAPER_EN)), "h100", 0.4)
    label = planner.config["classify"]["glue"]["models"][0]
    stated = planner.classify_cost("glue", label).flops_hours
    assert acceptance_file.finetune_mfu(False, 16, 0.4) == 0.4  # no file: --mfu
    assert "fine-tuning at the assumed 40% MFU" in acceptance_file.finetune_source(0.4)
    accepted(GOOD)  # a file from before fine-tuning was measured: still --mfu
    assert planner.classify_cost("glue", label).flops_hours == pytest.approx(stated)
    accepted({**GOOD, "finetune_mfu": FINETUNE})
    assert acceptance_file.finetune_mfu(False, 16, 0.4) == 0.4 and acceptance_file.finetune_mfu(False, 1, 0.4) == 0.1
    assert acceptance_file.finetune_mfu(False, 6, 0.4) == pytest.approx(0.1 + 5 / 15 * 0.3)
    assert acceptance_file.finetune_mfu(True, 3, 0.4) == pytest.approx(0.3 + 2 / 5 * 0.2)
    assert acceptance_file.finetune_mfu(True, 12, 0.4) == 0.5  # past the largest stack measured: its figure
    measured = planner.classify_cost("glue", label).flops_hours
    assert stated < measured < stated * 0.4 / 0.1  # K=16 stacks at 40%, smaller ones below it
    siamese = planner.finetune_cost("bert-base-uncased", "sbert-nli", 1000)
    accepted(GOOD)
    assert siamese.flops_hours == pytest.approx(
        planner.finetune_cost("bert-base-uncased", "sbert-nli", 1000).flops_hours * 4
    )
    accepted({**GOOD, "finetune_mfu": FINETUNE})
    out = tmp_path / "plan.md"
    assert cli("plan", "--configfile", PAPER_EN, "--out", out) == 0, capsys.readouterr().err
    text = " ".join(out.read_text().split())
    assert "fine-tuning at the MFU measured at the grids' shapes" in text and "sentence K=1 10.0%, K=16 40.0%" in text


SHAPES = {"base": {"sentences": 0.3, "packed": 0.45}, "large": {"sentences": 0.36, "packed": 0.5}}


def test_pre_training_runs_at_the_mfu_of_its_size_and_input(accepted):
    """Issue 53 §3: a job at another size or input than its objective's measurement runs at the objective's figure
    scaled by MLM's at its own size and input (not base's for all); an objective measured on its family keeps it;
    no shape measured: the objective's figure as before."""
    planner = Planner(copy.deepcopy(resolve_config(PAPER_EN)), "h100", 0.4)

    def job(backbone, objective, form):
        run = next(
            r
            for r in planner.runs.values()
            if backbone in planner.pretrain_settings(r)["backbone"]
            and r.objective == objective
            and planner.pretrain_settings(r)["input"] == form
        )
        return planner.objective_mfu(run, planner.pretrain_settings(run))

    accepted(GOOD)  # no shapes measured: base's figure for every size and input, as before
    assert job("bert-large-uncased", "mlm", "packed") == 0.3
    accepted({**GOOD, "pretrain_mfu": SHAPES})
    assert job("bert-base-uncased", "mlm", "sentences") == pytest.approx(0.3)
    assert job("bert-large-uncased", "mlm", "packed") == pytest.approx(0.5)
    assert job("bert-base-uncased", "burt", "packed") == pytest.approx(0.45)  # not measured: MLM's at its shape
    assert job("albert-xxlarge-v2", "misad", "sentences") == 0.5  # its family's own figure (no xxlarge MLM)
    assert acceptance_file.pretrain_mfu(["misad.released"], "large", "sentences", 0.4) == pytest.approx(0.2 * 1.2)
    assert acceptance_file.pretrain_mfu(["nsp"], "xxlarge", "packed", 0.4) == 0.4  # nothing measured: --mfu


@pytest.mark.parametrize(
    "shapes, place",
    [
        ({"huge": {"sentences": 0.3}}, "pretrain_mfu"),
        ({"base": {"pairs": 0.3}}, "pretrain_mfu.base"),
        ({"base": {"sentences": 1.3}}, "pretrain_mfu.base.sentences"),
        ({"base": {}}, "pretrain_mfu.base"),
    ],
    ids=["unknown size", "unknown input", "above 1", "empty"],
)
def test_a_bad_shape_table_is_one_line(shapes, place):
    with pytest.raises(InputError) as error:
        acceptance_file.check({**GOOD, "pretrain_mfu": shapes}, "acceptance.yaml")
    assert place in str(error.value)


def test_a_date_that_is_no_calendar_date_is_one_line():
    """Issue 55 §2: 2026-13-45 has the form YYYY-MM-DD but is no date."""
    with pytest.raises(InputError, match="2026-13-45 is not a calendar date"):
        acceptance_file.check({**GOOD, "date": "2026-13-45"}, "acceptance.yaml")
    assert acceptance_file.check({**GOOD, "date": "2026-12-07"}, "acceptance.yaml")["date"] == "2026-12-07"

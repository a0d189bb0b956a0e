"""The wall-clock of a plan on N GPUs (pipeline/plan/schedule.py): exact answers on small hand-made DAGs, and
the paper configs' schedules checked against their bounds."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from pipeline.plan.plan import Planner
from pipeline.plan.plan_output import budget, planned_jobs
from pipeline.plan.schedule import (
    Job,
    critical_path,
    ddp_efficiency,
    list_schedule,
    plan_jobs,
    schedules,
)
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[2]


def dag(*jobs: Job) -> dict[str, Job]:
    return {job.name: job for job in jobs}


def test_a_chain_beside_a_job():
    jobs = dag(Job("a", 2), Job("b", 3, needs=("a",)), Job("c", 4))
    assert critical_path(jobs) == (5, ["a", "b"])
    assert list_schedule(jobs, 1).finish == 9  # one GPU: every hour in turn
    two = list_schedule(jobs, 2)
    # bottom levels a 5, c 4, b 3: a and c start at once, b when a ends
    assert two.finish == 5
    assert two.placements["b"][:2] == (2, 5) and two.placements["c"][:2] == (0, 4)


def test_independent_jobs_go_longest_first():
    # LPT on two GPUs: 3 | 3, then 2 | 2, then 2: 7 h, where 3+3 | 2+2+2 would take 6 (Graham's bound: 4/3 - 1/6)
    jobs = dag(*(Job(name, hours) for name, hours in zip("abcde", (2, 3, 2, 3, 2), strict=True)))
    found = list_schedule(jobs, 2)
    assert found.finish == 7
    assert {found.placements[n][0] for n in "bd"} == {0}


def test_a_long_chain_is_started_before_a_longer_job():
    # critical-path-first: the chain a -> b (1 + 5) goes before the single 5 h job, then x beside b
    jobs = dag(Job("a", 1), Job("b", 5, needs=("a",)), Job("x", 5))
    assert list_schedule(jobs, 1).finish == 11
    found = list_schedule(jobs, 2)
    assert found.finish == 6 and found.placements["a"][0] == 0 and found.placements["x"][0] == 0


def test_ddp_efficiency_is_nvidias_measured_scaling():
    assert ddp_efficiency(1) == 1
    assert ddp_efficiency(4) == pytest.approx(3.87 / 4)
    assert ddp_efficiency(8) == pytest.approx(7.65 / 8)
    assert ddp_efficiency(16) == pytest.approx(7.65 / 8)  # past one node: 8's kept
    assert ddp_efficiency(2) == pytest.approx(1 + (3.87 / 4 - 1) / 3)
    with pytest.raises(ValueError):
        ddp_efficiency(0)


def test_a_wide_job_splits_its_flops_not_its_floor():
    flops_bound = Job("p", 8, flops_hours=8, floor_hours=1, rule="pretrain")
    assert flops_bound.duration(8) == pytest.approx(1 / (7.65 / 8))
    floor_bound = Job("f", 4, flops_hours=1, floor_hours=4, rule="finetune")
    assert floor_bound.duration(4) == pytest.approx(4 / (3.87 / 4))  # slower than on one GPU: 4 h
    assert floor_bound.duration(1) == 4


def test_a_wide_job_takes_its_gpus_and_others_wait():
    jobs = dag(Job("p", 8, flops_hours=8, rule="pretrain"), Job("x", 1), Job("y", 1, needs=("p",)))
    found = list_schedule(jobs, 2, {"pretrain": 2})
    wide = 8 / 2 / ddp_efficiency(2)
    assert found.placements["p"] == (0, wide, (0, 1))
    assert found.placements["x"][0] == pytest.approx(wide)  # no GPU free beside p
    assert found.finish == pytest.approx(wide + 1)
    # a width past the GPUs there are is cut to them; a one-GPU rule ignores widths
    assert list_schedule(jobs, 1, {"pretrain": 8}).finish == 10
    assert critical_path(jobs, {"pretrain": 2}, 2) == (pytest.approx(wide + 1), ["p", "y"])


def test_a_cycle_or_an_unknown_need_is_refused():
    with pytest.raises(ValueError, match="cycle"):
        list_schedule(dag(Job("a", 1, needs=("b",)), Job("b", 1, needs=("a",))), 2)
    with pytest.raises(ValueError, match="needs z"):
        critical_path(dag(Job("a", 1, needs=("z",))))
    with pytest.raises(ValueError):
        list_schedule(dag(Job("a", 1)), 0)


@cache
def paper(name: str):
    planner = Planner(resolve_config(REPO / f"workflow/config/{name}.yaml"), "h100", 0.4)
    records = planner.records()
    unread = planner.unread_jobs(records)
    return planner, records, unread, budget(records, unread)


@pytest.mark.parametrize("name", ["paper-en", "paper-zh"])
def test_paper_schedule_within_its_bounds(name):
    planner, records, unread, total = paper(name)
    one, eight = schedules(planner, records, unread, [1, 8])
    assert one["finish_hours"] == pytest.approx(total["total"], rel=1e-9)  # one GPU: the budget's GPU-hours
    assert one["total_gpu_hours"] == pytest.approx(total["total"], rel=1e-9)
    path = one["critical_path"]["hours"]
    assert eight["finish_hours"] >= max(total["total"] / 8, path) - 1e-9
    assert eight["finish_hours"] <= total["total"] / 8 + path  # Graham: at most work / N + the longest chain
    dag_ = plan_jobs(planner, planned_jobs(records, unread))
    placed = {p["job"]: p for p in eight["placements"]}
    assert set(placed) == set(dag_)
    for name_, job in dag_.items():  # every job after what it needs
        assert all(placed[need]["end"] <= placed[name_]["start"] + 1e-9 for need in job.needs)
    for t in {p["start"] for p in eight["placements"]}:  # never more than 8 GPUs at once
        assert sum(len(p["gpus"]) for p in eight["placements"] if p["start"] <= t < p["end"]) <= 8


def test_paper_en_grids_split_by_setting_and_wait_for_their_pretraining():
    planner, records, unread, total = paper("paper-en")
    dag_ = plan_jobs(planner, planned_jobs(records, unread))
    grid = {n: j for n, j in dag_.items() if n.startswith("classify glue")}
    assert sum(j.hours for j in grid.values()) == pytest.approx(total["by_rule"]["classify glue"], rel=1e-9)
    large = [j for n, j in grid.items() if n.startswith("classify glue bert-large-uncased (+5 fused) mnli batch8")]
    assert len(large) == 1  # the six BERT-large models fine-tune in one job per task and setting
    assert "pretrain bert-large-uncased+burt.packed" in large[0].needs
    assert dag_["finetune bert-large-uncased+burt.packed+sbert-nli"].needs == (
        "pretrain bert-large-uncased+burt.packed",
    )
    assert dag_["finetune bert-base-uncased+twin.nli+pi"].needs == ()  # starts from the released backbone


def test_cli_prints_the_wall_clock(cli, capsys):
    config = REPO / "workflow/config/paper-en.yaml"
    assert cli("plan", "--configfile", config, "--gpus", "1", "8") == 0
    out = capsys.readouterr().out
    assert "- on 1 GPU: finishes in " in out and "- on 8 GPUs: finishes in " in out and "(critical path " in out
    assert cli("plan", "--configfile", config, "--format", "json", "--gpus", "8") == 0
    found = json.loads(capsys.readouterr().out)["schedule"]
    assert [s["gpus"] for s in found] == [8] and found[0]["summary"].startswith("on 8 GPUs: finishes in ")
    assert cli("plan", "--configfile", config, "--gpus", "0") == 2

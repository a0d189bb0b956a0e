"""The plan's budget counts what runs (issue 41 §1): multiple-choice candidates, reading-comprehension
windows, each BiLSTM size, every configured model, the FLOPs time beside each total, and a fused-job hook."""

from __future__ import annotations

import copy
import json
import math
from functools import cache
from pathlib import Path

import pytest
import yaml

from pipeline.budget import cost
from pipeline.plan.plan import Planner
from pipeline.plan.plan_output import budget, markdown
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[2]
# bert-base-chinese: 12 x 7,077,888 layer weights + the 21,128 x 768 vocabulary; FLOPs per token at length 256
BERT_BASE_CHINESE_TRAINING = 6 * (12 * 7_077_888 + 21_128 * 768) + 12 * 12 * 768 * 256
H100_40 = 989.4e12 * 0.4


@cache
def config(name: str) -> dict:
    return resolve_config(REPO / f"workflow/config/{name}.yaml")


def planner(name: str, **classify) -> Planner:
    resolved = copy.deepcopy(config(name))
    resolved["classify"].update(classify)
    return Planner(resolved, "h100", 0.4)


def upper_bound(p: Planner) -> Planner:
    """``p`` with no measured tokens (pipeline/budget/classify_tokens.yaml): every sequence at its max_length."""
    p.tokens = {"seeds": 1, "measured": {}, "missing": {}}
    return p


def one_task(p: Planner, task: str) -> Planner:
    p.config["classify"]["clue"]["tasks"] = [task]
    return p


def test_chid_counts_one_sequence_per_candidate():
    """CLUE's ChID: 577,157 blanks of 10 candidate idioms, each candidate one sequence of 256 in the step's
    batch; 5 seeds x 3 lr x batch {8, 16} x epochs {2, 3, 5} (paper-zh's grid), every job FLOPs-bound. (At
    the upper bound: every sequence at 256; measured lengths below.)"""
    p = upper_bound(one_task(planner("paper-zh"), "chid"))
    got = p.classify_cost("clue", "bert-base-chinese")
    hours = flops = 0.0
    for batch in (8, 16):
        for epochs in (2, 3, 5):
            work = 577_157 * 10 * epochs * 256 * BERT_BASE_CHINESE_TRAINING / H100_40 / 3600
            steps = math.ceil(577_157 / batch) * epochs * 0.018 / 3600
            hours += 15 * max(work, steps)
            flops += 15 * work
    assert got.hours == pytest.approx(hours) and got.flops_hours == pytest.approx(flops)
    assert got.hours == pytest.approx(got.flops_hours)  # ten sequences a step: the arithmetic rules
    # without the candidates the same grid is floor-bound and about a tenth of the work
    p.work = {**p.work, "sequences_per_example": {}}
    alone = p.classify_cost("clue", "bert-base-chinese")
    assert alone.flops_hours == pytest.approx(flops / 10) and alone.flops_hours < alone.hours < got.hours / 2


def test_chid_s_measured_sequences_by_hand():
    """The same grid, each candidate as long as classify pads it on the data root's ChID (FewCLUE's, 7
    candidates an example: pipeline/budget/classify_tokens.yaml, padded tokens over sequences), times the
    release's 10 candidates; stacks of 5 runs (4 models x 5 seeds at batch 8: 5 + 5 + 5 + 5) pad to the
    longest of 5 orders' batches, stacks of 2 (batch 16: 2 x 10; memory.py) of 2; each model pays a
    quarter of its group's jobs. FLOPs per token at the padded length (issue 48 §2)."""
    p = one_task(planner("paper-zh"), "chid")
    got = p.classify_cost("clue", "bert-base-chinese")
    figure = p.tokens["measured"]["clue"]["chid"]["lengths"][256]
    assert figure["sequences"] == 7 and p.tokens["measured"]["clue"]["chid"]["substitute"]
    six_n = BERT_BASE_CHINESE_TRAINING - 12 * 12 * 768 * 256
    flops = 0.0
    for batch, stacks in ((8, [5, 5, 5, 5]), (16, [2] * 10)):
        for epochs in (2, 3, 5):
            for members in stacks:
                length = figure["padded"][batch][members - 1] / 7
                per_member = 577_157 * 10 * epochs * length * (six_n + 12 * 12 * 768 * length) / H100_40 / 3600
                flops += 3 * members * per_member / 4  # 3 learning rates, a quarter to each model
    assert got.flops_hours == pytest.approx(flops)
    ceiling = upper_bound(one_task(planner("paper-zh"), "chid")).classify_cost("clue", "bert-base-chinese")
    assert 0.4 * ceiling.flops_hours < got.flops_hours < 0.6 * ceiling.flops_hours  # about 130 of 256 tokens


def test_a_task_without_data_keeps_its_upper_bound_and_the_plan_says_why(cli, tmp_path):
    """QQP has no file in the data root: its sequences stay at 128 and the plan names the file it lacks; every
    measured task names its file, split and tokenizer (issue 48 §2)."""
    p = planner("paper-en")
    sources = {s["task"]: s for s in p.token_sources()}
    assert sources["qqp"] == {
        "benchmark": "glue",
        "task": "qqp",
        "source": "upper bound",
        "why": "no file of it in the data root (glue/QQP/train.tsv)",
    }
    assert sources["rte"]["file"] == "glue/RTE/train.tsv" and sources["rte"]["split"] == "train"
    assert sources["qnli"]["split"] == "dev" and sources["mnli"]["substitute"]
    assert p.padded_sequence("glue", "qqp", 8, 128, 1) is None
    assert p.padded_sequence("glue", "rte", 8, 128, 1) < p.padded_sequence("glue", "rte", 8, 128, 5) <= 128
    out = tmp_path / "plan.md"
    assert cli("plan", "--configfile", REPO / "workflow/config/paper-en.yaml", "--out", out) == 0
    text = out.read_text()
    assert "- glue qqp: upper bound (max_length): no file of it in the data root (glue/QQP/train.tsv)" in text
    assert "- glue rte: measured on glue/RTE/train.tsv (train file; tokenizer en)" in text


def test_c3_counts_four_options_and_cmrc_its_windows():
    p = upper_bound(one_task(planner("paper-zh", fuse=1), "c3"))
    c3 = p.classify_cost("clue", "bert-base-chinese")
    p.work = {**p.work, "sequences_per_example": {}}
    assert c3.flops_hours == pytest.approx(4 * p.classify_cost("clue", "bert-base-chinese").flops_hours)
    p = upper_bound(one_task(planner("paper-zh", fuse=1), "cmrc2018"))
    cmrc = p.classify_cost("clue", "bert-base-chinese")
    # 10,142 questions, 4.01 windows each, seeds one by one: the steps and the work both grow by the windows
    steps = sum(15 * math.ceil(10_142 * 4.01 / b) * e for b in (8, 16) for e in (2, 3, 5))
    assert cmrc.hours == pytest.approx(steps * 0.018 / 3600)  # floor-bound at these batches
    p.work = {**p.work, "sequences_per_example": {}}
    assert cmrc.flops_hours == pytest.approx(4.01 * p.classify_cost("clue", "bert-base-chinese").flops_hours)


def test_cmrc_counts_the_windows_the_tokenizer_cuts():
    """Measured on the data root's CMRC 2018 (classify_tokens.yaml: windows of 256 at stride 128 as classify
    encodes them, 3.98 a question by the tokenizer), the plan's steps count those windows, not workloads.yaml's
    character count (4.01), which stays for a length not measured."""
    p = one_task(planner("paper-zh", fuse=1), "cmrc2018")
    windows = p.tokens["measured"]["clue"]["cmrc2018"]["lengths"][256]["sequences"]
    assert 3.9 < windows < 4.01 and p.windows("clue", "cmrc2018", 256) == windows
    assert p.windows("clue", "cmrc2018", 512) == 4.01 and p.windows("clue", "tnews", 128) == 1.0
    steps = sum(15 * math.ceil(10_142 * windows / b) * e for b in (8, 16) for e in (2, 3, 5))
    assert p.classify_cost("clue", "bert-base-chinese").hours == pytest.approx(steps * 0.018 / 3600)


def test_chid_is_most_of_paper_zh():
    """Issue 41's estimate: ChID is 70-85% of paper-zh's budget once its candidates are counted, every sequence
    at 256 (seeds one by one); with the lengths measured on the data (issue 48 §2: about 130 padded tokens a
    candidate, where the other tasks' jobs stay nearer their floors) 60-70%. Fused, the floor-bound tasks
    shrink and ChID, FLOPs-bound, is more still."""
    for bound, low, high in ((upper_bound, 0.70, 0.85), (lambda p: p, 0.60, 0.70)):
        whole = bound(planner("paper-zh", fuse=1)).classify_cost("clue", "bert-base-chinese").hours
        chid = bound(one_task(planner("paper-zh", fuse=1), "chid")).classify_cost("clue", "bert-base-chinese").hours
        assert low <= chid / whole <= high
        fused = bound(planner("paper-zh")).classify_cost("clue", "bert-base-chinese").hours
        alone = bound(one_task(planner("paper-zh"), "chid")).classify_cost("clue", "bert-base-chinese").hours
        assert chid / whole < alone / fused


def test_a_bilstm_step_floor_grows_with_its_size():
    """600-d (300 per direction): launch-bound, 2 x 3 x 40 x 10 us = 2.4 ms; 4096-d: the recurrent product of
    2 x 2 x 64 x 2048 x 8192 FLOPs per time step at the H100's 67 TFLOP/s float32, 15.4 ms."""
    small = cost.bilstm_step_seconds(300, 64, 40, 10e-6)
    large = cost.bilstm_step_seconds(2048, 64, 40, 10e-6)
    assert small == pytest.approx(2.4e-3)
    assert large == pytest.approx(6 * 40 * 4 * 64 * 2048 * 8192 / 67e12) == pytest.approx(15.4e-3, abs=1e-4)
    # the A100's float32 is slower: the large step more so
    assert cost.bilstm_step_seconds(2048, 64, 40, 10e-6, "a100") > 3 * large


@pytest.fixture(scope="module")
def paper_en():
    p = Planner(config("paper-en"), "h100", 0.4)
    records = p.records()
    return p, records, budget(records, p.unread_jobs(records))


def test_every_configured_bilstm_model_is_counted(paper_en):
    p, records, total = paper_en
    section = p.config["bilstm"]
    configured = {f"bilstm-{pool}-{2 * size}" for pool in section["poolings"] for size in section["sizes"]}
    configured |= {f"bilstm-{m['pooling']}-{2 * m['size']}" for m in section["extra"]}  # BF §3.4's BiLSTM-Max
    in_rows = {r["label"] for r in records if r["status"] == "planned" and r["label"].startswith("bilstm-")}
    assert len(configured) == 11 and len(in_rows) == 8
    bilstms = {job for job in total["not_in_rows"] if job.startswith("bilstm ")}  # beside the other stages' jobs
    assert bilstms == {f"bilstm {label}" for label in configured - in_rows}
    # each at its own size's floor: the 4096-d encoders cost about 6x the 600-d ones
    jobs = {j["label"]: j["gpu_hours"] for j in p.unread_jobs(records) if j["rule"] == "bilstm"}
    assert jobs["bilstm-inner-attention-4096"] > 5 * jobs["bilstm-inner-attention-600"]
    steps = 550_152 // 64 * 20
    assert jobs["bilstm-inner-attention-4096"] == pytest.approx(
        steps * cost.bilstm_step_seconds(2048, 64, 40, 1e-5) / 3600
    )
    assert total["by_rule"]["bilstm"] == pytest.approx(
        sum(
            r["gpu_hours"]
            for r in records
            if r["status"] == "planned" and r["label"] in in_rows and r["source"] == "bf_t2"
        )
        + sum(jobs.values())
    )


def test_every_total_has_its_flops_time_beside_it(paper_en):
    _, records, total = paper_en
    assert 0 < total["flops_total"] < total["total"]
    assert set(total["flops_by_rule"]) == set(total["by_rule"])
    for rule, hours in total["by_rule"].items():
        assert 0 < total["flops_by_rule"][rule] <= hours + 1e-9, rule
    text = markdown(records, "test", total)
    assert f"(FLOPs time of the same work at the stated MFU: {total['flops_total']:,.1f})" in text
    assert "- classify glue: " in text and "(FLOPs time " in text.split("- classify glue: ")[1].splitlines()[0]


def test_the_json_budget_names_its_flops_total(cli, tmp_path):
    out = tmp_path / "plan.json"
    assert cli("plan", "--configfile", REPO / "workflow/config/paper-zh.yaml", "--format", "json", "--out", out) == 0
    document = json.loads(out.read_text())
    assert document["budget"]["flops_total"] < document["budget"]["total"]
    assert "Infinity" not in out.read_text() and "NaN" not in out.read_text()


def test_a_fused_job_costs_its_members_flops_or_its_fused_floor():
    """K members stepping together: max(FLOPs time of all, steps x solo floor x the measured ratio at K)."""
    flops = 1e15
    solo = cost.job_cost(flops, 1000, 0.018)
    fused = cost.fused_job_cost([flops] * 4, 1000, 0.018, 1.5)
    assert fused.flops_hours == pytest.approx(4 * solo.flops_hours)
    assert fused.hours == pytest.approx(max(4 * solo.flops_hours, 1000 * 0.018 * 1.5 / 3600))
    with pytest.raises(ValueError, match="operator_ratio"):
        cost.fused_job_cost([flops], 10, 0.018, 0)


def test_fusing_is_costed_only_where_a_config_enables_it():
    """At the upper bound, where a fused member's sequences are as long as a solo run's (measured, a stack pads
    to its longest member: below)."""
    base = upper_bound(planner("paper-en", fuse=1)).classify_cost("glue", "bert-base-uncased")
    # no fuse key, or a fuse without a measured ratio (workloads.yaml leaves fused_operator_ratio out): as today
    assert upper_bound(planner("paper-en", fuse=None)).classify_cost("glue", "bert-base-uncased") == base
    unmeasured = upper_bound(planner("paper-en", fuse=5))
    unmeasured.work = {key: value for key, value in unmeasured.work.items() if key != "fused_operator_ratio"}
    assert unmeasured.classify_cost("glue", "bert-base-uncased").hours == pytest.approx(base.hours)
    # five seeds in one job whose step dispatches 1.25 solo steps' operators (0.25 per member): the
    # floor-bound jobs cost a quarter
    p = upper_bound(planner("paper-en", fuse=5))
    p.work = {**p.work, "fused_operator_ratio": {1: 1.0, 5: 0.25}}
    fused = p.classify_cost("glue", "bert-base-uncased")
    assert fused.flops_hours == pytest.approx(base.flops_hours)
    assert base.flops_hours <= fused.hours < 0.5 * base.hours
    # 5 seeds fused 2 at a time: two pairs and a single member per setting
    p = upper_bound(planner("paper-en", fuse=2))
    p.work = {**p.work, "fused_operator_ratio": {1: 1.0, 2: 0.5}}
    pairs = p.classify_cost("glue", "bert-base-uncased")
    assert pairs.hours < base.hours and pairs.hours >= 0.6 * base.flops_hours
    # measured: a stack of 5 seeds pads each batch to the longest of 5 orders', more work than 5 solo runs, and
    # less than the upper bound
    solo = planner("paper-en", fuse=1).classify_cost("glue", "bert-base-uncased")
    stacked = planner("paper-en", fuse=5).classify_cost("glue", "bert-base-uncased")
    assert solo.flops_hours < stacked.flops_hours < base.flops_hours


def test_the_fused_step_ratio_is_members_times_the_measured_per_member_ratio():
    """workloads.yaml holds operators per member-step (bench/fused_ops.py); a fused step of K members
    dispatches K times that, interpolated between measured K, scaled past the largest."""
    p = planner("paper-en", fuse=5)
    p.work = {**p.work, "fused_operator_ratio": {1: 1.0, 2: 0.58, 4: 0.29, 8: 0.145}}
    assert p.fused_ratio(1) == 1.0 and p.fused_ratio(4) == pytest.approx(1.16)
    assert p.fused_ratio(5) == pytest.approx(1.16)  # between 4 (1.16) and 8 (1.16)
    assert p.fused_ratio(3) == pytest.approx(1.16)  # between 2 (1.16) and 4 (1.16)
    assert p.fused_ratio(16) == pytest.approx(2 * 1.16)  # past 8: no further saving assumed
    p.work = {**p.work, "fused_operator_ratio": {}}
    assert p.fused_ratio(5) == 5.0


def test_fused_checkpoints_share_their_group_s_stacks_capped_by_memory():
    """With classify.fuse_checkpoints, a setting's runs are the seeds of every model of one backbone (paper-en:
    10 BERT-base models x 5 seeds); they stack at most classify.fuse or what one GPU holds at the batch
    (pipeline/budget/memory.py), in balanced stacks, and each model is charged its share."""
    alone = planner("paper-en", fuse=16, fuse_checkpoints=False)
    together = planner("paper-en", fuse=16, fuse_checkpoints=True)
    assert alone.fused_group("glue", "bert-base-uncased+mlm") == ["bert-base-uncased+mlm"]
    group = together.fused_group("glue", "bert-base-uncased+mlm")
    assert len(group) == 10 and all(label.split("+")[0] == "bert-base-uncased" for label in group)
    assert together.fused_group("glue", "bert-large-uncased") == [
        m for m in config("paper-en")["classify"]["glue"]["models"] if m.startswith("bert-large-uncased")
    ]
    # every model of a group pays the same share; the FLOPs are each model's own whatever the grouping
    shares = {together.classify_cost("glue", label) for label in group}
    assert len(shares) == 1
    mine, solo = together.classify_cost("glue", "bert-base-uncased"), alone.classify_cost("glue", "bert-base-uncased")
    assert mine.flops_hours == pytest.approx(solo.flops_hours)
    assert mine.flops_hours <= mine.hours < solo.hours
    # BERT-large at batch 64 x 128: 4 runs fit an 80 GB GPU (a bf16 step's weight copies and float32 layer-norm
    # and softmax outputs counted: pipeline/budget/memory.py), so classify.fuse 16 stacks 4
    assert together.stack_limit("bert-large-uncased", 64, 128) == 4
    assert together.stack_limit("bert-base-uncased", 8, 128) == 16
    stacks = {s["backbone"]: s for s in together.fused_stacks() if s["benchmark"] == "glue"}
    assert stacks["bert-base-uncased"]["runs_per_setting"] == 50
    assert stacks["bert-base-uncased"]["stacks"]["8x128"] == [13, 13, 12, 12]
    assert stacks["bert-large-uncased"]["stacks"]["64x128"] == [4] * 6 + [3] * 2


@pytest.mark.parametrize("name", ["paper-en", "paper-zh"])
def test_each_paper_config_s_budget_is_within_1_5_times_its_flops_time(name):
    """Issue 41's goal: the paper configs as configured (fused seeds and checkpoints), their whole budget
    within 1.5x of the FLOPs time of the same work at the stated MFU."""
    p = Planner(copy.deepcopy(config(name)), "h100", 0.4)
    records = p.records()
    total = budget(records, p.unread_jobs(records))
    assert total["total"] <= 1.5 * total["flops_total"], (total["total"], total["flops_total"])


def test_a_lone_run_of_a_fusing_job_is_costed_as_a_stack_of_one(monkeypatch):
    """With classify.fuse above 1 a job's group of one trains through the fused path (docs/stages/classify.md,
    "Fused seeds": a stack of one), so the plan costs it at a stack of one's step (workloads.yaml
    ``fused_operator_ratio``'s 1: more operators than a solo step), its FLOPs a solo run's; a job whose K is 1
    (one run fits the GPU) trains its runs solo and is costed as without fuse. Before, a stack of one was
    costed as a solo run and a K-of-1 job at the table's 1."""
    solo = upper_bound(planner("paper-en", fuse=1, seeds=1)).classify_cost("glue", "bert-base-uncased")
    lone = upper_bound(planner("paper-en", fuse=2, seeds=1, fuse_checkpoints=False))
    assert lone.fused_ratio(1) == lone.work["fused_operator_ratio"][1] > 1.2  # bench/fused_ops.py: a stack of one
    alone = lone.classify_cost("glue", "bert-base-uncased")
    assert alone.flops_hours == pytest.approx(solo.flops_hours)
    assert alone.hours > solo.hours  # the floor-bound jobs step at a stack of one's operators
    monkeypatch.setattr(lone, "stack_limit", lambda *args: 1)  # one run per GPU: the workflow passes --fuse 1
    lone.work = {**lone.work, "fused_operator_ratio": {1: 3.0, 2: 1.0}}
    assert lone.classify_cost("glue", "bert-base-uncased").hours == pytest.approx(solo.hours)
    # timed on a GPU, the table's 1 is the solo step: a stack of one steps as the fewest members timed
    cells = {8: {1: 12.0, 2: 8.0, 4: 5.0}}
    lone.work = {
        **lone.work,
        "step_floor_measured": {"card": "x", "ms_per_member_step": {"bert-base": {"eager": cells}}},
    }
    assert lone.fused_ratio(1) == pytest.approx(2 * 8.0 / 12.0)


def test_measured_floors_replace_the_documented_estimate():
    p = planner("paper-en", fuse=5)
    estimate = p.classify_cost("glue", "bert-base-uncased")
    assert p.per_layer_ms() == p.work["step_floor"]["per_layer_ms"]
    cells = {8: {1: 12.0, 2: 3.0, 4: 1.5}}  # a launch-free card: 1 ms a layer, stacking nearly free
    p.work = {**p.work, "step_floor_measured": {"card": "x", "ms_per_member_step": {"bert-base": {"eager": cells}}}}
    assert p.per_layer_ms() == pytest.approx(1.0)
    assert p.fused_ratio(4) == pytest.approx(4 * 1.5 / 12.0)
    assert p.classify_cost("glue", "bert-base-uncased").hours < estimate.hours


def test_an_experiment_no_row_reads_is_costed_listed_and_scheduled(cli, tmp_path):
    """Issue 57: a user's own experiment (whole-word masking from BERT-base, in no paper's table) adds its
    GPU-hours to the budget, its job to ``not_in_rows`` and to the ``--gpus`` schedule."""
    base = yaml.safe_load((REPO / "workflow/config/paper-en.yaml").read_text(encoding="utf-8"))
    extra = copy.deepcopy(base)
    extra["pretrain"]["experiments"]["mine"] = {"objectives": ["wwm"], "suffix": ".mine", "batch_size": 64}
    found = {}
    for name, config in (("base", base), ("extra", extra)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        out = tmp_path / f"{name}.json"
        assert cli("plan", "--configfile", path, "--format", "json", "--gpus", "8", "--out", out) == 0
        found[name] = json.loads(out.read_text())
    before, after = found["base"]["budget"], found["extra"]["budget"]
    job = "pretrain bert-base-uncased+wwm.mine"
    assert set(after["not_in_rows"]) - set(before["not_in_rows"]) == {job}
    # its GPU-hours: those of the same training in a published row (ULR-BERT's MLM: the same settings)
    p = Planner(resolve_config(tmp_path / "extra.yaml"), "h100", 0.4)
    run = p.runs["bert-base-uncased+wwm.mine"]
    hours = p.pretrain_job(run, p.pretrain_settings(run)).hours
    mlm = next(r for r in found["extra"]["rows"] if r.get("label") == "bert-base-uncased+mlm")
    assert hours == pytest.approx(mlm["gpu_hours"]) and hours > 0
    assert after["total"] == pytest.approx(before["total"] + hours, rel=1e-12)
    assert after["by_rule"]["pretrain"] == pytest.approx(before["by_rule"]["pretrain"] + hours, rel=1e-12)
    schedule = found["extra"]["schedule"][0]
    assert job in {p["job"] for p in schedule["placements"]}
    assert job not in {p["job"] for p in found["base"]["schedule"][0]["placements"]}
    assert schedule["jobs"] == found["base"]["schedule"][0]["jobs"] + 1
    assert schedule["total_gpu_hours"] == pytest.approx(after["total"], rel=1e-9)


def test_every_configured_finetuning_is_costed(paper_en):
    """Issue 57: paper-en's BERT-base sbert-nli and nli-mnrl runs feed no published row, yet the workflow runs
    them: each is in the budget (not_in_rows), as every other configured Siamese fine-tuning is in a row."""
    p, records, total = paper_en
    in_rows = {r["label"] for r in records if r["status"] == "planned" and "recipe" in r.get("settings", {})}
    unread = {f"finetune {label}" for label in p.finetune_runs() if label not in in_rows}
    assert unread == {"finetune bert-base-uncased+sbert-nli", "finetune bert-base-uncased+nli-mnrl"}
    assert unread <= set(total["not_in_rows"])
    jobs = {j["label"]: j["gpu_hours"] for j in p.unread_jobs(records) if j["rule"] == "finetune"}
    rows = {r["label"]: r["gpu_hours"] for r in records if r["status"] == "planned" and r["label"] in in_rows}
    assert total["by_rule"]["finetune"] == pytest.approx(sum(rows.values()) + sum(jobs.values()), rel=1e-12)
    # BERT-base's sbert-nli costs what the same recipe costs from a start of its size with a row (SBURT-base)
    assert jobs["bert-base-uncased+sbert-nli"] == pytest.approx(rows["bert-base-uncased+burt.packed+sbert-nli"])
    assert jobs["bert-base-uncased+nli-mnrl"] > jobs["bert-base-uncased+sbert-nli"]  # its anchors' own pass

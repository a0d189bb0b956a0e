"""The workflow's fused checkpoints (classify.fuse_checkpoints; docs/stages/classify.md, "Fused seeds"): the
models that start from one backbone fine-tune in one classify_fused_* job per task and setting, which takes
every model of the group and makes each model's seed files where its own classify job would; a model alone
with its backbone, and a grouped model's files of another benchmark, stay the classify rule's."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from testdata import dry_run_jobs

from pipeline.classify.hyperparameters import grid
from pipeline.fused_groups import checkpoint_groups, fused_runs
from pipeline.workflow_config import resolve_config

REPO = Path(__file__).resolve().parents[2]


def scheduled(blocks: list[str]) -> list[tuple[str, dict, list[str], str]]:
    """(rule, wildcards, outputs, shell command) of each job of a dry run's listing (``-p``)."""
    found = []
    for block in blocks[1:]:
        rule = block.split(":", 1)[0].strip()
        wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.MULTILINE)
        outputs = re.search(r"^\s+output: (.*)$", block, re.MULTILINE)
        command = re.search(r"^Shell command: (.*)$", block, re.MULTILINE)
        found.append(
            (
                rule,
                dict(item.split("=", 1) for item in wildcards.group(1).split(", ")) if wildcards else {},
                outputs.group(1).split(", ") if outputs else [],
                command.group(1) if command else "",
            )
        )
    return found


def runs_of(outputs: list[str]) -> set[tuple[str, str, str]]:
    """(label, task, setting) of each classify seed file among ``outputs``."""
    return {m.groups() for m in (re.search(r"/classify/([^/]+)/([^/]+)/([^/]+)/seed\d+/", o) for o in outputs) if m}


def option_values(command: str, option: str) -> list[str]:
    words = shlex.split(command.split(" > ", 1)[0])
    return [words[i + 1] for i, word in enumerate(words) if word == option]


def test_paper_en_fuses_the_models_of_each_backbone_in_one_job_per_task_and_setting(tmp_path):
    config = resolve_config(REPO / "workflow/config/paper-en.yaml")
    section = config["classify"]
    assert section["fuse_checkpoints"] and section["fuse"] > 1
    groups = checkpoint_groups(section["glue"]["models"], config["models"]["backbones"], config["evaluate"]["models"])
    assert len(groups["bert-base-uncased"]) == 10  # ULR-BERT's and BURT's BERT-base models (issue 41 §2)
    done, blocks = dry_run_jobs(REPO / "workflow/config/paper-en.yaml", tmp_path / "data", print_commands=True)
    assert done.returncode == 0, done.stderr[-3000:]
    jobs = scheduled(blocks)
    fused = [job for job in jobs if job[0].startswith("classify_fused_")]
    settings = {}
    for task in section["glue"]["tasks"]:
        values = {key: section[key].get(task, section[key]["glue"]) for key in ("lr", "epochs", "max_length")}
        settings[task] = list(grid(batch_size=section["batch_sizes"]["glue"], **values))
    expected = {
        (backbone, task, setting) for backbone in groups for task, points in settings.items() for setting in points
    }
    found = {}
    for rule, wildcards, outputs, command in fused:
        labels = sorted({label for label, _, _ in runs_of(outputs)})
        backbone = next(b for b, members in groups.items() if sorted(members) == labels)
        assert rule == "classify_fused_glue_" + re.sub(r"\W", "_", backbone)
        key = (backbone, wildcards["task"], wildcards["setting"])
        assert key not in found  # one job per group, task and setting
        found[key] = command
        # every model of the group, each with its own name and folder, all its seeds declared
        assert option_values(command, "--name") == groups[backbone]
        assert option_values(command, "--out") == [
            f"results/dry-{tmp_path.name}/classify/{label}/{key[1]}/{key[2]}" for label in groups[backbone]
        ]
        assert len(outputs) == 2 * len(labels) * section["seeds"]  # metrics.json and dev predictions per seed
        point = _setting(key[2])
        spec = config["models"]["backbones"][backbone]
        k = fused_runs(spec, section["fuse"], point["batch_size"], point["max_length"], key[1])
        assert option_values(command, "--fuse") == [str(k)]
        # every model at the config's one fine-tuning dropout, whatever its checkpoint ships (issue 46 §1)
        assert option_values(command, "--dropout") == [str(section["dropout"])] == ["0.1"]
    assert set(found) == expected
    # BERT-large at batch 64 is capped by the GPU's memory; BERT-base at batch 8 is not
    assert int(option_values(found[("bert-large-uncased", "sst2", "batch64-lr3e-05-epochs3-len128")], "--fuse")[0]) < 16
    assert option_values(found[("bert-base-uncased", "sst2", "batch8-lr3e-05-epochs3-len128")], "--fuse") == ["16"]
    grouped = {label for members in groups.values() for label in members}
    plain = [runs_of(outputs) for rule, _, outputs, _ in jobs if rule == "classify"]
    assert all(option_values(command, "--dropout") == ["0.1"] for rule, _, _, command in jobs if rule == "classify")
    assert not {label for made in plain for label, _, _ in made} & grouped  # no grouped file made twice


def _setting(label: str) -> dict:
    batch, lr, epochs, length = re.fullmatch(r"batch(\d+)-lr(.+)-epochs(.+)-len(\d+)", label).groups()
    return {"batch_size": int(batch), "lr": float(lr), "epochs": float(epochs), "max_length": int(length)}


def test_a_model_alone_and_a_grouped_models_other_benchmark_stay_the_classify_rules(tmp_path):
    """The demo's three tiny models fuse on GLUE (sst2, rte); on CLUE, where one of them is alone, it runs in
    the classify rule: a label fused on one benchmark is not fused on the other."""
    config = yaml.safe_load((REPO / "workflow/config/demo.yaml").read_text(encoding="utf-8"))
    config["classify"].update(fuse=2, fuse_checkpoints=True, group_by_length=True)
    config["classify"]["clue"] = {"models": ["tiny+mlm"], "tasks": ["tnews"]}
    config["classify"]["batch_sizes"]["clue"] = [8]
    path = tmp_path / "fused.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    # the demo's own data root (its corpus fixtures), a run of its own name: no earlier outputs count
    command = [sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "1", "--configfile", str(path)]
    command += ["--config", f"run=dry-{tmp_path.name}"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    jobs = [job for job in scheduled(done.stdout.split("\nrule ")) if job[0].startswith("classify")]
    made = {}
    for rule, _, outputs, command in jobs:
        for run in runs_of(outputs):
            assert run not in made, run  # one producer per file
            made[run] = (rule, command)
    fused = {rule for rule, _ in made.values() if rule.startswith("classify_fused_")}
    assert fused == {"classify_fused_glue_tiny"}
    for (label, task, _), (rule, command) in made.items():
        assert "--group-by-length" in command  # classify.group_by_length reaches fused and solo jobs alike
        if task in ("sst2", "rte"):
            assert rule == "classify_fused_glue_tiny"
            assert option_values(command, "--name") == ["tiny", "tiny+mlm", "tiny+burt"]
            assert option_values(command, "--fuse") == ["2"]  # a tiny model: the configured K
        else:
            assert (label, task, rule) == ("tiny+mlm", "tnews", "classify")
    assert {task for _, task, _ in made} == {"sst2", "rte", "tnews"}

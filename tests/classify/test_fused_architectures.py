"""A fused stack trains each model as that model (issue 46 §1, docs/stages/classify.md "Fused seeds").

Every architecture the paper configs fuse (ALBERT, ELECTRA, BERT) equals its solo runs with dropout off;
models whose configs differ go to stacks of their own and each still equals its solo run; a member's
dropout masks and data order come from its own model, seed and setting, not from the stack it trains in;
an architecture the fused path cannot run trains one by one; a resume keeps the GPU's generators too."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile

import numpy as np
import pytest
import torch
from classify_builders import demo_texts
from test_fused_training import check_exact, data, outputs, settings, solo
from transformers import AutoConfig, AutoModelForMultipleChoice

from pipeline.classify import classify, fused_stacks, fused_training, tasks, training
from pipeline.classify.fused_training import Member
from pipeline.errors import InputError
from pipeline.rehearsal.tiny_hub import build_snapshot

STAND_INS = {  # tiny random models of the paper configs' hub families (pipeline/rehearsal/tiny_hub.py)
    "albert": "hub:albert/albert-base-v2@" + "a" * 40,
    "electra": "hub:google/electra-base-discriminator@" + "b" * 40,
    "bert": "hub:google-bert/bert-base-uncased@" + "c" * 40,
    "xlnet": "hub:xlnet/xlnet-base-cased@" + "d" * 40,
}


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """Family -> the folder of its tiny stand-in, with a vocabulary of the demo GLUE fixtures' text."""
    root = tmp_path_factory.mktemp("hub")
    return {family: str(build_snapshot(spec, root, demo_texts())) for family, spec in STAND_INS.items()}


def with_config(model: str, out, **fields) -> str:
    """A copy of ``model`` whose config has ``fields`` changed (its weights as they are)."""
    folder = shutil.copytree(model, out)
    config = AutoConfig.from_pretrained(folder)
    for name, value in fields.items():
        setattr(config, name, value)
    config.save_pretrained(folder)
    return str(folder)


@pytest.mark.parametrize("family", ["albert", "electra", "bert"])
def test_every_architecture_the_paper_configs_fuse_equals_its_solo_runs(family, hub, demo_root, tmp_path):
    """Dropout off, two seeds at two rates: logits within 1e-4 of the solo runs after 20 steps."""
    check_exact("sst2", hub[family], demo_root, tmp_path, lambda m: [Member(0, 1e-3, m), Member(1, 2e-3, m)])


def test_models_whose_configs_differ_train_in_stacks_of_their_own_each_as_itself(tiny_en, demo_root, tmp_path, caplog):
    """Three checkpoints of one shape whose configs differ (the activation, LayerNorm's epsilon): the job
    splits them into one stack per config and says so, and every member equals its own solo run. Before,
    they shared a stack run by the first model's config (the LayerNorm member's logits 0.025 off its solo
    run's)."""
    task = tasks.TASKS["sst2"]
    paths = [
        str(tiny_en),
        with_config(tiny_en, tmp_path / "relu", hidden_act="relu"),
        with_config(tiny_en, tmp_path / "eps", layer_norm_eps=1.0),
    ]
    config = settings(task)
    tokenizer, train, (_, dev_features) = data(task, demo_root, paths[0], config)
    runs = [(model, seed) for model in range(3) for seed in (0, 1)]
    caplog.set_level("INFO")
    args = argparse.Namespace(fuse=6, report_to="none", tracking_dir=None)
    groups = classify.run_groups(task, runs, paths, config, args).stacks
    assert sorted(groups) == [[(0, 0), (0, 1)], [(1, 0), (1, 1)], [(2, 0), (2, 1)]]
    assert "train in 3 stacks keyed on their configs" in caplog.text
    assert "(differs in hidden_act)" in caplog.text and "(differs in layer_norm_eps)" in caplog.text
    with tempfile.TemporaryDirectory() as scratch:
        for group in groups:
            members = [Member(seed, 1e-2, paths[model]) for model, seed in group]  # 1e-2: a wrong template shows
            trainers, _, losses, _ = fused_training.train_members(task, members, tokenizer, train, config, scratch)
            for member, trainer, loss in zip(members, trainers, losses):
                alone, alone_loss = solo(task, member, tokenizer, train, config, scratch)
                gap = float(np.abs(outputs(task, trainer, dev_features) - outputs(task, alone, dev_features)).max())
                assert gap < 1e-4, (member, gap)
                assert round(loss, 4) == round(alone_loss, 4), (member, loss, alone_loss)


def test_a_stack_refuses_members_of_different_configs(tiny_en, tmp_path):
    task = tasks.TASKS["sst2"]
    relu = with_config(tiny_en, tmp_path / "relu", hidden_act="relu")
    models = [training.load_model(task, path, 0.0) for path in (str(tiny_en), relu)]
    with pytest.raises(ValueError, match="share one config"):
        fused_training.StackedModel(models, task.head)
    members = [Member(0, 1e-3, str(tiny_en)), Member(0, 1e-3, relu)]
    assert fused_stacks.unfusable(task, members, settings(task)) == "the models' configs differ (hidden_act)"


def test_the_released_and_the_pretrained_albert_fine_tune_at_one_dropout_in_one_stack(hub, tmp_path):
    """albert-base-v2 ships dropout 0, an ALBERT pre-trained here is saved with 0.1 (paper-en's ULR-ALBERT
    pair): at the run's --dropout both run every dropout at that rate, so they share one config and fuse."""
    task = tasks.TASKS["sst2"]
    released = with_config(
        hub["albert"], tmp_path / "released", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0
    )
    pretrained = with_config(
        hub["albert"], tmp_path / "pretrained", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1
    )
    for path in (released, pretrained):
        model = training.load_model(task, path, 0.1)
        rates = {m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)}
        assert rates == {0.1}, (path, rates)
        assert model.config.attention_probs_dropout_prob == 0.1  # the eager attention's functional dropout
    config = settings(task, dropout=0.1)
    assert fused_stacks.stack_config(task, released, 0.1) == fused_stacks.stack_config(task, pretrained, 0.1)
    args = argparse.Namespace(fuse=4, report_to="none", tracking_dir=None)
    groups = classify.run_groups(task, [(0, 0), (0, 1), (1, 0), (1, 1)], [released, pretrained], config, args)
    assert groups.stacks == [[(0, 0), (0, 1), (1, 0), (1, 1)]] and groups.solo == []


def test_a_members_dropout_and_data_do_not_depend_on_its_stack(tiny_en, demo_root):
    """Dropout on (0.1): seed 1 trained alone (a stack of 1) and between two other runs (a stack of 3, other
    seeds, so other batch lengths and padding) has the same loss and the same trained weights. Before, its
    masks came from one generator shared by the stack, seeded by the stack's first member."""
    task = tasks.TASKS["sst2"]
    config = settings(task, dropout=0.1)
    tokenizer, train, (_, dev_features) = data(task, demo_root, str(tiny_en), config)
    member = Member(1, 1e-3, str(tiny_en))
    with tempfile.TemporaryDirectory() as scratch:
        alone, _, alone_losses, _ = fused_training.train_members(task, [member], tokenizer, train, config, scratch)
        stack = [Member(0, 1e-3, str(tiny_en)), member, Member(2, 1e-3, str(tiny_en))]
        stacked, _, stacked_losses, _ = fused_training.train_members(task, stack, tokenizer, train, config, scratch)
        gap = float(np.abs(outputs(task, alone[0], dev_features) - outputs(task, stacked[1], dev_features)).max())
        weights = max(
            float((a - b).abs().max())
            for a, b in zip(alone[0].model.state_dict().values(), stacked[1].model.state_dict().values())
        )
    print(
        f"stack of 1 vs stack of 3: loss {alone_losses[0]:.8f} / {stacked_losses[1]:.8f}, logits {gap:.1e}, weights {weights:.1e}"
    )
    assert abs(alone_losses[0] - stacked_losses[1]) < 1e-6
    assert gap < 1e-5 and weights < 1e-5
    assert abs(stacked_losses[0] - stacked_losses[1]) > 1e-4  # the other members are other runs


def test_member_keys_come_from_model_seed_and_setting_only(tiny_en):
    task = tasks.TASKS["sst2"]
    config = settings(task)
    key = fused_training.dropout_key(Member(0, 1e-3, str(tiny_en)), config)
    assert key == fused_training.dropout_key(Member(0, 1e-3, str(tiny_en) + "/"), config)
    assert key != fused_training.dropout_key(Member(1, 1e-3, str(tiny_en)), config)
    assert key != fused_training.dropout_key(Member(0, 2e-3, str(tiny_en)), config)


def test_an_architecture_the_fused_path_cannot_run_trains_one_by_one(cli, hub, demo_root, tmp_path, caplog):
    """XLNet (issue 47 §2): before, it fused and crashed inside vmap; now its seeds train as solo runs, in one
    log line saying why, and the job writes its files."""
    caplog.set_level("INFO")
    args = ("--model", hub["xlnet"], "--task", "sst2", "--data", demo_root, "--seeds", 2, "--max-steps", 2)
    assert cli("classify", *args, "--fuse", 2, "--batch-size", 4, "--out", tmp_path / "out") == 0
    assert "train one by one (the fused path runs albert, bert, electra, not xlnet)" in caplog.text
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["seeds"] == [0, 1]


def test_the_multiple_choice_path_refuses_an_architecture_without_a_pooler(hub, caplog):
    """ELECTRA has no pooler, which the fused multiple-choice forward reads: a job trains its runs one by one
    and says why in one line; a stack of them is refused in one line (InputError: exit 2)."""
    task = tasks.TASKS["c3"]
    config = settings(task)
    args = argparse.Namespace(fuse=2, report_to="none", tracking_dir=None)
    assert classify.run_groups(task, [(0, 0), (0, 1)], [hub["electra"]], config, args) == ([], [(0, 0), (0, 1)])
    assert "the fused multiple-choice path runs albert, bert, not electra" in caplog.text
    models = [AutoModelForMultipleChoice.from_pretrained(hub["electra"]) for _ in range(2)]
    with pytest.raises(InputError, match="multiple-choice path runs albert, bert, not electra") as refused:
        fused_training.StackedModel(models, task.head)
    assert "\n" not in str(refused.value)


def test_a_fused_save_keeps_the_gpu_generators_and_a_resume_restores_them(tiny_en, demo_root, tmp_path, monkeypatch):
    """Where CUDA is there, a save holds ``torch.cuda.get_rng_state_all()`` and a resume sets it back (the CPU
    here stands in for a GPU: the CUDA calls are replaced)."""
    fake = [torch.tensor([1, 2, 3], dtype=torch.uint8), torch.tensor([4, 5], dtype=torch.uint8)]
    restored = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: fake)
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", restored.append)
    assert fused_training.cuda_rng_state() == fake
    fused_training.restore_cuda_rng(fake)
    assert restored == [fake]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the run itself, on the CPU
    monkeypatch.setattr(fused_training, "cuda_rng_state", lambda: fake)
    monkeypatch.setattr(fused_training, "restore_cuda_rng", restored.append)
    task = tasks.TASKS["sst2"]
    config = settings(task)
    tokenizer, train, _ = data(task, demo_root, str(tiny_en), config)
    members = [Member(0, 1e-3, str(tiny_en)), Member(1, 1e-3, str(tiny_en))]
    resume = fused_training.Resume(tmp_path / ".resume" / "fused.pt", 5)
    schedule = fused_training.linear_warmup

    def dies_at_step_7(step, warmup, total):
        if step == 7:
            raise KeyboardInterrupt
        return schedule(step, warmup, total)

    with tempfile.TemporaryDirectory() as scratch:
        monkeypatch.setattr(fused_training, "linear_warmup", dies_at_step_7)
        with pytest.raises(KeyboardInterrupt):
            fused_training.train_members(task, members, tokenizer, train, config, scratch, resume=resume)
        saved = torch.load(resume.path, weights_only=True)["cuda_rng"]
        assert [t.tolist() for t in saved] == [[1, 2, 3], [4, 5]]
        monkeypatch.setattr(fused_training, "linear_warmup", schedule)
        fused_training.train_members(task, members, tokenizer, train, config, scratch, resume=resume)
    assert [[t.tolist() for t in state] for state in restored[1:]] == [[[1, 2, 3], [4, 5]]]

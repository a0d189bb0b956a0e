"""Fused fine-tuning (pipeline/classify/fused_training.py): each member of a stacked run is its solo run.

With dropout off, a member's logits after 20 steps are within 1e-4 of the solo run's in float32, its
training loss agrees to 4 decimals and its dev metrics are the same; with dropout on, members draw their
own masks."""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import tempfile

import numpy as np
import pytest
import torch
from transformers import AutoConfig, AutoTokenizer, set_seed

from pipeline.classify import classify, encoding, fused_stacks, fused_training, tasks, training
from pipeline.classify.batching import ClassifyTrainer
from pipeline.classify.fused_dropout import call_keys
from pipeline.classify.fused_training import Member

STEPS = 20


def without_dropout(model, out):
    """A copy of ``model`` whose config turns dropout off (the condition under which fused equals solo)."""
    folder = shutil.copytree(model, out)
    config = AutoConfig.from_pretrained(folder)
    config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.0
    config.save_pretrained(folder)
    return str(folder)


def settings(task, batch_size=8, max_length=64, dropout=0.0, group_by_length=False):
    """The CLI's settings for ``task`` (the papers' defaults), capped at :data:`STEPS` steps, at ``dropout``
    (off: the condition under which a fused member equals its solo run)."""
    args = argparse.Namespace(
        batch_size=batch_size,
        lr=None,
        epochs=None,
        max_steps=STEPS,
        max_length=max_length,
        warmup_ratio=None,
        weight_decay=None,
        eval_batch_size=32,
        bf16=False,
        dropout=dropout,
        group_by_length=group_by_length,
    )
    return classify.settings_from(args, task)


def data(task, root, model, config, train_rows=64, dev_rows=40):
    tokenizer = AutoTokenizer.from_pretrained(model)
    splits, _ = classify.load_splits(task, root, 0.0, train_rows, allow_substitutes=True)

    def features(examples):
        return encoding.encode(task, tokenizer, examples, config.max_length, config.doc_stride)

    train = (splits["train"], features(splits["train"]))
    dev = splits["dev"][:dev_rows]
    return tokenizer, train, (dev, features(dev))


def solo(task, member, tokenizer, train, config, scratch):
    """A solo run as training.run_seed makes it, keeping the Trainer to read its logits."""
    set_seed(member.seed)
    model = training.load_model(task, member.model_path, config.dropout)
    trainer = ClassifyTrainer(  # as run_seed builds it
        model=model,
        args=training.training_arguments(training.Settings(**{**vars(config), "lr": member.lr}), member.seed, scratch),
        train_dataset=train[1],
        data_collator=training.collator(task, tokenizer),
        processing_class=tokenizer,
    )
    result = trainer.train()
    return trainer, result.training_loss


def outputs(task, trainer, features):
    """Every output of the head on ``features``, one row per feature. Multiple-choice and span scores are
    compared as log-probabilities (over options, over positions): the output layer's bias adds the same to
    every option or position, so its gradient is zero up to rounding, which Adam's normalised step turns
    into a drift that changes no probability and no prediction."""
    output = trainer.predict(features).predictions
    parts = [np.asarray(o).reshape(len(features), -1) for o in (output if isinstance(output, tuple) else [output])]
    if task.head in ("choice", "span"):
        parts = [torch.log_softmax(torch.from_numpy(part), dim=-1).numpy() for part in parts]
    return np.concatenate(parts, axis=1)


def check_exact(task_name, model, root, tmp_path, members_of, batch_size=8, max_length=64, group_by_length=False):
    task = tasks.TASKS[task_name]
    model = without_dropout(model, tmp_path / "model")
    config = settings(task, batch_size, max_length, group_by_length=group_by_length)
    tokenizer, train, (dev, dev_features) = data(task, root, model, config)
    members = members_of(model)
    fused_outputs = []
    with tempfile.TemporaryDirectory() as scratch:
        trainers, steps, losses, _ = fused_training.train_members(task, members, tokenizer, train, config, scratch)
        assert steps == STEPS
        for member, trainer, loss in zip(members, trainers, losses):
            alone, alone_loss = solo(task, member, tokenizer, train, config, scratch)
            fused_out, solo_out = outputs(task, trainer, dev_features), outputs(task, alone, dev_features)
            fused_outputs.append(fused_out)
            gap = float(np.abs(fused_out - solo_out).max())
            print(
                f"{task_name} seed {member.seed} lr {member.lr:g}: max |logit gap| {gap:.1e}, loss {loss:.6f} / {alone_loss:.6f}"
            )
            assert gap < 1e-4, (task_name, member)
            assert round(loss, 4) == round(alone_loss, 4), (task_name, member, loss, alone_loss)
            fused_predicted = training.predictions(task, trainer, dev_features, dev)
            fused_scores = training.score(task, dev, fused_predicted)
            solo_scores = training.score(task, dev, training.predictions(task, alone, dev_features, dev))
            headline = task.metrics[0]  # the tables print it with one decimal
            if task.head == "regression" and np.std(fused_predicted) < 1e-3:
                # 20 steps leave the tiny regressor at nearly one score for every pair, where a
                # correlation moves with gaps of 1e-7: the scores are compared above instead
                print(f"{task_name}: scores spread {np.std(fused_predicted):.1e}, correlation not compared")
                continue
            assert round(fused_scores[headline], 1) == round(solo_scores[headline], 1), (fused_scores, solo_scores)
    # members really differ: different seeds and rates give different runs
    for a in range(len(members)):
        for b in range(a + 1, len(members)):
            assert np.abs(fused_outputs[a] - fused_outputs[b]).max() > 1e-3, (members[a], members[b])


def test_single_sentence_members_equal_their_solo_runs(tiny_en, demo_root, tmp_path):
    check_exact(
        "sst2", tiny_en, demo_root, tmp_path, lambda m: [Member(0, 1e-3, m), Member(1, 1e-3, m), Member(0, 3e-3, m)]
    )


def test_length_grouped_members_equal_their_solo_runs(tiny_en, demo_root, tmp_path):
    # classify --group-by-length: each member's batches come from its own seeded length-grouped sampler
    # (pipeline/classify/batching.py), so a member sees its solo run's batches, in its solo run's order
    check_exact(
        "rte", tiny_en, demo_root, tmp_path, lambda m: [Member(0, 1e-3, m), Member(1, 2e-3, m)], group_by_length=True
    )


def test_pair_members_equal_their_solo_runs(tiny_en, demo_root, tmp_path):
    check_exact("rte", tiny_en, demo_root, tmp_path, lambda m: [Member(0, 1e-3, m), Member(2, 2e-3, m)])


def test_regression_members_equal_their_solo_runs(tiny_en_real, real_root, tmp_path):
    check_exact("stsb", tiny_en_real, real_root, tmp_path, lambda m: [Member(0, 1e-2, m), Member(1, 1e-2, m)])


def test_multiple_choice_members_equal_their_solo_runs(tiny_zh, real_root, tmp_path):
    check_exact("c3", tiny_zh, real_root, tmp_path, lambda m: [Member(0, 1e-3, m), Member(1, 2e-3, m)], batch_size=4)


def test_span_members_equal_their_solo_runs(tiny_zh, real_root, tmp_path):
    check_exact(
        "cmrc2018", tiny_zh, real_root, tmp_path, lambda m: [Member(0, 1e-3, m), Member(1, 2e-3, m)], max_length=256
    )


def test_minilm_members_equal_their_solo_runs(minilm, demo_root, tmp_path):
    """The real all-MiniLM-L6-v2 (6 layers, 384 wide) on the SST-2 fixture, two seeds and two rates."""
    from pipeline.models.spec import transformers_folder

    folder = transformers_folder(str(minilm))
    check_exact("sst2", folder, demo_root, tmp_path, lambda m: [Member(0, 1e-4, m), Member(1, 3e-5, m)])


def test_members_draw_their_own_dropout_masks(tiny_en):
    """With dropout on, the same weights and the same batch give each member different activations."""
    task = tasks.TASKS["sst2"]
    set_seed(0)
    models = [training.load_model(task, str(tiny_en), 0.1) for _ in range(4)]
    for model in models[1:]:
        model.load_state_dict(models[0].state_dict())
    stacked = fused_training.StackedModel(models, task.head)
    ids = torch.randint(5, 100, (8, 16))
    one = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": torch.zeros(8, dtype=torch.long)}
    keys = call_keys(torch.tensor([11, 12, 13, 14]), 0)  # four members' dropout keys at step 0
    _, logits = stacked.losses(fused_training.stack_batches([one] * 4, 0), keys)
    flat = logits.detach().reshape(4, -1)
    for a in range(4):
        for b in range(a + 1, 4):
            assert not torch.allclose(flat[a], flat[b]), (a, b)
    stacked.template.eval()  # without dropout, the same weights and batch give the same outputs
    _, logits = stacked.losses(fused_training.stack_batches([one] * 4, 0), keys)
    assert torch.allclose(logits[0], logits[3], atol=1e-6)


def test_one_member_fuses_as_a_stack_of_one(tiny_en):
    """A group of one trains through the fused path where the job fuses (issue 54 §4): nothing refuses it."""
    task = tasks.TASKS["sst2"]
    assert fused_stacks.unfusable(task, [Member(0, 1e-3, str(tiny_en))], settings(task)) is None


def test_classify_fuse_writes_each_seed_where_a_solo_job_does(cli, tiny_en, demo_root, tmp_path, caplog):
    """``classify --fuse 2 --seed-dirs``: three seeds, two stacked and one in a stack of one, each in its own
    folder with the files a solo job writes, the same dev predictions and the same training loss to 4 decimals
    (dropout off)."""
    import json

    model = without_dropout(tiny_en, tmp_path / "model")
    common = ("--model", model, "--task", "rte", "--data", demo_root, "--seeds", 3, "--seed-dirs")
    common += ("--max-steps", 6, "--batch-size", 8, "--eval-batch-size", 32, "--lr", "1e-3", "--dropout", 0)
    assert cli("classify", *common, "--out", tmp_path / "solo") == 0
    caplog.set_level("INFO")
    curves = ("--report-to", "tensorboard", "--tracking-dir", tmp_path / "curves")
    fused = ("--fuse", 2, "--resume-every", 2)
    assert cli("classify", *common, *fused, *curves, "--out", tmp_path / "fused") == 0
    assert not (tmp_path / "fused" / ".resume").exists()  # saves are dropped once the job is done
    assert "train as 2 stacked model(s)" in caplog.text
    assert sorted(p.name for p in (tmp_path / "curves").iterdir()) == ["seed-0", "seed-1", "seed-2"]
    for seed in (0, 1, 2):
        solo_dir, fused_dir = tmp_path / "solo" / f"seed{seed}", tmp_path / "fused" / f"seed{seed}"
        assert sorted(p.name for p in fused_dir.iterdir()) == sorted(p.name for p in solo_dir.iterdir())
        name = f"dev_predictions.seed{seed}.tsv"
        assert (fused_dir / name).read_text() == (solo_dir / name).read_text()
        solo_run, fused_run = (json.loads((d / "metrics.json").read_text()) for d in (solo_dir, fused_dir))
        solo_seed, fused_seed = solo_run["per_seed"][str(seed)], fused_run["per_seed"][str(seed)]
        assert round(fused_seed["train_loss"], 4) == round(solo_seed["train_loss"], 4)
        assert fused_seed["dev"] == solo_seed["dev"] and fused_seed["steps"] == solo_seed["steps"] == 6
        assert fused_run["provenance"]["params"]["fuse"] == 2  # the record says how it trained


def test_a_one_run_job_that_fuses_trains_as_a_stack_of_one_and_says_so(cli, tiny_en, demo_root, tmp_path, caplog):
    """Fusing is the job's (--fuse 4), not its group's: its one run trains through the fused path (issue 54 §4;
    tests/classify/test_fused_lone_run.py), and the log says so."""
    caplog.set_level("INFO")
    args = ("--model", tiny_en, "--task", "sst2", "--data", demo_root, "--seeds", 1, "--max-steps", 2)
    assert cli("classify", *args, "--fuse", 4, "--out", tmp_path / "out") == 0
    assert "--fuse 4: seeds [0] train as 1 stacked model(s)" in caplog.text
    assert "one by one" not in caplog.text
    assert (tmp_path / "out" / "metrics.json").is_file()


class Killed(Exception):
    """A kill between two saves, raised from inside fused training."""


def kill_at_step(patch, step: int) -> None:
    """Make fused training die when its learning-rate schedule reaches ``step`` (the schedule is asked once
    a step, before the update), as a killed job would between two saves."""
    schedule = fused_training.linear_warmup

    def dies(at, warmup, total):
        if at == step:
            raise Killed
        return schedule(at, warmup, total)

    patch.setattr(fused_training, "linear_warmup", dies)


def test_a_killed_fused_run_resumes_to_the_unbroken_run(tiny_en, demo_root, tmp_path, monkeypatch):
    """Dropout on: the run killed after step 12 and restarted from its save at step 10 ends with the same
    weights, to the bit, as the run never killed (same batches replayed, same random state)."""
    task = tasks.TASKS["sst2"]
    config = settings(task, dropout=0.1)
    tokenizer, train, (_, dev_features) = data(task, demo_root, str(tiny_en), config)
    members = [Member(0, 1e-3, str(tiny_en)), Member(1, 2e-3, str(tiny_en))]
    resume = fused_training.Resume(tmp_path / ".resume" / "fused.pt", 5)
    with tempfile.TemporaryDirectory() as scratch:
        unbroken, _, unbroken_losses, _ = fused_training.train_members(task, members, tokenizer, train, config, scratch)
        expected = [outputs(task, trainer, dev_features) for trainer in unbroken]
        schedule = fused_training.linear_warmup  # restored for the resumed run
        kill_at_step(monkeypatch, 12)
        with pytest.raises(Killed):
            fused_training.train_members(task, members, tokenizer, train, config, scratch, resume=resume)
        assert torch.load(resume.path, weights_only=False)["step"] == 10
        monkeypatch.setattr(fused_training, "linear_warmup", schedule)
        resumed, _, resumed_losses, _ = fused_training.train_members(
            task, members, tokenizer, train, config, scratch, resume=resume
        )
        for trainer, want in zip(resumed, expected):
            assert np.array_equal(outputs(task, trainer, dev_features), want)
        assert resumed_losses == unbroken_losses
    assert not resume.path.parent.exists()  # the save is gone once the run is done


def test_with_dropout_five_fused_seeds_agree_with_five_solo_seeds_within_their_spread(tiny_en, demo_root):
    """Dropout on (0.1), so a member's masks are not its solo run's: over 5 seeds the fused runs' dev
    accuracy has the solo runs' mean within the larger of the two seed spreads (issue 41 §2, Independent)."""
    task = tasks.TASKS["sst2"]
    config = dataclasses.replace(settings(task, dropout=0.1), max_steps=80)
    tokenizer, train, (dev, dev_features) = data(task, demo_root, str(tiny_en), config, train_rows=0, dev_rows=200)
    members = [Member(seed, 1e-2, str(tiny_en)) for seed in range(5)]
    with tempfile.TemporaryDirectory() as scratch:
        trainers, _, _, _ = fused_training.train_members(task, members, tokenizer, train, config, scratch)
        fused = [training.score(task, dev, training.predictions(task, t, dev_features, dev))["acc"] for t in trainers]
        solo_runs = [solo(task, member, tokenizer, train, config, scratch)[0] for member in members]
        alone = [training.score(task, dev, training.predictions(task, t, dev_features, dev))["acc"] for t in solo_runs]
    print(f"dev accuracy, fused {fused}, solo {alone}")
    spread = max(np.std(fused), np.std(alone))
    assert abs(np.mean(fused) - np.mean(alone)) <= spread
    assert fused != alone  # the masks differ, so the runs do


def test_members_from_two_checkpoints_of_one_architecture_equal_their_solo_runs(tiny_en, demo_root, tmp_path):
    """Starting checkpoints of one architecture fuse (issue 41 §2: paper-en's BERT-base variants); another
    architecture does not, and says why."""
    from transformers import AutoModelForMaskedLM

    other = tmp_path / "other"
    shutil.copytree(tiny_en, other)
    model = AutoModelForMaskedLM.from_pretrained(other)
    torch.manual_seed(1)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(other)
    first = without_dropout(tiny_en, tmp_path / "first")
    second = without_dropout(other, tmp_path / "second")
    check_exact("rte", first, demo_root, tmp_path / "run", lambda _: [Member(0, 1e-3, first), Member(0, 1e-3, second)])
    wider = tmp_path / "wider"
    shutil.copytree(tiny_en, wider)
    config = AutoConfig.from_pretrained(wider)
    config.intermediate_size *= 2
    config.save_pretrained(wider)
    task = tasks.TASKS["rte"]
    members = [Member(0, 1e-3, str(tiny_en)), Member(0, 1e-3, str(wider))]
    assert fused_stacks.unfusable(task, members, settings(task)) == "the models' configs differ (intermediate_size)"


def perturbed_copy(model, out, seed=1):
    """Another checkpoint of ``model``'s architecture and tokenizer: its weights moved by seeded noise."""
    from transformers import AutoModelForMaskedLM

    shutil.copytree(model, out)
    weights = AutoModelForMaskedLM.from_pretrained(out)
    torch.manual_seed(seed)
    with torch.no_grad():
        for parameter in weights.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    weights.save_pretrained(out)
    return out


def test_a_job_of_two_models_writes_each_models_seeds_as_its_own_job_does(cli, tiny_en, demo_root, tmp_path, caplog):
    """``classify --model A --model B --fuse 3``: 2 models x 2 seeds train as stacked groups of 2 (balanced,
    model-major: A's seeds, then B's), and each model's seed folders hold what a one-model job of that
    model writes: the same files, predictions, dev metrics and training loss (dropout off), and a
    metrics.json naming that model only, with that job's own --model, --name and --out."""
    import json

    first = without_dropout(tiny_en, tmp_path / "first")
    second = without_dropout(perturbed_copy(tiny_en, tmp_path / "noisy"), tmp_path / "second")
    common = ("--task", "rte", "--data", demo_root, "--seeds", 2, "--seed-dirs", "--max-steps", 6)
    common += ("--batch-size", 8, "--eval-batch-size", 32, "--lr", "1e-3", "--fuse", 3, "--dropout", 0)
    for model, name in ((first, "first"), (second, "second")):
        assert cli("classify", *common, "--model", model, "--name", name, "--out", tmp_path / "solo" / name) == 0
    caplog.set_level("INFO")
    both = ("--model", first, "--name", "first", "--out", tmp_path / "fused" / "first")
    both += ("--model", second, "--name", "second", "--out", tmp_path / "fused" / "second")
    curves = ("--report-to", "tensorboard", "--tracking-dir", tmp_path / "curves")
    assert cli("classify", *common, *both, *curves, "--resume-every", 2) == 0
    assert "2 models x seeds [0, 1] train as 2 stacked model(s) of 2, 2 runs" in caplog.text
    assert "fused: first seed 0, first seed 1" in caplog.text and "fused: second seed 0, second seed 1" in caplog.text
    assert not (tmp_path / "fused" / "first" / ".resume").exists()
    assert sorted(str(p.relative_to(tmp_path / "curves")) for p in (tmp_path / "curves").glob("*/*")) == [
        "first/seed-0",
        "first/seed-1",
        "second/seed-0",
        "second/seed-1",
    ]
    for name, model in (("first", first), ("second", second)):
        for seed in (0, 1):
            solo_dir, fused_dir = (tmp_path / kind / name / f"seed{seed}" for kind in ("solo", "fused"))
            assert sorted(p.name for p in fused_dir.iterdir()) == sorted(p.name for p in solo_dir.iterdir())
            dev = f"dev_predictions.seed{seed}.tsv"
            assert (fused_dir / dev).read_text() == (solo_dir / dev).read_text()
            solo_run, fused_run = (json.loads((d / "metrics.json").read_text()) for d in (solo_dir, fused_dir))
            assert fused_run["model"] == solo_run["model"] == {"name": name, "path": model, "spec": model}
            assert fused_run["provenance"]["checkpoint"] == solo_run["provenance"]["checkpoint"]
            fused_params, solo_params = fused_run["provenance"]["params"], solo_run["provenance"]["params"]
            assert {**fused_params, "out": None, "resume_every": 0} == {**solo_params, "out": None}
            assert fused_run["provenance"]["params"]["out"] == str(tmp_path / "fused" / name / f"seed{seed}")
            solo_seed, fused_seed = solo_run["per_seed"][str(seed)], fused_run["per_seed"][str(seed)]
            assert round(fused_seed["train_loss"], 4) == round(solo_seed["train_loss"], 4)
            assert fused_seed["dev"] == solo_seed["dev"] and fused_seed["steps"] == 6
    first_run = json.loads((tmp_path / "fused" / "first" / "seed0" / "metrics.json").read_text())
    second_run = json.loads((tmp_path / "fused" / "second" / "seed0" / "metrics.json").read_text())
    assert first_run["provenance"]["checkpoint"] != second_run["provenance"]["checkpoint"]


def test_a_one_model_job_writes_the_same_files_as_before(cli, tiny_en, demo_root, tmp_path):
    """One --model, --name and --out: metrics.json records each as one value, as before they could repeat."""
    import json

    args = ("--model", tiny_en, "--task", "sst2", "--data", demo_root, "--seeds", 1, "--max-steps", 2)
    assert cli("classify", *args, "--name", "tiny", "--out", tmp_path / "out") == 0
    record = json.loads((tmp_path / "out" / "metrics.json").read_text())
    params = record["provenance"]["params"]
    assert (params["model"], params["name"], params["out"]) == (str(tiny_en), "tiny", str(tmp_path / "out"))
    assert record["model"] == {"name": "tiny", "path": str(tiny_en), "spec": str(tiny_en)}


def test_a_killed_job_of_two_models_resumes_each_group_from_its_own_save(
    cli, tiny_en, demo_root, tmp_path, monkeypatch
):
    """Two models x two seeds, --fuse 2: each group keeps its own save (named by its model and seeds) under
    the first --out; the job killed in its second group goes on from that group's save without training
    the first group again (its outcomes were kept when it finished), and ends with the files of the job
    never killed."""
    first = str(tiny_en)
    second = str(perturbed_copy(tiny_en, tmp_path / "second"))
    common = ("--task", "sst2", "--data", demo_root, "--seeds", 2, "--seed-dirs", "--max-steps", 8)
    common += ("--batch-size", 8, "--lr", "1e-3", "--fuse", 2, "--resume-every", 3, "--report-to", "none")

    def job(out):
        return (*common, "--model", first, "--out", out / "a", "--model", second, "--out", out / "b")

    assert cli("classify", *job(tmp_path / "unbroken")) == 0
    schedule = fused_training.linear_warmup
    calls = {"n": 0}

    def dies_in_the_second_group(step, warmup, total):
        calls["n"] += 1
        if calls["n"] == 8 + 5:  # the first group's 8 steps, then step 5 of the second
            raise Killed
        return schedule(step, warmup, total)

    monkeypatch.setattr(fused_training, "linear_warmup", dies_in_the_second_group)
    with pytest.raises(Killed):
        cli("classify", *job(tmp_path / "killed"))
    found = sorted(p.name for p in (tmp_path / "killed" / "a" / ".resume").iterdir())
    saves = [name for name in found if not name.endswith(".digest")]  # each save's digest beside it (issue 55 §2)
    # the first group finished: its state dropped, its outcomes kept; the second's state at its last save
    assert saves == ["fused-model0-seed0-to-model0-seed1.done.json", "fused-model1-seed0-to-model1-seed1.pt"]
    assert found == sorted([*saves, *(name + ".digest" for name in saves)])
    assert torch.load(tmp_path / "killed" / "a" / ".resume" / saves[1], weights_only=False)["step"] == 3
    assert not (tmp_path / "killed" / "b").exists()  # nothing written before every model is done
    rerun = {"n": 0}

    def counted(step, warmup, total):
        rerun["n"] += 1
        return schedule(step, warmup, total)

    monkeypatch.setattr(fused_training, "linear_warmup", counted)
    assert cli("classify", *job(tmp_path / "killed")) == 0
    assert rerun["n"] == 8 - 3  # only the second group's steps after its save
    assert not (tmp_path / "killed" / "a" / ".resume").exists()
    for model in ("a", "b"):
        for seed in (0, 1):
            name = f"{model}/seed{seed}/dev_predictions.seed{seed}.tsv"
            assert (tmp_path / "killed" / name).read_text() == (tmp_path / "unbroken" / name).read_text()


def test_models_of_two_configs_in_one_job_train_in_stacks_of_their_own_and_say_why(
    cli, tiny_en, demo_root, tmp_path, caplog
):
    """One tokenizer, two architectures (a wider feed-forward layer): the job cannot stack them, so each
    model's seeds train in stacks of their own (here one seed each: stacks of one), the log names the reason,
    and each model still gets its files."""
    import json

    from transformers import AutoModelForMaskedLM, BertForMaskedLM

    wider = shutil.copytree(tiny_en, tmp_path / "wider")
    config = AutoConfig.from_pretrained(wider)
    config.intermediate_size *= 2
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(wider)
    assert AutoModelForMaskedLM.from_pretrained(wider).config.intermediate_size == config.intermediate_size
    caplog.set_level("INFO")
    args = ("--task", "sst2", "--data", demo_root, "--seeds", 1, "--max-steps", 2, "--fuse", 4)
    both = ("--model", tiny_en, "--out", tmp_path / "a", "--model", wider, "--out", tmp_path / "b")
    assert cli("classify", *args, *both, "--report-to", "none") == 0
    assert "the models train in 2 stacks keyed on their configs" in caplog.text
    assert f"{wider} (differs in intermediate_size)" in caplog.text
    for out, model in ((tmp_path / "a", tiny_en), (tmp_path / "b", wider)):
        assert json.loads((out / "metrics.json").read_text())["model"]["path"] == str(model)

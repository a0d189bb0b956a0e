"""Stage ``tiny-model``: a tiny random BERT with a WordPiece tokenizer trained on the corpus.

For the demo and the tests (docs/design.md "Models and compute"; docs/method.md §3 "a tiny random model for
tests"): the WordPiece vocabulary is learned from the ``text`` column of the given sentence
(or marked) Parquet files (:func:`learn_vocabulary`; BERT's lower-casing normaliser and
pre-tokeniser from the ``tokenizers`` package, CJK characters one per token), and a randomly
initialised ``BertForMaskedLM`` of the requested size is saved beside it (``save_pretrained``). Both load with
``AutoModelForMaskedLM`` / ``AutoTokenizer``. Same input and seed → same vocabulary and weights.
"""

from __future__ import annotations

import argparse
import logging
from collections import Counter
from pathlib import Path

import torch
from tokenizers import BertWordPieceTokenizer
from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

from pipeline import arguments, contracts, languages, provenance
from pipeline.atomic import json_text
from pipeline.errors import InputError
from pipeline.models.directory import AtomicDir, check_output_dir, vocab_sha256
from pipeline.models.tokenizer_check import MIN_MAX_LENGTH
from pipeline.shards import input_files

log = logging.getLogger("pipeline.tiny-model")

MAX_PIECE_CHARS = 24  # longer words are spelled with shorter pieces
MAX_PARAMETERS = 350_000_000  # BERT-large's size: more is not a tiny model, and needs > 1.4 GB to build

SPECIAL_TOKENS = {
    "pad_token": "[PAD]",
    "unk_token": "[UNK]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "mask_token": "[MASK]",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sentences",
        required=True,
        nargs="+",
        type=Path,
        help="Parquet files (or directories) with a `text` column: sentences or marked",
    )
    parser.add_argument("--lang", required=True, help="language: " + ", ".join(languages.SUPPORTED))
    parser.add_argument("--out", required=True, type=Path, help="output model directory")
    parser.add_argument("--vocab-size", type=arguments.VOCABULARY_SIZE, default=4000)
    parser.add_argument(
        "--min-frequency", type=arguments.FREQUENCY, default=2, help="rarest sub-word kept in the vocabulary"
    )
    parser.add_argument("--hidden", type=arguments.HIDDEN, default=64, help="hidden size")
    parser.add_argument("--layers", type=arguments.LAYERS, default=2)
    parser.add_argument("--heads", type=arguments.HEADS, default=2)
    parser.add_argument(
        "--max-length",
        type=arguments.integer(MIN_MAX_LENGTH, arguments.MAX_LENGTH),
        default=128,
        help="position embeddings (longest input)",
    )
    parser.add_argument("--seed", type=arguments.SEED, default=0)


def iter_texts(files: list[Path]):
    for path in files:
        for rows in contracts.iter_rows(path, contracts.SENTENCES, columns=["text"]):
            for row in rows:
                yield row["text"]


def learn_vocabulary(texts, vocab_size: int, min_frequency: int) -> list[str]:
    """A WordPiece vocabulary from word counts: the alphabet (every character that starts a word,
    and ``##c`` for every one that continues one; it may exceed ``vocab_size``), then the most
    useful word prefixes and ``##`` suffixes, scored by frequency × length, ties by the string.

    Not the BPE-style merges of the ``tokenizers`` trainer: that trainer breaks ties in a
    per-process hash order, so the same corpus gave different vocabularies from run to run.
    The normaliser and pre-tokeniser are BERT's (lower-casing, one token per CJK character).
    """
    shell = BertWordPieceTokenizer(lowercase=True, handle_chinese_chars=True)._tokenizer
    words: Counter = Counter()
    for text in texts:
        normalized = shell.normalizer.normalize_str(text)
        words.update(word for word, _ in shell.pre_tokenizer.pre_tokenize_str(normalized))
    initials = sorted({word[0] for word in words})
    continuations = sorted({"##" + char for word in words for char in word[1:]})
    pieces: Counter = Counter()
    for word, count in words.items():
        if count < min_frequency or len(word) > MAX_PIECE_CHARS:
            continue
        for k in range(2, len(word) + 1):
            pieces[word[:k]] += count
        for k in range(1, len(word) - 1):
            pieces["##" + word[k:]] += count
    specials = list(SPECIAL_TOKENS.values())
    vocab = specials + initials + continuations  # the alphabet: every word can be spelled
    ranked = sorted(
        ((count * len(piece.removeprefix("##")), piece) for piece, count in pieces.items() if count >= min_frequency),
        key=lambda scored: (-scored[0], scored[1]),
    )
    taken = set(vocab)
    for _, piece in ranked:
        if len(vocab) >= vocab_size:
            break
        if piece not in taken:
            vocab.append(piece)
            taken.add(piece)
    return vocab


def train_tokenizer(files: list[Path], vocab_size: int, min_frequency: int, max_length: int) -> BertTokenizerFast:
    vocab = learn_vocabulary(iter_texts(files), vocab_size, min_frequency)
    wordpiece = BertWordPieceTokenizer(
        {token: i for i, token in enumerate(vocab)}, lowercase=True, handle_chinese_chars=True
    )
    return BertTokenizerFast(
        tokenizer_object=wordpiece._tokenizer, do_lower_case=True, model_max_length=max_length, **SPECIAL_TOKENS
    )


def tiny_bert(tokenizer, hidden: int, layers: int, heads: int, max_length: int, seed: int) -> BertForMaskedLM:
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        max_position_embeddings=max_length,
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    return BertForMaskedLM(config)


def parameter_count(vocabulary: int, hidden: int, layers: int, max_length: int) -> int:
    """The parameters of ``BertForMaskedLM`` with these sizes (intermediate size 4 × hidden): embeddings
    (words, positions, 2 segments, LayerNorm), per layer the attention's four h×h maps and the 4h
    feed-forward in and out with their biases and two LayerNorms, the MLM head (dense, LayerNorm, a
    decoder tied to the word embeddings, its bias)."""
    embeddings = (vocabulary + max_length + 2) * hidden + 2 * hidden
    layer = 4 * (hidden * hidden + hidden) + 2 * (4 * hidden * hidden) + 4 * hidden + hidden + 4 * hidden
    head = hidden * hidden + hidden + 2 * hidden + vocabulary
    return embeddings + layers * layer + head


def check_sizes(args: argparse.Namespace, vocabulary: int = 0) -> None:
    """Sizes that do not fit together (each alone is typed by its flag), refused before any work: --hidden
    a multiple of --heads, and the model no larger than :data:`MAX_PARAMETERS` (checked again once the
    vocabulary is learned), so a huge --hidden or --layers is one line, not a failed allocation."""
    if args.hidden % args.heads:
        raise InputError("--hidden", f"{args.hidden} is not a multiple of --heads {args.heads}")
    count = parameter_count(vocabulary, args.hidden, args.layers, args.max_length)
    if count > MAX_PARAMETERS:
        raise InputError(
            "--hidden",
            f"--hidden {args.hidden} with --layers {args.layers}"
            + (f" and a vocabulary of {vocabulary:,}" if vocabulary else "")
            + f" makes a model of {count:,} parameters; tiny-model builds at most {MAX_PARAMETERS:,}"
            " (BERT-large's size): give a smaller --hidden or --layers",
        )


def check_vocabulary(tokenizer, files: list[Path]) -> None:
    """A vocabulary of the special tokens alone means the input held no text (zero sentences, or only
    empty ones): such a model could only ever see [UNK], so it is refused, naming the input."""
    if len(tokenizer) <= len(SPECIAL_TOKENS):
        named = ", ".join(str(path) for path in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        raise InputError(
            named or "--sentences",
            "holds no text to learn a vocabulary from (no sentence, or only empty ones): no model written",
        )


def run(args: argparse.Namespace) -> None:
    languages.check(args.lang)
    check_sizes(args)
    check_output_dir(args.out)  # before any work: --out must be new, empty or a model directory of ours
    files = input_files(args.sentences, unique_names=False)
    for path in files:
        contracts.check_schema(path, contracts.SENTENCES, columns=["text"])
    tokenizer = train_tokenizer(files, args.vocab_size, args.min_frequency, args.max_length)
    check_vocabulary(tokenizer, files)
    check_sizes(args, len(tokenizer))
    model = tiny_bert(tokenizer, args.hidden, args.layers, args.heads, args.max_length, args.seed)
    params = {k: v for k, v in vars(args).items() if k not in ("sentences", "out", "run", "verbose", "stage")}
    record = provenance.make(
        "tiny-model", params, inputs=[provenance.file_fingerprint(p) for p in files], seed=args.seed
    )
    record["vocab_sha256"] = vocab_sha256(tokenizer)
    with AtomicDir(args.out) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "tiny_model.json").write_text(json_text({"provenance": record}))
    log.info("tiny BERT (%s parameters, vocabulary %d) → %s", f"{model.num_parameters():,}", len(tokenizer), args.out)

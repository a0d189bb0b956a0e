"""Stage ``tiny-model``: a tiny random BERT with a WordPiece tokenizer trained on the corpus.

For the demo and the tests (docs/design.md "Models and compute"; docs/method.md §3 "a tiny random model for
tests"): the WordPiece vocabulary is learned from the ``text`` column of the given sentence
(or marked) Parquet files (:func:`learn_vocabulary`; BERT's lower-casing normaliser and
pre-tokeniser from the ``tokenizers`` package, CJK characters one per token), and a randomly
initialised ``BertForMaskedLM`` of the requested size is saved beside it (``save_pretrained``). Both load with
``AutoModelForMaskedLM`` / ``AutoTokenizer``. Same input and seed → same vocabulary and weights.

``--family albert`` or ``electra`` builds that family instead, as the released checkpoints are built
(pipeline/rehearsal/tiny_hub.py builds its stand-ins the same way): ``AlbertForPreTraining`` (one shared
layer, factorised embeddings of ``--embedding-size``, the sentence-order head), or an
``ElectraForPreTraining`` discriminator with its generator (``ElectraForMaskedLM``) in ``OUT/generator/``,
where ``pretrain`` looks for it (pipeline/models/loading.py ``generator_for``). ``--architecture NAME``
takes every size of a released checkpoint from the budget's table (pipeline/budget/cost.py
``ARCHITECTURES``: layers, hidden, feed-forward, embedding and vocabulary sizes; 64-wide heads, as all of
them have), so that the GPU acceptance run (python -m pipeline gpu-acceptance) trains the papers' real
architectures with random weights: the learned vocabulary fills the first rows of the embedding and the
rest are never used, but every matrix, and so the FLOPs and the memory of a step, are the real model's.
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
from pipeline.backbone_family import family_kind, shares_layers
from pipeline.budget.cost import ARCHITECTURES, Architecture
from pipeline.budget.memory import stored_parameters
from pipeline.errors import InputError
from pipeline.models.directory import AtomicDir, check_output_dir, vocab_sha256
from pipeline.models.tokenizer_check import MIN_MAX_LENGTH
from pipeline.shards import input_files

log = logging.getLogger("pipeline.tiny-model")

MAX_PIECE_CHARS = 24  # longer words are spelled with shorter pieces
MAX_PARAMETERS = 350_000_000  # BERT-large's size: more is not a tiny model, and needs > 1.4 GB to build
FAMILIES = ("bert", "albert", "electra")
# the released checkpoints --architecture builds at their real size: the budget's table, of these families; the
# Chinese BERTs (bert-base-chinese, chinese-bert-wwm-ext: BERT-base with a 21,128-row vocabulary) are BERTs
FAMILY_OF = {"chinese": "bert"}
NAMED = {
    name: arch
    for name, arch in ARCHITECTURES.items()
    if FAMILY_OF.get(family_kind(name), family_kind(name)) in FAMILIES and "generator" not in name
}
HEAD_WIDTH = 64  # every released BERT, ALBERT and ELECTRA has 64-wide attention heads (hidden / heads)

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
    parser.add_argument("--family", choices=FAMILIES, default="bert", help="architecture family (module docstring)")
    parser.add_argument(
        "--embedding-size", type=arguments.HIDDEN, help="ALBERT's factorised embedding size (default min(128, hidden))"
    )
    parser.add_argument(
        "--architecture",
        choices=sorted(NAMED),
        help="a released checkpoint's family and sizes, random weights (sets --family, --hidden, --layers, --heads)",
    )


def resolve_architecture(args: argparse.Namespace) -> None:
    """--architecture NAME: its family and every size from the budget's table (the module docstring)."""
    if not args.architecture:
        return
    arch = NAMED[args.architecture]
    args.family = FAMILY_OF.get(family_kind(args.architecture), family_kind(args.architecture))
    args.layers, args.hidden, args.heads = arch.layers, arch.hidden, arch.hidden // HEAD_WIDTH
    args.embedding_size = arch.embedding


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


def family_model(tokenizer, args: argparse.Namespace):
    """``(model, generator or None)`` of ``args.family`` at the sizes of ``args`` (the module docstring)."""
    if args.family == "bert" and not args.architecture:
        return tiny_bert(tokenizer, args.hidden, args.layers, args.heads, args.max_length, args.seed), None
    from transformers import (
        AlbertConfig,
        AlbertForPreTraining,
        ElectraConfig,
        ElectraForMaskedLM,
        ElectraForPreTraining,
    )

    arch = NAMED.get(args.architecture)
    sizes = {
        "vocab_size": max(len(tokenizer), arch.vocab if arch else 0),
        "hidden_size": args.hidden,
        "num_hidden_layers": args.layers,
        "num_attention_heads": args.heads,
        "intermediate_size": arch.intermediate if arch else 4 * args.hidden,
        "max_position_embeddings": args.max_length,
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "pad_token_id": tokenizer.pad_token_id,
    }
    torch.manual_seed(args.seed)
    if args.family == "bert":
        return BertForMaskedLM(BertConfig(**sizes)), None
    if args.family == "albert":
        embedding = args.embedding_size or min(128, args.hidden)
        return AlbertForPreTraining(AlbertConfig(embedding_size=embedding, classifier_dropout_prob=0.1, **sizes)), None
    # ELECTRA §3.2: a generator a quarter to a half the discriminator's width (the released base pair: 256 of
    # 768, 4 heads, feed-forward 1024) over the discriminator's embeddings, which the two share
    generator_hidden = (
        max(args.hidden // 3 // HEAD_WIDTH * HEAD_WIDTH, HEAD_WIDTH) if arch else max(args.hidden // 2, 1)
    )
    generator = {
        "hidden_size": generator_hidden,
        "num_attention_heads": max(generator_hidden // HEAD_WIDTH, 1),
        "intermediate_size": 4 * generator_hidden,
    }
    discriminator = ElectraForPreTraining(ElectraConfig(embedding_size=args.hidden, **sizes))
    return discriminator, ElectraForMaskedLM(ElectraConfig(embedding_size=args.hidden, **{**sizes, **generator}))


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
    if args.architecture:  # a released checkpoint's size, at most BERT-large's
        return
    count = parameter_count(vocabulary, args.hidden, args.layers, args.max_length)
    if args.family == "albert":  # one shared layer (Lan et al. 2020, §3.1)
        embedding = args.embedding_size or min(128, args.hidden)
        arch = Architecture(args.layers, args.hidden, 4 * args.hidden, vocabulary, embedding)
        count = stored_parameters(arch, shared_layers=shares_layers("albert"))
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
    resolve_architecture(args)
    check_sizes(args)
    check_output_dir(args.out)  # before any work: --out must be new, empty or a model directory of ours
    files = input_files(args.sentences, unique_names=False)
    for path in files:
        contracts.check_schema(path, contracts.SENTENCES, columns=["text"])
    tokenizer = train_tokenizer(files, args.vocab_size, args.min_frequency, args.max_length)
    check_vocabulary(tokenizer, files)
    check_sizes(args, len(tokenizer))
    model, generator = family_model(tokenizer, args)
    params = {k: v for k, v in vars(args).items() if k not in ("sentences", "out", "run", "verbose", "stage")}
    record = provenance.make(
        "tiny-model", params, inputs=[provenance.file_fingerprint(p) for p in files], seed=args.seed
    )
    record["vocab_sha256"] = vocab_sha256(tokenizer)
    with AtomicDir(args.out) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if generator is not None:  # where pretrain finds an ELECTRA discriminator's generator
            generator.save_pretrained(tmp / "generator")
            tokenizer.save_pretrained(tmp / "generator")
        (tmp / "tiny_model.json").write_text(json_text({"provenance": record}))
    what = args.architecture or f"tiny {args.family}"
    log.info(
        "random %s (%s parameters, vocabulary %d) → %s", what, f"{model.num_parameters():,}", len(tokenizer), args.out
    )

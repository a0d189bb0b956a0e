"""Tiny random stand-ins of the paper configs' hub models: one folder per pinned commit, as the hub serves it.

:func:`build_snapshot` writes, for ``hub:ORG/NAME@COMMIT``, a randomly initialised model of the same
architecture family as the real checkpoint into ``<root>/ORG/NAME/COMMIT/``, with a tokenizer whose
vocabulary is learned from the sentences given. :mod:`pipeline.rehearsal.hub_server` serves such a root
as a Hugging Face hub, so the workflow's ``download_model`` rule fetches these folders for real.

The family comes from NAME (lower-cased), first match wins:

1. NAME starts with ``albert`` → **ALBERT**: ``AlbertForPreTraining`` (the MLM head and the sentence-order
   head ``sop_classifier``), embedding size 16; a SentencePiece-style Unigram tokenizer
   (``AlbertTokenizer``: ``tokenizer.json`` alone, no ``spiece.model``) with ALBERT's special tokens
   ``<pad>`` ``<unk>`` ``[CLS]`` ``[SEP]`` ``[MASK]`` (ids 0-4, as albert-base-v2), lower-casing.
2. NAME contains ``chinese`` → **Chinese BERT** (bert-base-chinese, hfl/chinese-bert-wwm-ext):
   ``BertForPreTraining`` with a character-level WordPiece vocabulary: every character of the sentences
   (each CJK character a token of its own, as BERT's ``tokenize_chinese_chars`` splits them) and ``##c``
   for each non-CJK character that continues a word, lower-casing as bert-base-chinese does.
3. NAME contains ``bert`` → **English BERT**: ``BertForPreTraining`` (the MLM head and the next-sentence
   head ``cls.seq_relationship``, as the real checkpoints have: the NSP objective starts from it), a
   WordPiece vocabulary of about 2,000 learned from the sentences; lower-casing iff NAME contains
   ``uncased``.
4. Anything else is refused (:class:`~pipeline.errors.InputError`).

Independently of the family, a NAME containing ``large`` gets the :data:`LARGE` shape (4 layers, hidden
48, 4 heads) and any other the :data:`BASE` one (2 layers, hidden 32, 2 heads), so base and large differ
in shape as the real ones do; every model has 512 positions (the paper configs pack 512-token inputs).

The folder holds ``config.json``, ``model.safetensors`` (safetensors only), ``tokenizer.json``,
``tokenizer_config.json``, ``special_tokens_map.json`` and, for BERT, ``vocab.txt``; nothing else. The
same spec, sentences and seed give byte-identical files: the vocabularies are learned by counting, not
by the ``tokenizers`` trainers (whose ties and float sums vary from process to process), ties broken by
the string, and the weights are drawn after ``torch.manual_seed(seed)``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import InputError
from pipeline.models.spec import parse_hub

MAX_LENGTH = 512  # positions: the paper configs pack 512-token inputs
WORDPIECE_SIZE = 2000
UNIGRAM_SIZE = 2000
MIN_FREQUENCY = 2  # rarer words add no piece beyond their letters
MAX_PIECE_CHARS = 16  # longer words are spelled with shorter pieces
ALBERT_EMBEDDING = 16
BERT_SPECIALS = {
    "pad_token": "[PAD]",
    "unk_token": "[UNK]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "mask_token": "[MASK]",
}
# ALBERT's, in albert-base-v2's order (ids 0-4); AlbertTokenizer finds <unk> at id 1
ALBERT_SPECIALS = {
    "pad_token": "<pad>",
    "unk_token": "<unk>",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "mask_token": "[MASK]",
}


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    intermediate: int


BASE = Shape(hidden=32, layers=2, heads=2, intermediate=64)
LARGE = Shape(hidden=48, layers=4, heads=4, intermediate=96)


@dataclass(frozen=True)
class Family:
    """What stands in for a hub model: ``kind`` (``albert``, ``chinese`` or ``bert``), its shape and casing."""

    kind: str
    shape: Shape
    lowercase: bool


def family_of(spec: str) -> Family:
    """The stand-in for ``hub:ORG/NAME@COMMIT``, chosen from NAME by the rule of the module's docstring."""
    repo_id, _ = parse_hub(spec)
    name = repo_id.rpartition("/")[2].lower()
    shape = LARGE if "large" in name else BASE
    if name.startswith("albert"):
        return Family("albert", shape, lowercase=True)
    if "chinese" in name:
        return Family("chinese", shape, lowercase=True)
    if "bert" in name:
        return Family("bert", shape, lowercase="uncased" in name)
    raise InputError(
        spec, f"no tiny stand-in for {name!r}: the rehearsal knows BERT (English, Chinese, base or large) and ALBERT"
    )


# ------------------------------------------------------------------ vocabularies
def _words(texts: Iterable[str], normalizer, pre_tokenizer) -> Counter:
    words: Counter = Counter()
    for text in texts:
        words.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    return words


def _ranked(pieces: Counter, taken: set[str], room: int) -> list[str]:
    """The ``room`` most useful new pieces: frequency × length, ties by the string."""
    scored = sorted(
        ((count * len(piece.removeprefix("##")), piece) for piece, count in pieces.items() if count >= MIN_FREQUENCY),
        key=lambda item: (-item[0], item[1]),
    )
    return [piece for _, piece in scored if piece not in taken][: max(room, 0)]


def wordpiece_vocabulary(texts: Iterable[str], size: int, lowercase: bool) -> list[str]:
    """BERT's special tokens, the alphabet (every character that starts a word, ``##c`` for every one that
    continues one: every word can be spelled), then the most useful word prefixes and ``##`` suffixes up to
    ``size``. Words are cut as BERT cuts them (its normaliser, punctuation split, one word per CJK character)."""
    from tokenizers import BertWordPieceTokenizer

    shell = BertWordPieceTokenizer(lowercase=lowercase, handle_chinese_chars=True)._tokenizer
    words = _words(texts, shell.normalizer, shell.pre_tokenizer)
    vocab = list(BERT_SPECIALS.values())
    vocab += sorted({word[0] for word in words}) + sorted({"##" + char for word in words for char in word[1:]})
    pieces: Counter = Counter()
    for word, count in words.items():
        if len(word) <= MAX_PIECE_CHARS:
            for k in range(2, len(word) + 1):
                pieces[word[:k]] += count
            for k in range(1, len(word) - 1):
                pieces["##" + word[k:]] += count
    return vocab + _ranked(pieces, set(vocab), size - len(vocab))


def unigram_vocabulary(texts: Iterable[str], size: int) -> list[tuple[str, float]]:
    """A SentencePiece-style Unigram vocabulary: ALBERT's special tokens (score 0), then every character
    and the most useful substrings of the words (``▁``-prefixed, as ALBERT's normaliser and Metaspace
    pre-tokeniser cut them) up to ``size``, each scored by the log of its share of the counts (rounded,
    so the file does not depend on float summation order), best first."""
    from transformers import AlbertTokenizer

    shell = AlbertTokenizer()._tokenizer
    words = _words(texts, shell.normalizer, shell.pre_tokenizer)
    chars: Counter = Counter()
    pieces: Counter = Counter()
    for word, count in words.items():
        for char in word:
            chars[char] += count
        if len(word) <= 4 * MAX_PIECE_CHARS:
            for start in range(len(word)):
                for end in range(start + 2, min(len(word), start + MAX_PIECE_CHARS) + 1):
                    pieces[word[start:end]] += count
    specials = list(ALBERT_SPECIALS.values())
    chosen = {char: chars[char] for char in chars if char not in specials}
    for piece in _ranked(pieces, set(chosen) | set(specials), size - len(specials) - len(chosen)):
        chosen[piece] = pieces[piece]
    total = sum(chosen.values())
    scored = sorted(((round(math.log(count / total), 4), piece) for piece, count in chosen.items()), key=_best_first)
    return [(token, 0.0) for token in specials] + [(piece, score) for score, piece in scored]


def _best_first(item: tuple[float, str]) -> tuple[float, str]:
    return -item[0], item[1]


# ------------------------------------------------------------------ tokenizers and models
def _bert_tokenizer(vocab: list[str], lowercase: bool):
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    wordpiece = BertWordPieceTokenizer(
        {token: i for i, token in enumerate(vocab)}, lowercase=lowercase, handle_chinese_chars=True
    )
    return BertTokenizerFast(
        tokenizer_object=wordpiece._tokenizer,
        do_lower_case=lowercase,
        tokenize_chinese_chars=True,
        model_max_length=MAX_LENGTH,
        **BERT_SPECIALS,
    )


def _albert_tokenizer(vocab: list[tuple[str, float]]):
    from transformers import AlbertTokenizer

    return AlbertTokenizer(vocab=vocab, do_lower_case=True, keep_accents=False, model_max_length=MAX_LENGTH)


def _model(family: Family, tokenizer, seed: int):
    import torch
    from transformers import AlbertConfig, AlbertForPreTraining, BertConfig, BertForPreTraining

    shape = family.shape
    sizes = {
        "vocab_size": len(tokenizer),
        "hidden_size": shape.hidden,
        "num_hidden_layers": shape.layers,
        "num_attention_heads": shape.heads,
        "intermediate_size": shape.intermediate,
        "max_position_embeddings": MAX_LENGTH,
        "type_vocab_size": 2,
        "pad_token_id": tokenizer.pad_token_id,
    }
    torch.manual_seed(seed)
    if family.kind == "albert":
        config = AlbertConfig(
            embedding_size=ALBERT_EMBEDDING,
            bos_token_id=tokenizer.cls_token_id,
            eos_token_id=tokenizer.sep_token_id,
            **sizes,
        )
        return AlbertForPreTraining(config).eval()
    return BertForPreTraining(BertConfig(**sizes)).eval()


def _write_snapshot(folder: Path, family: Family, sentences: list[str], seed: int) -> None:
    if family.kind == "albert":
        tokenizer = _albert_tokenizer(unigram_vocabulary(sentences, UNIGRAM_SIZE))
        specials, vocab = ALBERT_SPECIALS, None
    else:
        size = 0 if family.kind == "chinese" else WORDPIECE_SIZE  # Chinese: the characters alone
        vocab = wordpiece_vocabulary(sentences, size, family.lowercase)
        tokenizer = _bert_tokenizer(vocab, family.lowercase)
        specials = BERT_SPECIALS
    model = _model(family, tokenizer, seed)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "special_tokens_map.json").write_text(json.dumps(specials, indent=2, sort_keys=True) + "\n")
    if vocab is not None:
        (folder / "vocab.txt").write_text("".join(token + "\n" for token in vocab), encoding="utf-8")
    stray = sorted(path.name for path in folder.iterdir() if path.name not in SNAPSHOT_FILES)
    for name in stray:  # whatever a library version adds beside them (a generation config, say)
        target = folder / name
        shutil.rmtree(target) if target.is_dir() else target.unlink()


SNAPSHOT_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
)


def build_snapshot(spec: str, root: Path, sentences: list[str], seed: int = 0) -> Path:
    """Write the tiny random stand-in of ``hub:ORG/NAME@COMMIT`` into ``root/ORG/NAME/COMMIT/`` and return
    that folder. Its vocabulary is learned from ``sentences``; the folder is filled beside its final
    place and renamed into it (a folder already there is replaced). An unknown family or no text is an
    :class:`~pipeline.errors.InputError`."""
    family = family_of(spec)
    repo_id, revision = parse_hub(spec)
    sentences = [text for text in sentences if text.strip()]
    if not sentences:
        raise InputError(spec, "no sentences to learn the stand-in's vocabulary from")
    final = Path(root) / repo_id / revision
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{revision}.", dir=final.parent))
    try:
        _write_snapshot(temp, family, sentences, seed)
        temp.chmod(0o755)  # mkdtemp's folder is private; a snapshot is for anyone to read
        if final.exists():
            aside = temp.with_name(temp.name + ".old")
            os.replace(final, aside)
            os.replace(temp, final)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.replace(temp, final)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return final

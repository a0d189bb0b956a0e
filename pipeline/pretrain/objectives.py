"""The pre-training objectives (docs/method.md §3) as one ``nn.Module`` whose forward returns every loss term.

One module (the masked LM plus, for NSP / SOP, a small pair classifier) with one forward per
step keeps ``DistributedDataParallel`` simple: all encodings of a step (MiSAD's S, w and R)
happen inside a single DDP forward. Each loss term is returned separately for the log.

| objective | data | masking of the MLM input | extra term |
|---|---|---|---|
| ``mlm`` | sentences | token (BERT) | |
| ``wwm`` | sentences | whole words | |
| ``burt`` | sentences | PMI n-grams (BURT) | |
| ``spanbert`` | sentences | random spans, Geometric(0.2), 1..6 words | |
| ``entity`` | sentences | named-entity spans | |
| ``misad`` | sentences | token, never inside w | ``MSE(E_w + E_R, E_S)``, w a PMI n-gram |
| ``misad-span`` | sentences | token, never inside w | the same, w a random span (ULR-BERT §7.2) |
| ``misad-entity`` | sentences | token, never inside w | the same, w a named entity (ULR-BERT §7.2) |
| ``nsp`` / ``sop`` | consecutive sentence pairs | token | pair classification (cross-entropy) |

With an ELECTRA pair (``discriminator`` given), the masked-LM term is ELECTRA's: the generator's
MLM loss (``mlm``) plus λ = 50 times the discriminator's replaced-token detection loss (``rtd``,
logged unweighted) on the same masked input (:mod:`pipeline.pretrain.electra`); MiSAD and the
pair head then work on the discriminator's outputs. MiSAD's sentence vector is a pooling of the
token states (mean by default) or, with ``pooling="pooler"``, BERT's pooler as ULR-BERT §3.2 has it
(:mod:`pipeline.pretrain.pooler`).
"""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.errors import InputError
from pipeline.models.pooling import pool
from pipeline.pretrain import electra, segment_packing
from pipeline.pretrain.encoder_heads import encode, mlm_loss
from pipeline.pretrain.masking import collator_for
from pipeline.pretrain.misad import MisadCollator, choice_for
from pipeline.pretrain.pooler import Pooler, checkpoint_tensors
from pipeline.pretrain.sentence_pairs import PairCollator, SentencePairs
from pipeline.pretrain.span_sampling import POOLS

log = logging.getLogger("pipeline.pretrain")

OBJECTIVES = ("mlm", "wwm", "burt", "spanbert", "entity", "misad", "misad-span", "misad-entity", "nsp", "sop")
# the MiSAD objectives and where their w comes from (pipeline.pretrain.misad; ULR-BERT §3.2, §7.2)
MISAD_SOURCES = {"misad": "ngram", "misad-span": "span", "misad-entity": "entity"}


# Where a pre-trained checkpoint keeps its sentence-pair head, as (our key -> the checkpoint's key
# suffix): BERT's NSP head (BertForPreTraining: the pooler and ``cls.seq_relationship``) and
# ALBERT's SOP head. Both label 0 as "the second sentence follows the first", as we do.
PRETRAINED_PAIR_HEADS = (
    {
        "dense.weight": "pooler.dense.weight",
        "dense.bias": "pooler.dense.bias",
        "classifier.weight": "seq_relationship.weight",
        "classifier.bias": "seq_relationship.bias",
    },
    {
        "dense.weight": "albert.pooler.weight",
        "dense.bias": "albert.pooler.bias",
        "classifier.weight": "sop_classifier.classifier.weight",
        "classifier.bias": "sop_classifier.classifier.bias",
    },
)


def pretrained_pair_head(folder) -> dict | None:
    """The NSP / SOP head a local checkpoint was pre-trained with, as :class:`PairHead` weights; None
    where it has none (a masked-LM-only checkpoint, a hub id not on disk)."""
    return checkpoint_tensors(folder, PRETRAINED_PAIR_HEADS)


class PairHead(nn.Module):
    """BERT's NSP head shape: dense + tanh on the first token, then a 2-way classifier. It starts from
    the checkpoint's own NSP (or ALBERT's SOP) head where it has one (:meth:`load_pretrained`)."""

    def __init__(self, hidden_size: int, dropout: float = 0.1):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden_size, 2)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.dropout(torch.tanh(self.dense(hidden[:, 0]))))

    def load_pretrained(self, folder) -> bool:
        """Start from the checkpoint's pre-trained pair head; False (kept at random) where it has none that fits."""
        state = pretrained_pair_head(folder)
        own = self.state_dict()
        if state is None or any(state[key].shape != own[key].shape for key in own):
            return False
        self.load_state_dict(state)
        return True


class PretrainingModel(nn.Module):
    """``forward(**batch) -> {"loss", "mlm", ["rtd"], ["misad" | "nsp" | "sop"]}`` for one objective.

    ``mlm_model`` is the masked LM (an ELECTRA generator when ``discriminator`` is given)."""

    def __init__(self, mlm_model, objective: str, pooling: str = "mean", dropout: float = 0.1, discriminator=None):
        super().__init__()
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {objective!r}; choose from {OBJECTIVES}")
        self.mlm = mlm_model
        self.discriminator = discriminator
        if discriminator is not None:
            electra.share_embeddings(mlm_model, discriminator)
        self.objective = objective
        self.pooling = pooling
        if objective in ("nsp", "sop"):
            self.pair_head = PairHead(self.encoder.config.hidden_size, dropout)
        if pooling == "pooler":  # only MiSAD pools while training: elsewhere a pooler would get no gradient
            if objective not in MISAD_SOURCES:
                raise ValueError(f"pooling 'pooler' is MiSAD's (ULR-BERT §3.2), not {objective!r}'s")
            self.pooler = Pooler(self.encoder.config.hidden_size)

    def start_pooler(self, checkpoint) -> bool | None:
        """MiSAD with ``pooler``: start the pooler from ``checkpoint``'s pre-trained one; returns whether it is
        new (started at random, with a warning), or None where the run has no pooler."""
        if not hasattr(self, "pooler"):
            return None
        new = not self.pooler.load_pretrained(checkpoint)
        if new:
            log.warning("%s: no pre-trained pooler in the checkpoint; MiSAD's pooler starts at random", checkpoint)
        return new

    def start_pair_head(self, checkpoint) -> bool | None:
        """NSP / SOP: start the pair head from ``checkpoint``'s pre-trained one; returns whether the head is
        new (started at random, with a warning), or None for an objective without a pair head."""
        if not hasattr(self, "pair_head"):
            return None
        new = not self.pair_head.load_pretrained(checkpoint)
        if new:
            log.warning("%s: no pre-trained NSP/SOP head in the checkpoint; the pair head starts at random", checkpoint)
        return new

    @property
    def encoder(self):
        """The model whose representations are trained for use: the discriminator of an ELECTRA pair."""
        return self.mlm if self.discriminator is None else self.discriminator

    def forward(
        self,
        input_ids,
        attention_mask,
        labels,
        token_type_ids=None,
        pair_labels=None,
        w_input_ids=None,
        w_attention_mask=None,
        r_input_ids=None,
        r_attention_mask=None,
        misad_valid=None,
        **_unused,
    ) -> dict[str, torch.Tensor]:
        hidden = encode(self.mlm, input_ids, attention_mask, token_type_ids)
        if self.discriminator is None:
            losses = {"mlm": mlm_loss(self.mlm, hidden, labels)}
        else:
            generated, replaced = electra.generator_step(self.mlm, hidden, input_ids, labels)
            hidden = encode(self.discriminator, replaced, attention_mask, token_type_ids)
            losses = {
                "mlm": generated,
                "rtd": electra.rtd_loss(self.discriminator, hidden, replaced, input_ids, labels, attention_mask),
            }
        if self.objective in MISAD_SOURCES:  # every MiSAD variant logs its term as "misad"
            losses["misad"] = self.misad_loss(
                hidden, attention_mask, w_input_ids, w_attention_mask, r_input_ids, r_attention_mask, misad_valid
            )
        elif self.objective in ("nsp", "sop"):
            logits = self.pair_head(hidden)
            losses[self.objective] = F.cross_entropy(logits.float(), pair_labels)
        losses["loss"] = sum(value * (electra.RTD_WEIGHT if key == "rtd" else 1.0) for key, value in losses.items())
        return losses

    def misad_loss(self, s_hidden, s_mask, w_ids, w_mask, r_ids, r_mask, valid) -> torch.Tensor:
        """ULR-BERT eq. 3: MSE between the sum of the unit-length embeddings of w and R and that of S."""
        e_s = self.sentence_vector(s_hidden, s_mask)
        (w_hidden, w_mask), (r_hidden, r_mask) = self.encode_w_and_r(w_ids, w_mask, r_ids, r_mask)
        e_w, e_r = self.sentence_vector(w_hidden, w_mask), self.sentence_vector(r_hidden, r_mask)
        if not valid.any():
            return (e_s.sum() + e_w.sum() + e_r.sum()) * 0.0
        unit = [F.normalize(e.float()[valid], dim=-1) for e in (e_w, e_r, e_s)]
        return F.mse_loss(unit[0] + unit[1], unit[2])

    def encode_w_and_r(self, w_ids, w_mask, r_ids, r_mask):
        """w's and R's token states, each with its mask: encoded separately, as ULR-BERT §3.2 has it, in one
        call with the two packed into one row (:mod:`pipeline.pretrain.segment_packing`)."""
        config = self.encoder.config
        packed = segment_packing.pack(w_ids, w_mask, r_ids, r_mask, config.pad_token_id or 0)
        mask = segment_packing.attention_mask(
            packed["segments"], config._attn_implementation, next(self.encoder.parameters()).dtype
        )
        positions = packed["position_ids"] + position_offset(self.encoder)
        return segment_packing.unpack(encode(self.encoder, packed["input_ids"], mask, None, positions), packed)

    def sentence_vector(self, hidden, mask) -> torch.Tensor:
        """MiSAD's E: the pooler's output on [CLS] (ULR-BERT §3.2) or a pooling of the token states."""
        return self.pooler(hidden) if self.pooling == "pooler" else pool(hidden, mask, self.pooling)


def position_offset(model) -> int:
    """The first position id of a sequence: 0, or ``padding_idx + 1`` for RoBERTa-style embeddings, which
    count positions from after the padding index."""
    embeddings = model.base_model.embeddings
    if "roberta" in model.config.model_type or "camembert" in model.config.model_type:
        return int(embeddings.padding_idx) + 1
    return 0


def make_data(
    objective: str,
    dataset,
    tokenizer,
    seed: int,
    max_length: int,
    misad_choice: str = "mlm-score",
    misad_max_candidates: int = 0,
    ngram_pool: str = POOLS[0],
    mlm_probability: float = 0.15,
):
    """``(examples, collator)``: what the sampler indexes and how a batch of it is made."""
    rows = getattr(dataset, "dataset", dataset)  # a PackedDataset's token rows
    if getattr(rows, "has_sampled", False) and objective not in ("nsp", "sop"):
        # a pair sample's rows that are only next sentences would train as sampled sentences
        raise InputError(rows.path, f"a sample --with-next (column 'sampled') is NSP / SOP's, not {objective}'s")
    if objective in ("nsp", "sop"):
        return SentencePairs(dataset, objective, seed), PairCollator(tokenizer, max_length, seed, mlm_probability)
    if objective in MISAD_SOURCES:
        source = MISAD_SOURCES[objective]
        choice = choice_for(source, misad_choice)
        return dataset, MisadCollator(tokenizer, choice, seed, mlm_probability, misad_max_candidates, source)
    return dataset, collator_for(
        objective, tokenizer, seed=seed, mlm_probability=mlm_probability, ngram_pool=ngram_pool
    )

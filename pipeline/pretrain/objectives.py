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

from pipeline.arguments import integer
from pipeline.errors import InputError
from pipeline.models.pooling import pool
from pipeline.objective_registry import MAX_SPAN_WORDS, MISAD_LOSSES, MISAD_SOURCES, OBJECTIVES, SPAN_MAX_WORDS, lookup
from pipeline.pretrain import electra, segment_packing
from pipeline.pretrain.encoder_heads import encode, mlm_loss
from pipeline.pretrain.masking import collator_for
from pipeline.pretrain.misad import CHOICES, MisadCollator, choice_for
from pipeline.pretrain.pooler import MISAD_POOLINGS, Pooler, checkpoint_tensors
from pipeline.pretrain.sentence_pairs import PairCollator, SentencePairs
from pipeline.pretrain.span_sampling import POOLS

log = logging.getLogger("pipeline.pretrain")
# the released run_mse.py is a BertForMaskedLM with a BertPooler: its loss needs both (an ELECTRA discriminator
# has no masked-LM head for R's MLM term)
RELEASED_NEEDS = (
    "the released MiSAD loss (run_mse.py) pools with a fresh BertPooler and adds R's masked-LM loss: it needs "
    "--pooling pooler and a masked-LM backbone (not an ELECTRA discriminator)"
)

__all__ = ["MISAD_SOURCES", "OBJECTIVES", "PretrainingModel", "make_data"]  # the registry's, read from here too


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

    def __init__(
        self,
        mlm_model,
        objective: str,
        pooling: str = "mean",
        dropout: float = 0.1,
        discriminator=None,
        misad_loss: str = "equation",
    ):
        super().__init__()
        entry = lookup(objective)  # ValueError naming the choices for an unknown one
        if misad_loss not in MISAD_LOSSES:
            raise ValueError(f"unknown MiSAD loss {misad_loss!r}; choose from {tuple(MISAD_LOSSES)}")
        if entry.loss == "misad" and misad_loss == "released" and (pooling != "pooler" or discriminator is not None):
            raise ValueError(RELEASED_NEEDS)
        self.mlm = mlm_model
        self.discriminator = discriminator
        if discriminator is not None:
            electra.share_embeddings(mlm_model, discriminator)
        self.objective = objective
        self.pooling = pooling
        self.loss_term = entry.loss
        self.misad_loss_variant = misad_loss if entry.loss == "misad" else "equation"
        if entry.loss == "pair":
            self.pair_head = PairHead(self.encoder.config.hidden_size, dropout)
        if pooling == "pooler":  # only MiSAD pools while training: elsewhere a pooler would get no gradient
            if objective not in MISAD_SOURCES:
                raise ValueError(f"pooling 'pooler' is MiSAD's (ULR-BERT §3.2), not {objective!r}'s")
            self.pooler = Pooler(self.encoder.config.hidden_size)

    def start_pooler(self, checkpoint) -> bool | None:
        """MiSAD with ``pooler``: start the pooler from ``checkpoint``'s pre-trained one; returns whether it is
        new (started at random, with a warning), or None where the run has no pooler. The released loss keeps
        it as initialised (seeded), as the authors' ``run_mse.py`` starts a fresh ``BertPooler``."""
        if not hasattr(self, "pooler"):
            return None
        if self.misad_loss_variant == "released":
            log.info("MiSAD's pooler starts fresh (seeded), as the released run_mse.py's BertPooler")
            return True
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
        r_labels=None,
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
        if self.loss_term == "misad":  # every MiSAD variant logs its term as "misad"
            losses.update(
                self.misad_loss(
                    hidden,
                    attention_mask,
                    w_input_ids,
                    w_attention_mask,
                    r_input_ids,
                    r_attention_mask,
                    misad_valid,
                    r_labels,
                )
            )
        elif self.loss_term == "pair":
            logits = self.pair_head(hidden)
            losses[self.objective] = F.cross_entropy(logits.float(), pair_labels)
        losses["loss"] = sum(value * (electra.RTD_WEIGHT if key == "rtd" else 1.0) for key, value in losses.items())
        return losses

    def global_token_weight(self, batch: dict, world, device) -> float:
        """The weight that makes DDP's mean of the processes' gradients the gradient of the masked LM loss averaged
        over the masked tokens of the whole batch, as one process computes it (docs/stages/pretrain.md "Several
        GPUs"): this process's share of the masked tokens times the process count. Each process averages its
        loss over its own masked tokens, whose numbers differ, so without it two processes at half the batch
        would train other weights than one process at the whole batch. Plain masking objectives only (one
        token-mean term); MiSAD's and the pair terms average over examples, which every process holds equally
        many of."""
        from pipeline.models import runtime

        if world.size == 1 or self.loss_term != "mlm" or self.discriminator is not None:
            return 1.0
        local = float((batch["labels"] != -100).sum())
        total = runtime.all_sum(local, world, device)
        return local * world.size / total if total else 1.0

    def misad_loss(self, s_hidden, s_mask, w_ids, w_mask, r_ids, r_mask, valid, r_labels=None) -> dict:
        """``{"misad": L_MiSAD}``, and with the released loss ``"mlm_r"``, R's masked-LM loss (docs/method.md §3).

        ``equation``, ULR-BERT §3.2 (eq. 3) as written: ``MSE(E^w + E^R, E^S)`` with E^w, E^R and E^S each of
        unit length. ``released``, the authors' ``run_mse.py``: the same unit vectors, but their sum
        re-normalised to unit length before the MSE, R masked (the collator's ``r_labels``) and its MLM
        loss added, and the pooler started fresh (:meth:`start_pooler`)."""
        e_s = self.sentence_vector(s_hidden, s_mask)
        (w_hidden, w_mask), (r_hidden, r_mask) = self.encode_w_and_r(w_ids, w_mask, r_ids, r_mask)
        e_w, e_r = self.sentence_vector(w_hidden, w_mask), self.sentence_vector(r_hidden, r_mask)
        released = self.misad_loss_variant == "released"
        losses = {}
        if released:
            if r_labels is None:
                raise ValueError("the released MiSAD loss needs R's masked-LM labels (MisadCollator(mask_r=True))")
            losses["mlm_r"] = mlm_loss(self.encoder, r_hidden, r_labels[:, : r_hidden.shape[1]])
        if not valid.any():
            losses["misad"] = (e_s.sum() + e_w.sum() + e_r.sum()) * 0.0
            return losses
        unit_w, unit_r, unit_s = (F.normalize(e.float()[valid], dim=-1) for e in (e_w, e_r, e_s))
        combined = F.normalize(unit_w + unit_r, dim=-1) if released else unit_w + unit_r
        losses["misad"] = F.mse_loss(combined, unit_s)
        return losses

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
    span_max_words: int = SPAN_MAX_WORDS,
    misad_loss: str = "equation",
):
    """``(examples, collator)``: what the sampler indexes and how a batch of it is made (the objective's
    registry entry names its collator)."""
    entry = lookup(objective)
    rows = getattr(dataset, "dataset", dataset)  # a PackedDataset's token rows
    if getattr(rows, "has_sampled", False) and entry.data != "pairs":
        # a pair sample's rows that are only next sentences would train as sampled sentences
        raise InputError(rows.path, f"a sample --with-next (column 'sampled') is NSP / SOP's, not {objective}'s")
    if entry.collator == "pairs":
        return SentencePairs(dataset, objective, seed), PairCollator(tokenizer, max_length, seed, mlm_probability)
    if entry.collator == "misad":
        choice = choice_for(entry.misad_source, misad_choice)
        collator = MisadCollator(
            tokenizer,
            choice,
            seed,
            mlm_probability,
            misad_max_candidates,
            entry.misad_source,
            span_max_words=span_max_words,
            mask_r=misad_loss == "released",
        )
        return dataset, collator
    return dataset, collator_for(
        objective,
        tokenizer,
        seed=seed,
        mlm_probability=mlm_probability,
        ngram_pool=ngram_pool,
        span_max_words=span_max_words,
    )


def add_objective_arguments(parser) -> None:
    """``pretrain``'s options of MiSAD (choice of w, loss, pooling) and of the masking (BURT's pool, SpanBERT's
    longest span)."""
    parser.add_argument(
        "--misad-choice",
        choices=CHOICES,
        default="mlm-score",
        help="how MiSAD picks w: lowest MLM-head score (paper) or random (released code); misad-span and "
        "misad-entity always draw at random (ULR-BERT §7.2 gives them no score)",
    )
    parser.add_argument(
        "--misad-max-candidates", type=integer(0, 10**6), default=0, help="n-grams scored per sentence (0: all)"
    )
    parser.add_argument(
        "--misad-loss",
        choices=tuple(MISAD_LOSSES),
        default="equation",
        help="MiSAD's loss (docs/method.md §3): equation (ULR-BERT §3.2 as written: MSE(E_w + E_R, E_S), unit "
        "vectors) or released (the authors' run_mse.py: E_w + E_R re-normalised before the MSE, R masked with its "
        "MLM loss added, a fresh pooler; needs --pooling pooler)",
    )
    parser.add_argument(
        "--span-max-words",
        type=integer(1, MAX_SPAN_WORDS),
        default=SPAN_MAX_WORDS,
        help=f"SpanBERT's longest span in words (spanbert, misad-span; default {SPAN_MAX_WORDS}, ULR-BERT §7.2; "
        "BURT's rows: 10, the authors' run_span.py)",
    )
    parser.add_argument(
        "--pooling",
        choices=MISAD_POOLINGS,
        default="mean",
        help="MiSAD / exported pooling; pooler (MiSAD only): BERT's pooler on [CLS], as ULR-BERT §3.2",
    )
    parser.add_argument(
        "--ngram-pool",
        choices=POOLS,
        default=POOLS[0],
        help="BURT masking (docs/method.md §3): ngrams-first (default; BURT §3.2: n-grams drawn one at a time "
        "until the 15%% budget, tokens only where n-grams run out), uniform over kept n-grams and uncovered "
        "tokens, or ngrams-only (the released run_ngram.py: n-grams until the budget is passed)",
    )

"""ELECTRA's replaced-token detection as the masked-LM part of an objective (Clark et al., 2020,
*ELECTRA: Pre-training Text Encoders as Discriminators Rather Than Generators*, §2).

A small generator (``ElectraForMaskedLM``) is trained with MLM on the masked input that the
objective's collator made (token, n-gram, span ... masking alike); at every masked position a
token is sampled from the generator's output distribution, and the discriminator
(``ElectraForPreTraining``) predicts, for every token of the resulting sequence, whether it
differs from the original. ELECTRA §2: ``L = L_MLM(generator) + λ L_Disc`` with λ = 50, no
gradient through the sampling, and generator and discriminator sharing the token and position
embeddings (§3.2, "we share the embeddings"); the generator's output layer stays tied to the
token embeddings. The discriminator is the model kept after pre-training (and the one MiSAD and
the NSP / SOP head use: its pooled outputs).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from pipeline.pretrain.encoder_heads import mlm_head

RTD_WEIGHT = 50.0  # λ of ELECTRA §2


def share_embeddings(generator, discriminator) -> bool:
    """Give the generator the discriminator's embedding module when their shapes agree (ELECTRA §3.2)."""
    gen, disc = generator.base_model.embeddings, discriminator.base_model.embeddings
    gen_shapes = {k: v.shape for k, v in gen.state_dict().items()}
    if gen_shapes != {k: v.shape for k, v in disc.state_dict().items()}:
        return False
    generator.base_model.embeddings = disc
    head = generator.get_output_embeddings()
    if head is not None and head.weight.shape == disc.word_embeddings.weight.shape:
        head.weight = disc.word_embeddings.weight
    return True


def generator_step(
    generator, hidden: torch.Tensor, input_ids: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(generator MLM loss, discriminator input)``: the masked positions filled with tokens sampled
    from the generator (without gradient), every other position as it was."""
    where = labels != -100
    if not where.any():
        return hidden.sum() * 0.0, input_ids
    logits = mlm_head(generator)(hidden[where]).float()
    loss = F.cross_entropy(logits, labels[where])
    with torch.no_grad():
        sampled = torch.multinomial(torch.softmax(logits.detach(), dim=-1), 1).squeeze(1)
    replaced = input_ids.clone()
    replaced[where] = sampled
    return loss, replaced


def rtd_loss(
    discriminator,
    hidden: torch.Tensor,
    replaced: torch.Tensor,
    input_ids: torch.Tensor,
    labels: torch.Tensor,
    attention_mask: torch.Tensor,
) -> torch.Tensor:
    """Binary cross-entropy of the discriminator's 'replaced' logits over the real tokens."""
    original = torch.where(labels != -100, labels, input_ids)
    target = (replaced != original).float()
    logits = discriminator.discriminator_predictions(hidden)
    real = attention_mask.bool()
    return F.binary_cross_entropy_with_logits(logits[real].float(), target[real])

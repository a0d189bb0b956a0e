"""MiSAD's ``pooler`` sentence vector: BERT's pooler, dense + tanh on ``[CLS]`` (ULR-BERT §3.2).

ULR-BERT §3.2: "To derive fixed-sized vectors for sequences of different lengths, we use the
pooled output of the [CLS] token as sequence embeddings", and the authors' ``run_mse.py`` takes
BERT's ``pooled_output`` (``tanh(W h_[CLS] + b)``). A masked-LM model has no pooler
(``BertForMaskedLM`` builds its encoder with ``add_pooling_layer=False``), so MiSAD keeps one of its
own, :class:`Pooler`, started from the checkpoint's pre-trained pooler (BERT's ``pooler.dense``,
ALBERT's ``albert.pooler``) where it has one, else at random (``new_pooler`` in
``pretrain_config.json``).

The trained pooler goes out with the model (:func:`export_pooler`): into ``model.safetensors``
under the names a base model with a pooling layer reads (``bert.pooler.dense.*``), so that
``AutoModel`` / ``BertModel`` load it as their ``pooler_output``; and as a sentence-transformers
``Dense`` module with tanh (``2_Dense``) after ``[CLS]`` pooling, so that ``SentenceTransformer``
gives the vector MiSAD trained. The evaluation stages' poolings stay mean / CLS / max over the
token states (:data:`pipeline.models.pooling.POOLINGS`).
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch
from torch import nn

from pipeline.models.pooling import POOLINGS

log = logging.getLogger("pipeline.pretrain")

MISAD_POOLINGS = (*POOLINGS, "pooler")  # pretrain --pooling: the evaluation poolings plus MiSAD's pooler
DENSE_FOLDER = "2_Dense"

# Where a pre-trained checkpoint keeps its pooler, as (our key -> the checkpoint's key suffix).
PRETRAINED_POOLERS = (
    {"dense.weight": "pooler.dense.weight", "dense.bias": "pooler.dense.bias"},
    {"dense.weight": "albert.pooler.weight", "dense.bias": "albert.pooler.bias"},
)


def checkpoint_tensors(folder, namings) -> dict | None:
    """The first of ``namings`` (our key -> key suffix) whose every tensor a local checkpoint's
    ``*.safetensors`` hold, as our keys -> tensors; None where none is complete (or not on disk)."""
    from safetensors import safe_open

    files = sorted(Path(folder).glob("*.safetensors")) if Path(folder).is_dir() else []
    for naming in namings:
        found = {}
        for path in files:
            with safe_open(path, framework="pt") as weights:
                keys = list(weights.keys())
                for ours, suffix in naming.items():
                    key = next((k for k in keys if k == suffix or k.endswith("." + suffix)), None)
                    if key is not None:
                        found[ours] = weights.get_tensor(key)
        if len(found) == len(naming):
            return found
    return None


class Pooler(nn.Module):
    """BERT's pooler: ``tanh(dense(h[:, 0]))``, the sentence vector of ULR-BERT §3.2."""

    def __init__(self, hidden_size: int):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(hidden[:, 0]))

    def load_pretrained(self, folder) -> bool:
        """Start from the checkpoint's pre-trained pooler; False (kept at random) where it has none that fits."""
        state = checkpoint_tensors(folder, PRETRAINED_POOLERS)
        own = self.state_dict()
        if state is None or any(state[key].shape != own[key].shape for key in own):
            return False
        self.load_state_dict(state)
        return True


def base_model_pooler_keys(config) -> dict[str, str]:
    """Our key -> the key a base model with a pooling layer keeps it under (BERT ``pooler.dense.weight``,
    ALBERT ``pooler.weight``); empty for an architecture without a pooler (ELECTRA)."""
    from transformers import AutoModel

    with torch.device("meta"):  # only the key names are needed: no memory, no initialisation
        keys = [key for key in AutoModel.from_config(config).state_dict() if key.startswith("pooler.")]
    return {ours: key for ours in ("dense.weight", "dense.bias") for key in keys if key.endswith(ours.split(".")[1])}


def export_pooler(directory: Path, pooler: Pooler, config) -> None:
    """Save the trained pooler with a saved model: in ``model.safetensors`` where the architecture has a
    pooler (so ``AutoModel`` loads it), and as the sentence-transformers ``2_Dense`` module (tanh)."""
    from safetensors.torch import load_file, save_file
    from sentence_transformers.base.modules.dense import Dense

    directory = Path(directory)
    state = {key: value.detach().float().cpu().contiguous() for key, value in pooler.state_dict().items()}
    names = base_model_pooler_keys(config)
    weights = directory / "model.safetensors"
    if names and weights.exists():
        saved = load_file(weights)
        prefix = next(
            (
                k.removesuffix("embeddings.word_embeddings.weight")
                for k in saved
                if k.endswith("embeddings.word_embeddings.weight")
            ),
            "",
        )
        dtype = next(iter(saved.values())).dtype
        saved.update({f"{prefix}{names[key]}": value.to(dtype) for key, value in state.items()})
        save_file(saved, weights, metadata={"format": "pt"})
    else:  # AutoModel would start a pooler at random; sentence-transformers still gets the trained one
        log.warning(
            "%s: the architecture keeps no pooler weights; the trained pooler is in %s only", directory, DENSE_FOLDER
        )
    size = state["dense.weight"].shape[0]
    dense = Dense(
        size, size, activation_function=nn.Tanh(), init_weight=state["dense.weight"], init_bias=state["dense.bias"]
    )
    (directory / DENSE_FOLDER).mkdir(exist_ok=True)
    dense.save(str(directory / DENSE_FOLDER))

"""Settings of the training stages that the plan (pipeline/plan/plan.py) reports without running a
stage: each fine-tuning recipe's optimiser, and the BiLSTM schedule's fixed values.

- ``twin`` (and ``nli-mnrl``, beyond the papers): BURT twin §3.3, "the Adam optimizer with β1 = 0.9,
  β2 = 0.98, and ε = 10−9", no weight decay.
- ``sbert-nli``: SBERT (Reimers & Gurevych 2019 §3, "Training Details") states "Adam optimizer with
  learning rate 2e-5"; its released code (sentence-transformers' ``SentenceTransformer.fit()`` of the
  paper's time: ``optimizer_params={'lr': 2e-5, 'eps': 1e-6, 'correct_bias': False}``,
  ``weight_decay=0.01`` off biases and LayerNorm weights, ``max_grad_norm=1``) ran AdamW, which the
  recipe follows where the text is silent (docs/method.md §4).
- pre-training's dropout, on every dropout of the model's config (``PRETRAIN_DROPOUT``): ULR-BERT §4 and
  BURT §5.2, "dropout rate is 0.1", whatever the checkpoint's config ships (ALBERT v2's 0).
- BiLSTM (paper 004 §3.1): SGD, the rate times 0.99 after every epoch, a classifier of 512 hidden units
  (``pipeline.bilstm.train.Schedule``, held equal by tests/plan/test_plan.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Optimiser:
    """Adam(W) with these moments, ε and decoupled weight decay (never on biases and norms), the learning
    rate warmed up linearly and decayed linearly to 0."""

    name: str
    betas: tuple[float, float]
    eps: float
    weight_decay: float
    source: str

    def record(self) -> dict:
        """As finetune_config.json records it."""
        return {"name": self.name, "betas": list(self.betas), "eps": self.eps, "weight_decay": self.weight_decay}


TWIN_OPTIMISER = Optimiser("Adam", (0.9, 0.98), 1e-9, 0.0, "BURT twin §3.3")
RECIPE_OPTIMISERS = {
    "twin": TWIN_OPTIMISER,
    "sbert-nli": Optimiser(
        "AdamW", (0.9, 0.999), 1e-6, 0.01, "Reimers & Gurevych 2019 §3; sentence-transformers fit()"
    ),
    "nli-mnrl": TWIN_OPTIMISER,
}

PRETRAIN_DROPOUT = 0.1  # pretrain --dropout's default, which the workflow never overrides (ULR-BERT §4, BURT §5.2)

BILSTM_OPTIMISER = "SGD"
BILSTM_LR_DECAY = 0.99
BILSTM_CLASSIFIER_HIDDEN = 512

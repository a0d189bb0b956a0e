"""The ``bilstm`` stage: BiLSTM sentence encoders trained on NLI (Jiao et al., *An Improved Mechanism for
Universal Sentence Representations Learnt from NLI Data Using Bi-directional Information*; docs/method.md §4).

The encoder itself (the BiLSTM of eq. 1, the max / BF poolings of eqs. 2-4, the inner-attention
baseline) and its model directory live in :mod:`pipeline.models.bilstm`, so that any stage can load a
trained one (``--model bilstm:DIR``). Here: :mod:`.nli_data` reads the SNLI pairs
(:mod:`pipeline.tasks.nli`), :mod:`.nli_model` is the paper's classifier on top of the encoder (§2.2),
:mod:`.train` the training loop and schedule (§3.1), and :mod:`.bilstm` the stage's entry point. The
training log ``train_log.jsonl`` has one line per epoch (loss, train / dev accuracy, learning rate).
Imports only the ground floor (:mod:`pipeline.models`, :mod:`pipeline.tasks`, ...).
"""

"""BiLSTM sentence encoders trained on NLI (Jiao et al., *An Improved Mechanism for Universal
Sentence Representations Learnt from NLI Data Using Bi-directional Information*; docs/method.md §4).

A BiLSTM (eq. 1) reads a sentence's word vectors; one pooling module per file turns its hidden
states into the sentence vector: max pooling (:mod:`.pooling_max`, the InferSent baseline),
BF-balanced (:mod:`.pooling_bf_balanced`, eq. 2), BF-combined (:mod:`.pooling_bf_combined`,
eq. 3), BF-attention (:mod:`.pooling_bf_attention`, eq. 4) and the inner-attention baseline of
Table 2 (:mod:`.pooling_inner_attention`). :mod:`.train` trains an encoder on NLI pairs with
the paper's classifier (§2.2) and schedule (§3.1); :mod:`.saved` writes and reads the model
directory:

- ``config.json``: ``format`` ("bilstm-sentence-encoder"), ``format_version`` (1), ``pooling``,
  ``hidden`` (per direction), ``word_dim``, ``dim`` (sentence vector size), ``tokenizer``, the
  vectors file it was built from, the training parameters and provenance;
- ``vocab.txt``: the vocabulary, one word per line; line i is row i of the embedding table;
- ``model.safetensors``: every tensor of the encoder (``embedding.weight``, the frozen word
  vectors; ``lstm.*``; ``pooling.*``), float32, loaded with ``safetensors.torch.load_file``;
- ``train_log.jsonl``: one line per epoch (loss, train / dev accuracy, learning rate).
"""

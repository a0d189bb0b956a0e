"""The BiLSTM sentence encoder of paper 004 (Jiao et al., *An Improved Mechanism for Universal Sentence
Representations Learnt from NLI Data Using Bi-directional Information*; docs/method.md §4) and its
saved directory. Training lives in the ``bilstm`` stage (:mod:`pipeline.bilstm`); any stage loads a
trained encoder with ``--model bilstm:DIR`` (:mod:`pipeline.models.spec`).

A BiLSTM (eq. 1, :mod:`.encoder`) reads a sentence's frozen word vectors; one pooling module per file
turns its hidden states into the sentence vector (:data:`.encoder.BILSTM_POOLINGS`, not the
transformer poolings of :mod:`pipeline.models.pooling`): max pooling (:mod:`.pooling_max`, the
InferSent baseline), BF-balanced (:mod:`.pooling_bf_balanced`, eq. 2), BF-combined
(:mod:`.pooling_bf_combined`, eq. 3), BF-attention (:mod:`.pooling_bf_attention`, eq. 4) and the
inner-attention baseline of Table 2 (:mod:`.pooling_inner_attention`). :mod:`.saved` writes and reads
the model directory:

- ``config.json``: ``format`` ("bilstm-sentence-encoder"), ``format_version`` (1), ``pooling``,
  ``hidden`` (per direction), ``word_dim``, ``dim`` (sentence vector size), ``tokenizer``, the
  vectors file it was built from, the training parameters and provenance;
- ``vocab.txt``: the vocabulary, one word per line; line i is row i of the embedding table;
- ``model.safetensors``: every tensor of the encoder (``embedding.weight``, the frozen word
  vectors; ``lstm.*``; ``pooling.*``), float32, loaded with ``safetensors.torch.load_file``;
- ``train_log.jsonl``: one line per epoch (loss, train / dev accuracy, learning rate).
"""

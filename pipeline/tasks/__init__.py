"""The evaluation tasks of the papers (docs/method.md §5): for each, the reader of its official files and its scorer.

A task sees an encoder only through ``encode(list[str]) -> np.ndarray`` (the encoders are in
:mod:`pipeline.models`), or, for retrieval, through a scorer. This is a ground-floor package: the
``evaluate`` stage runs the tasks one at a time, the ``finetune`` stage scores STS and the analogy
while training, ``bilstm`` reads NLI pairs and ``report`` shares the GEOGRANNO length buckets. It
imports only the ground-floor modules (:mod:`pipeline.errors`, :mod:`pipeline.provenance`, ...) and
itself: a scorer is handed the encoder and never loads a model, so neither :mod:`pipeline.models` nor a
stage package is imported here.

- :mod:`.data_root`, :mod:`.numbered_lines`, :mod:`.vectors`: where a task's files are, line-numbered
  reading, cosine similarity;
- word, phrase and sentence similarity: :mod:`.analogy` (the universal analogy, ULR-BERT §4) and
  :mod:`.analogy_examples` (the questions BURT Table VII and ALBURT Table 5 print, from a package file),
  :mod:`.sts`, :mod:`.wordsim`, :mod:`.scws`, :mod:`.semeval5a`, :mod:`.ppdb`;
- retrieval: :mod:`.geogranno`, :mod:`.faq` over :mod:`.retrieval`;
- SentEval transfer: :mod:`.transfer` over :mod:`.transfer_data`, :mod:`.transfer_classifier` and
  :mod:`.transfer_regression`;
- :mod:`.nli`: SNLI / MultiNLI pairs in their official formats (fine-tuning and BiLSTM training data,
  and the SNLI test of BiLSTM Table 2).
"""

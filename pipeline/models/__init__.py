"""Everything about a model, for every stage: what a model spec names, how a model loads, runs, pools,
is saved and is identified (docs/design.md). A ground-floor package: it imports only the ground-floor
modules (:mod:`pipeline.errors`, :mod:`pipeline.atomic`, :mod:`pipeline.provenance`,
:mod:`pipeline.progress`, :mod:`pipeline.contracts`, ...) and itself, never a stage package
(``corpus``, ``ngrams``, ``pretrain``, ``finetune``, ``classify``, ``bilstm``, ``evaluate``, ``report``)
nor :mod:`pipeline.tasks`; every stage may import it.

- :mod:`.spec`: the model-spec grammar (path or hub id, ``package:``, ``hub:``, ``word2vec:``,
  ``input-embeddings:``, ``bilstm:``, ``bm25`` / ``tfidf``) as one registry of loaders;
- :mod:`.pooling`: the transformer poolings (mean / cls / max), the one ``pool()`` and their
  sentence-transformers flags;
- :mod:`.runtime`: the device, the process group under ``torchrun``, the seeds;
- :mod:`.loading`: a masked-LM backbone and its tokenizer for pre-training (ELECTRA pairs included);
- :mod:`.tokenizer_check`: the one loader of tokenizers, refusing one that did not load completely;
- :mod:`.weights`: a checkpoint's safetensors headers and config checked before its weights load;
- :mod:`.directory`: a model directory written atomically and completed (sentence-transformers files,
  pooler, card), replacing only an output of the pipeline's own;
- :mod:`.card`: the model card ``README.md``;
- :mod:`.fingerprint`: the SHA-256 of a checkpoint's files, for the metrics' provenance;
- :mod:`.transformer_encoder`: sentence embeddings from a transformers checkpoint;
- :mod:`.bags`, :mod:`.lexical`: the bag-of-vectors and lexical (BM25, TF-IDF) baselines;
- :mod:`.word_vectors`: pre-trained word vectors (GloVe, word2vec) for the BiLSTM encoders;
- :mod:`.bilstm`: the BiLSTM sentence encoder of paper 004 and its saved directory.
"""

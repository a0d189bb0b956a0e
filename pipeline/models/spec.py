"""What ``--model`` names: a transformers checkpoint, or one of the baselines (docs/method.md §5 "Baselines").

- ``PATH_OR_ID``: a local checkpoint directory or a hub id (:class:`.encoder.TransformerEncoder`);
- ``word2vec:PATH``: bag of word2vec vectors (:class:`.bags.Word2VecBag`);
- ``input-embeddings:PATH_OR_ID``: bag of that model's input embeddings (:class:`.bags.InputEmbeddingBag`);
- ``bilstm:DIR``: a BiLSTM sentence encoder of the ``bilstm`` stage (:class:`pipeline.models.bilstm.saved.SavedBiLSTM`);
- ``bm25`` / ``tfidf``: lexical scorers (:mod:`.lexical`), for the retrieval tasks only.
"""

from __future__ import annotations

POOLINGS = ("mean", "cls", "max")
LEXICAL = ("bm25", "tfidf")
# Imports stay inside load_model: torch / transformers / scikit-learn cost seconds to import,
# and a run needs only one kind of model.


def load_model(spec: str, pooling: str = "mean", batch_size: int = 64, max_length: int = 128):
    if spec in LEXICAL:
        from pipeline.models.lexical import BM25Scorer, TfidfScorer

        return {"bm25": BM25Scorer, "tfidf": TfidfScorer}[spec]()
    if spec.startswith("word2vec:"):
        from pipeline.models.bags import Word2VecBag

        return Word2VecBag(spec.removeprefix("word2vec:"))
    if spec.startswith("input-embeddings:"):
        from pipeline.models.bags import InputEmbeddingBag

        return InputEmbeddingBag(spec.removeprefix("input-embeddings:"))
    if spec.startswith("bilstm:"):
        from pipeline.models.bilstm.saved import SavedBiLSTM

        return SavedBiLSTM(spec.removeprefix("bilstm:"), batch_size=batch_size)
    from pipeline.models.transformer_encoder import TransformerEncoder

    return TransformerEncoder(spec, pooling=pooling, batch_size=batch_size, max_length=max_length)


def model_path(spec: str) -> str | None:
    """The checkpoint or vector file behind ``spec`` (None for the lexical baselines)."""
    if spec in LEXICAL:
        return None
    for prefix in ("word2vec:", "input-embeddings:", "bilstm:"):
        if spec.startswith(prefix):
            return spec.removeprefix(prefix)
    return spec

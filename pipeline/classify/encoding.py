"""Examples → model inputs for each head, and model outputs → predictions.

Pairs are joined by the tokenizer's own pair template (``[CLS] a [SEP] b [SEP]`` for BERT;
ULR-BERT §5.1.2 "concatenated into a single sequence with a special token [SEP] in between").
Span extraction follows the standard SQuAD recipe of the ``transformers`` examples: the context
is cut into windows of ``max_length`` tokens overlapping by ``doc_stride``, each window labelled
with the answer's token span (or [CLS] when the answer is not inside it), and the best span
over all windows of a question (start + end logit, at most ``max_answer_tokens`` long) is the
prediction. Multiple choice encodes one (first segment, option) pair per option; a cloze (ChID)
encodes each filled passage alone, its window of ``max_length`` tokens centred on the blank as
CLUE's ChID baseline cuts it (``add_tokens_for_around`` in ``CHID_preprocess.py``: half the budget
left of the blank, half right, a short side's unused share given to the other), so a blank late in
a long passage stays inside and the options differ. Every option of one blank keeps the same
context tokens; only the candidate differs.
"""

from __future__ import annotations

import numpy as np
import torch

from pipeline.classify.examples import Example


class Features(torch.utils.data.Dataset):
    """Tokenized features (one dict per model input), the shape ``Trainer`` and the collators expect."""

    def __init__(self, rows: list[dict]):
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> dict:
        return self.rows[index]


def _label_id(task, example: Example):
    if example.label is None:
        return None
    if task.head == "regression":
        return float(example.label)
    if task.head == "classification":
        return task.labels.index(example.label)
    return int(example.label)


def _rows(encoded, labels) -> list[dict]:
    keys = list(encoded.keys())
    rows = []
    for i in range(len(encoded[keys[0]])):
        row = {key: encoded[key][i] for key in keys}
        if labels[i] is not None:
            row["labels"] = labels[i]
        rows.append(row)
    return rows


def encode_sequences(task, tokenizer, examples: list[Example], max_length: int) -> Features:
    pairs = any(example.text_b is not None for example in examples)
    encoded = tokenizer(
        [e.text_a for e in examples],
        [e.text_b or "" for e in examples] if pairs else None,
        truncation=True,
        max_length=max_length,
    )
    return Features(_rows(encoded, [_label_id(task, e) for e in examples]))


def around_blank(before: list[int], after: list[int], budget: int) -> tuple[list[int], list[int]]:
    """The last tokens of ``before`` and the first of ``after``, ``budget`` in all (or all there
    are): half on each side, a side's unused share going to the other (CLUE's ``add_tokens_for_around``)."""
    budget = max(budget, 0)
    left = min(len(before), max(budget // 2, budget - len(after)))
    return before[len(before) - left :], after[: budget - left]


def encode_cloze(tokenizer, example: Example, max_length: int):
    """One input per option: the passage's tokens around the blank with the candidate in it. The
    window is chosen in tokens and cut from the text at token offsets (a fast tokenizer's offset
    mapping), so the inputs are made by the tokenizer's own template."""
    before, after = example.cloze
    sides = tokenizer([before, after], add_special_tokens=False, return_offsets_mapping=True)
    # each option is before + candidate + after (clue_readers), so the candidate is the middle
    candidates = [choice[len(before) : len(choice) - len(after)] for choice in example.choices]
    longest = max(len(ids) for ids in tokenizer(candidates, add_special_tokens=False)["input_ids"])
    room = max_length - tokenizer.num_special_tokens_to_add(pair=False) - longest
    left, right = around_blank(*sides["offset_mapping"], room)
    start = left[0][0] if left else len(before)
    end = right[-1][1] if right else 0
    return tokenizer(
        [before[start:] + candidate + after[:end] for candidate in candidates], truncation=True, max_length=max_length
    )


def encode_choices(task, tokenizer, examples: list[Example], max_length: int) -> Features:
    rows = []
    for example in examples:
        if example.cloze is not None:
            encoded = encode_cloze(tokenizer, example, max_length)
        elif example.text_a:
            encoded = tokenizer(
                [example.text_a] * len(example.choices),
                example.choices,
                truncation="longest_first",
                max_length=max_length,
            )
        else:  # the option is the whole input
            encoded = tokenizer(example.choices, truncation=True, max_length=max_length)
        row = {key: list(value) for key, value in encoded.items()}
        if example.label is not None:
            row["labels"] = int(example.label)
        rows.append(row)
    return Features(rows)


class SpanFeatures(Features):
    """Windows of span extraction, with what post-processing needs to map them back."""

    def __init__(self, rows, example_index, offsets):
        super().__init__(rows)
        self.example_index = example_index  # window -> example
        self.offsets = offsets  # window -> (start, end) per token, None outside the context


def encode_spans(tokenizer, examples: list[Example], max_length: int, doc_stride: int) -> SpanFeatures:
    encoded = tokenizer(
        [e.text_a for e in examples],
        [e.context for e in examples],
        truncation="only_second",
        max_length=max_length,
        stride=doc_stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
    )
    rows, example_index, offsets = [], [], []
    for window in range(len(encoded["input_ids"])):
        source = encoded["overflow_to_sample_mapping"][window]
        sequence_ids = encoded.sequence_ids(window)
        window_offsets = [
            span if sequence_ids[k] == 1 else None for k, span in enumerate(encoded["offset_mapping"][window])
        ]
        row = {key: encoded[key][window] for key in ("input_ids", "attention_mask", "token_type_ids") if key in encoded}
        answers = examples[source].answers
        if answers:
            text, start_char = answers[0]
            end_char = start_char + len(text)
            start = end = 0  # [CLS]: the answer is not in this window
            inside = [k for k, span in enumerate(window_offsets) if span is not None]
            if window_offsets[inside[0]][0] <= start_char and window_offsets[inside[-1]][1] >= end_char:
                start = next(k for k in inside if window_offsets[k][1] > start_char)
                end = next(k for k in reversed(inside) if window_offsets[k][0] < end_char)
            row["start_positions"], row["end_positions"] = start, end
        rows.append(row)
        example_index.append(source)
        offsets.append(window_offsets)
    return SpanFeatures(rows, example_index, offsets)


def best_spans(
    features: SpanFeatures,
    examples: list[Example],
    start_logits,
    end_logits,
    n_best: int = 20,
    max_answer_tokens: int = 30,
) -> list[str]:
    """The answer text of each example: the best-scoring valid span over its windows."""
    best: dict[int, tuple[float, str]] = {}
    for window, source in enumerate(features.example_index):
        offsets = features.offsets[window]
        starts = np.argsort(start_logits[window])[::-1][:n_best]
        ends = np.argsort(end_logits[window])[::-1][:n_best]
        for s in starts:
            for e in ends:
                if s >= len(offsets) or e >= len(offsets) or offsets[s] is None or offsets[e] is None:
                    continue
                if e < s or e - s + 1 > max_answer_tokens:
                    continue
                score = float(start_logits[window][s] + end_logits[window][e])
                if source not in best or score > best[source][0]:
                    best[source] = (score, examples[source].context[offsets[s][0] : offsets[e][1]])
    return [best.get(i, (0.0, ""))[1] for i in range(len(examples))]


def encode(task, tokenizer, examples: list[Example], max_length: int, doc_stride: int = 128) -> Features:
    if task.head == "span":
        return encode_spans(tokenizer, examples, max_length, doc_stride)
    if task.head == "choice":
        return encode_choices(task, tokenizer, examples, max_length)
    return encode_sequences(task, tokenizer, examples, max_length)

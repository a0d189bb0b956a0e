"""Readers of the CLUE files (CLUE 1.1 releases and their FewCLUE versions, same fields).

Inputs follow the CLUE baselines (``CLUEbenchmark/CLUE``, ``baselines/models/bert``):

- TNEWS, IFLYTEK: the ``sentence``; labels are the label codes (``100``…``116`` / ``0``…``118``).
- AFQMC, OCNLI: ``sentence1`` / ``sentence2``; OCNLI pairs with gold label ``-`` are dropped.
- CSL: the keywords joined by spaces, then the abstract.
- CLUEWSC2020: the text with the candidate noun phrase wrapped in ``_…_`` and the pronoun in
  ``[…]`` (the baseline's ``WscProcessor``), classified true / false by the [CLS] head.
- CMRC 2018: SQuAD v1.1 JSON; every question one example with its gold answers.
- ChID (FewCLUE layout): ``content`` with one ``#idiom#`` blank, seven ``candidates``, the
  ``answer`` index; each option is the content with the blank filled by a candidate, and the
  encoder keeps the tokens around the blank (``Example.cloze``), as CLUE's ChID baseline does.
- C3: ``[sentences, [{question, choice, answer}], id]`` items; options are padded to four
  with the baseline's placeholder ``无效答案`` ("invalid answer").
"""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.classify.examples import Example
from pipeline.classify.file_formats import field, json_document, json_lines
from pipeline.classify.glue_readers import NO_GOLD_LABEL, check_label
from pipeline.errors import InputError

C3_OPTIONS = 4
C3_PADDING = "无效答案"
CHID_BLANK = "#idiom#"
CHID_TAG = re.compile(r"#idiom\d+#")  # CLUE's release numbers its blanks


def _label(path, labels, row, number):
    if "label" not in row:
        return None
    return check_label(path, labels, str(row["label"]), f"line {number}")


def _row_id(row: dict, fallback: int) -> str:
    return str(row.get("id", row.get("idx", fallback)))


def read_single(path: Path, labels: tuple[str, ...]) -> list[Example]:
    return [
        Example(
            id=_row_id(row, i), text_a=field(path, row, "sentence", number), label=_label(path, labels, row, number)
        )
        for i, (number, row) in enumerate(json_lines(path))
    ]


def read_pair(path: Path, labels: tuple[str, ...]) -> list[Example]:
    examples = []
    for i, (number, row) in enumerate(json_lines(path)):
        if str(row.get("label")) == NO_GOLD_LABEL:
            continue
        examples.append(
            Example(
                id=_row_id(row, i),
                text_a=field(path, row, "sentence1", number),
                text_b=field(path, row, "sentence2", number),
                label=_label(path, labels, row, number),
            )
        )
    return examples


def read_csl(path: Path, labels: tuple[str, ...]) -> list[Example]:
    examples = []
    for i, (number, row) in enumerate(json_lines(path)):
        keywords = field(path, row, "keyword", number)
        if not isinstance(keywords, list):
            raise InputError(path, f"'keyword' must be a list, found {type(keywords).__name__}", where=f"line {number}")
        examples.append(
            Example(
                id=_row_id(row, i),
                text_a=" ".join(keywords),
                text_b=field(path, row, "abst", number),
                label=_label(path, labels, row, number),
            )
        )
    return examples


def wsc_text(path: Path, row: dict, number: int) -> str:
    """The text with span 1 (the noun phrase) as ``_span_`` and span 2 (the pronoun) as ``[span]``."""
    text = field(path, row, "text", number)
    target = field(path, row, "target", number)
    marks = []
    for key, left, right in (("span1", "_", "_"), ("span2", "[", "]")):
        start, surface = field(path, target, f"{key}_index", number), field(path, target, f"{key}_text", number)
        if not isinstance(start, int) or text[start : start + len(surface)] != surface:
            raise InputError(
                path, f"{key}_text {surface!r} is not at {key}_index {start!r} of the text", where=f"line {number}"
            )
        marks.append((start, start + len(surface), left, right))
    for start, end, left, right in sorted(marks, reverse=True):  # right to left keeps offsets valid
        text = text[:start] + left + text[start:end] + right + text[end:]
    return text


def read_wsc(path: Path, labels: tuple[str, ...]) -> list[Example]:
    return [
        Example(id=_row_id(row, i), text_a=wsc_text(path, row, number), label=_label(path, labels, row, number))
        for i, (number, row) in enumerate(json_lines(path))
    ]


def read_cmrc(path: Path, labels=None) -> list[Example]:
    document = json_document(path)
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise InputError(path, "expected SQuAD JSON with a top-level 'data' list")
    examples = []
    for article in document["data"]:
        for paragraph in field(path, article, "paragraphs", "an article"):
            context = field(path, paragraph, "context", "a paragraph")
            for qa in field(path, paragraph, "qas", "a paragraph"):
                qid = str(field(path, qa, "id", "a question"))
                answers = [(a["text"], int(a["answer_start"])) for a in qa.get("answers", [])]
                examples.append(
                    Example(
                        id=qid,
                        text_a=field(path, qa, "question", qid),
                        context=context,
                        answers=answers,
                        label=0 if answers else None,
                    )
                )
    return examples


def read_chid(path: Path, labels=None) -> list[Example]:
    """ChID as FewCLUE ships it (one blank ``#idiom#`` and its ``answer`` per line) or as CLUE's
    release does: per line, ``candidates`` and a list of passages whose blanks are numbered tags
    (``#idiom000378#``), with the answers in the sibling ``<split>_answer.json`` ({tag: index}).
    Each blank is one example (its id the tag); the other blanks of its passage are left out."""
    rows = json_lines(path)
    if rows and isinstance(rows[0][1].get("content"), list):
        return _read_chid_release(path, rows)
    examples = []
    for i, (number, row) in enumerate(rows):
        content, candidates = field(path, row, "content", number), field(path, row, "candidates", number)
        if CHID_BLANK not in content:
            raise InputError(path, f"content has no {CHID_BLANK} blank", where=f"line {number}")
        answer = row.get("answer")
        _check_answer(path, answer, candidates, f"line {number}")
        before, _, after = content.partition(CHID_BLANK)
        after = after.replace(CHID_BLANK, "")
        examples.append(
            Example(
                id=_row_id(row, i),
                text_a="",
                label=answer,
                choices=[before + candidate + after for candidate in candidates],
                cloze=(before, after),
            )
        )
    return examples


def _check_answer(path: Path, answer, candidates: list, where: str) -> None:
    if answer is not None and not (isinstance(answer, int) and 0 <= answer < len(candidates)):
        raise InputError(path, f"answer {answer!r} is not an index into the {len(candidates)} candidates", where=where)


def _read_chid_release(path: Path, rows: list[tuple[int, dict]]) -> list[Example]:
    answer_file = path.with_name(f"{path.stem}_answer.json")
    answers = json_document(answer_file) if answer_file.is_file() else {}
    if not isinstance(answers, dict):
        raise InputError(answer_file, "expected one JSON object {blank tag: candidate index}")
    examples = []
    for number, row in rows:
        candidates, passages = field(path, row, "candidates", number), field(path, row, "content", number)
        if not isinstance(passages, list):
            raise InputError(path, "content must be a list of passages in CLUE's ChID layout", where=f"line {number}")
        for passage in passages:
            tags = CHID_TAG.findall(passage)
            if not tags:
                raise InputError(path, "a passage has no #idiomNNNNNN# blank", where=f"line {number}")
            for tag in tags:
                if answers and tag not in answers:
                    raise InputError(answer_file, f"no answer for {tag}")
                answer = answers.get(tag)
                _check_answer(answer_file, answer, candidates, tag)
                before, _, after = passage.partition(tag)
                before, after = CHID_TAG.sub("", before), CHID_TAG.sub("", after)
                choices = [before + candidate + after for candidate in candidates]
                examples.append(Example(id=tag, text_a="", label=answer, choices=choices, cloze=(before, after)))
    return examples


def read_c3(paths: list[Path], labels=None) -> list[Example]:
    """C3's dialogue (``-d-``) and mixed-genre (``-m-``) files of one split, one example per question."""
    examples = []
    for path in paths:
        document = json_document(path)
        if not isinstance(document, list):
            raise InputError(path, "expected a JSON list of [sentences, questions, id] items")
        genre = path.stem.split("-")[1] if path.stem.count("-") >= 2 else path.stem  # c3-d-dev -> d
        for item in document:
            if not (isinstance(item, list) and len(item) == 3):
                raise InputError(path, f"an item must be [sentences, questions, id], found {str(item)[:80]}")
            sentences, questions, item_id = item
            passage = "".join(sentences)
            for k, question in enumerate(questions):
                where = f"item {item_id}, question {k}"
                choices = list(field(path, question, "choice", where))
                if len(choices) > C3_OPTIONS:
                    raise InputError(path, f"{len(choices)} options, at most {C3_OPTIONS}", where=where)
                answer = question.get("answer")
                if answer is not None and answer not in choices:
                    raise InputError(path, f"answer {answer!r} is not one of the options", where=where)
                examples.append(
                    Example(
                        id=f"{genre}-{item_id}-{k}",
                        text_a=passage,
                        label=None if answer is None else choices.index(answer),
                        choices=[
                            f"{question['question']} {choice}"
                            for choice in choices + [C3_PADDING] * (C3_OPTIONS - len(choices))
                        ],
                    )
                )
    return examples

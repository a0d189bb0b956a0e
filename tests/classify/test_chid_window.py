"""ChID's window: centred on the blank (CLUE's ChID baseline, ``add_tokens_for_around``), so a blank
late in one of CLUE's long passages stays inside the 256 tokens and the options differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from transformers import AutoTokenizer

from pipeline.classify import encoding, tasks

MAX_LENGTH = 256
BLANKS = {0: "#idiom000001#", 6: "#idiom000002#", 11: "#idiom000003#"}  # FewCLUE row -> its blank's tag


def _long_release(data_root: Path, folder: Path) -> dict:
    """One line of CLUE's own ChID layout with one long passage (CLUE's passages run to hundreds of
    characters), written from twelve real FewCLUE rows run together: the blanks of rows 0, 6 and 11
    stay blanks (early, middle and late in the passage), the others are filled with their answers;
    the candidates are the three answers and the same rows' other candidates, ten in all (CLUE's
    release shares one candidate list among a line's blanks)."""
    rows = [json.loads(line) for line in (data_root / "chinese/fewclue/chid/dev_few_all.json").open(encoding="utf-8")]
    rows = rows[:12]
    candidates = list(dict.fromkeys([rows[k]["candidates"][rows[k]["answer"]] for k in BLANKS]))
    for k in BLANKS:
        candidates += [c for c in rows[k]["candidates"] if c not in candidates]
    candidates = candidates[:10]
    passage = "".join(
        row["content"].replace("#idiom#", BLANKS[k] if k in BLANKS else row["candidates"][row["answer"]], 1)
        for k, row in enumerate(rows)
    )
    answers = {tag: candidates.index(rows[k]["candidates"][rows[k]["answer"]]) for k, tag in BLANKS.items()}
    folder.mkdir(parents=True, exist_ok=True)
    line = {"candidates": candidates, "content": [passage]}
    (folder / "dev.json").write_text(json.dumps(line, ensure_ascii=False) + "\n", "utf-8")
    (folder / "dev_answer.json").write_text(json.dumps(answers), "utf-8")
    return line


@pytest.fixture(scope="module")
def tokenizer(tiny_zh):
    return AutoTokenizer.from_pretrained(tiny_zh)


@pytest.fixture(scope="module")
def long_release(data_root, tmp_path_factory):
    root = tmp_path_factory.mktemp("chid-long")
    line = _long_release(data_root, root / "chinese/chid")
    chid = tasks.TASKS["chid"]
    return {e.id: e for e in chid.read(chid.split_files(root, "dev"))}, line


def _tokens(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def _window(tokenizer, example, option: list[int], candidate: list[int]) -> tuple[int, int]:
    """(tokens left of the candidate, tokens right of it) of one encoded option, checked to be the
    passage's own tokens next to the blank."""
    before, after = (_tokens(tokenizer, side) for side in example.cloze)
    assert option[0] == tokenizer.cls_token_id and option[-1] == tokenizer.sep_token_id
    body = option[1:-1]
    right = next(n for n in range(min(len(body), len(after)), -1, -1) if body[len(body) - n :] == after[:n])
    left = len(body) - right - len(candidate)
    assert body[:left] == before[len(before) - left :] and body[left : left + len(candidate)] == candidate
    return left, right


@pytest.mark.parametrize("tag", BLANKS.values())
def test_a_blank_anywhere_in_a_long_passage_stays_inside_the_window(long_release, tokenizer, tag):
    examples, line = long_release
    example = examples[tag]
    before, after = (_tokens(tokenizer, side) for side in example.cloze)
    assert len(before) + len(after) > 3 * MAX_LENGTH  # the passage is long
    cut = tokenizer(example.choices, truncation=True, max_length=MAX_LENGTH)["input_ids"]
    if len(before) > MAX_LENGTH:  # cut from the right (the old encoding) the options were one input
        assert len({tuple(ids) for ids in cut}) == 1

    row = encoding.encode_choices(tasks.TASKS["chid"], tokenizer, [example], MAX_LENGTH)[0]
    assert row["labels"] == example.label
    assert len({tuple(ids) for ids in row["input_ids"]}) == len(line["candidates"]) == 10
    widths = [_tokens(tokenizer, c) for c in line["candidates"]]
    sides = {_window(tokenizer, example, option, ids) for option, ids in zip(row["input_ids"], widths, strict=True)}
    assert len(sides) == 1  # every option has the same context; only the candidate differs
    (left, right), longest = sides.pop(), max(len(ids) for ids in widths)
    assert left + right + longest == MAX_LENGTH - 2  # the whole budget is used, [CLS] and [SEP] aside
    if len(before) >= MAX_LENGTH // 2 and len(after) >= MAX_LENGTH // 2:
        assert abs(left - right) <= 1  # centred
    else:  # the short side whole, the rest to the other
        assert left == len(before) or right == len(after)


def test_short_passages_encode_as_before(data_root, tokenizer):
    """The real FewCLUE ChID passages fit in 256 tokens: their inputs are the whole filled passage,
    token for token what the right-cut encoding gave."""
    chid = tasks.TASKS["chid"]
    examples = chid.read([data_root / "chinese/fewclue/chid/dev_few_all.json"])[:60]
    rows = list(encoding.encode_choices(chid, tokenizer, examples, MAX_LENGTH))
    for example, row in zip(examples, rows, strict=True):
        whole = tokenizer(example.choices, truncation=True, max_length=MAX_LENGTH)
        assert row["input_ids"] == whole["input_ids"] and row["attention_mask"] == whole["attention_mask"]
        assert row["token_type_ids"] == whole["token_type_ids"]


@pytest.mark.parametrize(
    ("before", "after", "budget", "expected"),
    [
        (10, 10, 6, (3, 3)),  # room on both sides: half and half
        (10, 10, 7, (3, 4)),  # an odd token goes right, as in CLUE's baseline
        (1, 10, 6, (1, 5)),  # the blank near the start: the rest goes right
        (10, 2, 6, (4, 2)),  # near the end: the rest goes left
        (2, 3, 9, (2, 3)),  # everything fits
        (4, 4, 0, (0, 0)),  # a candidate that fills the window leaves no context
        (4, 4, -3, (0, 0)),
    ],
)
def test_around_blank(before, after, budget, expected):
    left, right = encoding.around_blank(list(range(before)), list(range(100, 100 + after)), budget)
    assert (len(left), len(right)) == expected
    assert left == list(range(before))[before - len(left) :] and right == list(range(100, 100 + len(right)))

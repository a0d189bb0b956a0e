"""The printed analogy examples (BURT Table VII, ALBURT Table 5): the package file holds the tables'
questions as printed, each candidate is scored cos(b - a + c, d) (checked against a direct computation), and
a malformed file is refused naming itself."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.errors import InputError
from pipeline.tasks import analogy_examples
from pipeline.tasks.analogy_examples import EXAMPLES, read_questions
from pipeline.tasks.data_root import DataRoot


def test_the_package_file_holds_the_printed_questions():
    questions = {q.key: q for q in read_questions()}
    assert list(questions) == ["efficient", "species", "associated"]
    efficient = questions["efficient"]
    assert efficient.tables == ("BURT Table VII", "ALBURT Table 5")
    assert (efficient.a, efficient.b) == ("Barton’s inquiry was reasonable", "Barton’s inquiry was not reasonable")
    assert efficient.c == "Changing the sign of numbers is an efficient algorithm"
    assert questions["species"].c == "This ant is a known species" and questions["species"].tables == (
        "BURT Table VII",
    )
    assert questions["associated"].c == "The associated ant is known"
    assert questions["associated"].tables == ("ALBURT Table 5",)
    for question in questions.values():
        (gold, gold_text), (other, other_text) = question.candidates
        # the bold one is the candidate without "not" (BURT §6.2, ALBURT (5)), listed first
        assert gold.endswith("_gold") and " not " not in gold_text
        assert other.endswith("_not") and " not " in other_text


def test_each_candidate_is_scored_cos_b_minus_a_plus_c_against_it():
    questions = read_questions()
    texts = sorted({t for q in questions for t in analogy_examples.sentences(q)})
    generator = np.random.default_rng(7)
    table = {text: generator.normal(size=5).tolist() for text in texts}

    class Encoder:
        def encode(self, strings):
            return np.array([table[s] for s in strings])

    result = analogy_examples.evaluate(Encoder(), questions)
    assert result["n"] == 3 and len(result["scores"]) == 6

    def unit(text):
        vector = np.asarray(table[text])
        return vector / np.linalg.norm(vector)

    for question, shown in zip(questions, result["questions"], strict=True):
        target = unit(question.b) - unit(question.a) + unit(question.c)
        expected = [100 * target @ unit(text) / np.linalg.norm(target) for _, text in question.candidates]
        assert [c["score"] for c in shown["candidates"]] == pytest.approx(expected, abs=1e-9)
        assert [result["scores"][key] for key, _ in question.candidates] == pytest.approx(expected, abs=1e-9)
        assert [c["gold"] for c in shown["candidates"]] == [True, False]
        assert shown["right"] == (expected[0] > expected[1])


def test_right_is_the_gold_scoring_strictly_highest(table_encoder):
    (question,) = [q for q in read_questions() if q.key == "efficient"]
    (gold, gold_text), (other, other_text) = question.candidates
    # b - a + c = (0, 1) - (1, 0) + (1, 0) = (0, 1): the gold at (0, 1) scores 100, the other at (1, 1) 70.71
    table = {question.a: [1, 0], question.b: [0, 1], question.c: [1, 0], gold_text: [0, 1], other_text: [1, 1]}
    shown = analogy_examples.evaluate(table_encoder(table), [question])
    assert shown["scores"] == pytest.approx({gold: 100.0, other: 100 / np.sqrt(2)})
    assert shown["questions"][0]["right"] is True
    tied = analogy_examples.evaluate(table_encoder({**table, other_text: [0, 2]}), [question])
    assert tied["scores"] == pytest.approx({gold: 100.0, other: 100.0})
    assert tied["questions"][0]["right"] is False  # a tie is no win, as in the analogy's accuracy


def test_the_package_file_is_the_tasks_recorded_input(tmp_path):
    data = DataRoot(tmp_path)
    questions = data.load(analogy_examples.load)
    assert len(questions) == 3 and data.used == [EXAMPLES]
    assert data.fingerprints()[0]["sha256"] and data.fingerprints()[0]["bytes"] == EXAMPLES.stat().st_size


@pytest.mark.parametrize(
    "text, message",
    [
        ("questions: []\n", "expected a 'questions' list"),
        ("questions:\n  - {key: q, tables: [T], a: A, b: B, c: C}\n", "question 1: needs key, tables"),
        (
            "questions:\n  - {key: q, tables: [T], a: A, b: B, c: C, candidates: [{key: d, text: D}]}\n",
            "question q: needs at least two candidates",
        ),
        (
            "questions:\n  - {key: q, tables: [T], a: A, b: B, c: C, candidates: [{key: d, text: D}, {key: d, text: E}]}\n",
            "keys given twice: d",
        ),
    ],
)
def test_a_malformed_file_is_refused_naming_it(tmp_path, text, message):
    path = tmp_path / "examples.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        read_questions(path)
    assert "examples.yaml" in str(caught.value)

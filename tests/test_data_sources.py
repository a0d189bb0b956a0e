"""The evaluation data's download list names, with the right checksum, every file the tasks read."""

from __future__ import annotations

import hashlib

import yaml
from testdata import REPO

SOURCES = REPO / "workflow" / "data" / "evaluation-sources.yaml"


def test_every_listed_file_matches_the_real_data(data_root):
    sources = yaml.safe_load(SOURCES.read_text())
    assert set(sources) == {"analogy", "sts", "wordsim", "geogranno", "faq", "ppdb", "semeval5a"}
    for files in sources.values():
        for path, spec in files.items():
            assert spec["url"].startswith("https://"), path
            assert hashlib.sha256((data_root / path).read_bytes()).hexdigest() == spec["sha256"], path


def test_the_lists_cover_what_the_tasks_read(data_root):
    sources = yaml.safe_load(SOURCES.read_text())
    listed = {path for files in sources.values() for path in files}
    for folder in ("ulr_analogy", "sts", "word_similarity/eval-word-vectors"):
        on_disk = {str(p.relative_to(data_root)) for p in (data_root / folder).rglob("*") if p.is_file()}
        assert on_disk <= listed, sorted(on_disk - listed)[:5]
    assert {"sick/SICK.txt", "geogranno/train_geo_granno.jsonl", "geogranno/dev_geo_granno.jsonl",
            "chinese/afqmc/dev.json", "chinese/bq_corpus/dev.tsv", "chinese/fewclue/bustm/test_public.json"} <= listed
    from pipeline.evaluate import ppdb, semeval5a

    assert {*ppdb.FILES.values(), *semeval5a.SPLITS.values()} <= listed

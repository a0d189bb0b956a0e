"""The evaluation data's download list names, with the right checksum, every file the tasks read."""

from __future__ import annotations

import hashlib

import yaml
from testdata import REPO

SOURCES = REPO / "workflow" / "data" / "evaluation-sources.yaml"


def test_every_listed_file_matches_the_real_data(data_root):
    sources = yaml.safe_load(SOURCES.read_text())
    assert set(sources) == {
        "analogy",
        "sts",
        "wordsim",
        "geogranno",
        "faq",
        "ppdb",
        "semeval5a",
        "nli",
        "transfer",
        "glue",
        "clue",
    }
    for files in sources.values():
        for path, spec in files.items():
            urls = spec["parts"] if "parts" in spec else [spec["url"]]
            assert urls and all(url.startswith("https://") for url in urls), path
            assert hashlib.sha256((data_root / path).read_bytes()).hexdigest() == spec["sha256"], path


def test_the_lists_cover_what_the_tasks_read(data_root):
    sources = yaml.safe_load(SOURCES.read_text())
    listed = {path for files in sources.values() for path in files}
    for folder in ("ulr_analogy", "sts", "word_similarity/eval-word-vectors"):
        on_disk = {str(p.relative_to(data_root)) for p in (data_root / folder).rglob("*") if p.is_file()}
        assert on_disk <= listed, sorted(on_disk - listed)[:5]
    assert {
        "sick/SICK.txt",
        "geogranno/train_geo_granno.jsonl",
        "geogranno/dev_geo_granno.jsonl",
        "chinese/afqmc/dev.json",
        "chinese/bq_corpus/dev.tsv",
        "chinese/fewclue/bustm/test_public.json",
    } <= listed
    from pipeline.tasks import ppdb, semeval5a

    assert {*ppdb.FILES.values(), *semeval5a.SPLITS.values()} <= listed


def test_the_lists_cover_what_the_sample_stages_read(data_root):
    """Fine-tuning's and the BiLSTM's NLI files, the transfer tasks' and classify's (every split it
    finds for the sample's GLUE / CLUE tasks) are all listed, the two training sets rebuilt from parts too."""
    from pipeline.classify.tasks import TASKS
    from pipeline.tasks import transfer_data

    sources = yaml.safe_load(SOURCES.read_text())
    listed = {path for files in sources.values() for path in files}
    sample = yaml.safe_load((REPO / "workflow" / "config" / "sample.yaml").read_text())
    nli = {
        "nli/snli_dev_test/s1.dev",
        "nli/snli_dev_test/s2.dev",
        "nli/snli_dev_test/labels.dev",
        *(spec for spec in sample["finetune"]["nli"] if ":" not in spec),
    }
    nli |= {"nli/snli_dev_test_csv/snli_1.0_dev.csv", "nli/snli_dev_test_csv/snli_1.0_test.csv"}  # bilstm defaults
    assert nli <= listed, sorted(nli - listed)
    transfer = {
        str(p.relative_to(data_root))
        for folder, _ in transfer_data.SINGLE_FILES.values()
        for p in (data_root / folder).iterdir()
    }
    transfer |= {
        str(p.relative_to(data_root))
        for folder in ("senteval/SST/binary", "senteval/TREC", "sts/STS14")
        for p in (data_root / folder).iterdir()
    }
    transfer |= {"glue/MRPC/msr_paraphrase_train.txt", "glue/MRPC/msr_paraphrase_test.txt", "sick/SICK.txt"}
    assert transfer <= listed, sorted(transfer - listed)
    read = set()
    for benchmark in ("glue", "clue"):
        for name in sample["classify"][benchmark]["tasks"]:
            task = TASKS[name]
            for split in (*task.splits, *task.extra_dev, *task.extra_test):
                read |= {str(p.relative_to(data_root)) for p in task.split_files(data_root, split) or ()}
    assert read and read <= listed, sorted(read - listed)

"""The rehearsal mirror: every download of the paper configs served on 127.0.0.1 and fetched by the real stage.

The mirrors of paper-en and paper-zh are built once (the real data root is needed: skipped without
it) and served by one local file server. The download stage runs as the workflow runs it: ``python -m
pipeline download`` in a subprocess, with the flags ``workflow/rules/functions/download.smk`` builds
from the rewritten entry.
"""

from __future__ import annotations

import bz2
import copy
import hashlib
import json
import os
import re
import runpy
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest
import yaml

from pipeline.rehearsal import file_server, mirror, stand_ins

REPO = Path(__file__).resolve().parents[2]
LANGS = ("en", "zh")
# classification-sources.yaml folders -> the task that reads them (workflow/rules/functions/classify.smk)
TASK_OF_FOLDER = {
    "glue/MNLI/": "mnli",
    "glue/QNLI/": "qnli",
    "glue/QQP/": "qqp",
    "glue/STS-B/": "stsb",
    "chinese/tnews/": "tnews",
    "chinese/iflytek/": "iflytek",
    "chinese/cluewsc2020/": "cluewsc",
    "chinese/afqmc/": "afqmc",
    "chinese/csl/": "csl",
    "chinese/chid/": "chid",
    "chinese/ocnli/": "ocnli",
    "chinese/cmrc2018/": "cmrc2018",
}


def _download_flags():
    """source_flags and checksum_flags, read from the workflow's own file."""
    namespace = runpy.run_path(str(REPO / "workflow" / "rules" / "functions" / "download.smk"))
    return namespace["source_flags"], namespace["checksum_flags"]


SOURCE_FLAGS, CHECKSUM_FLAGS = _download_flags()


def paper_config(lang: str) -> dict:
    return yaml.safe_load((REPO / "workflow" / "config" / f"paper-{lang}.yaml").read_text(encoding="utf-8"))


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def download_command(spec: dict, out: Path) -> list[str]:
    return [sys.executable, "-m", "pipeline", "download", *SOURCE_FLAGS(spec), "--out", str(out), *CHECKSUM_FLAGS(spec)]


def fetch(built: mirror.Mirror, key: str, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        download_command(built.downloads[key], out), cwd=REPO, capture_output=True, text=True, check=False, timeout=300
    )


def fetched(built: mirror.Mirror, key: str, folder: Path) -> Path:
    """Download ``key`` from the mirror into ``folder`` (its data-root path kept) and check it."""
    out = folder / key
    result = fetch(built, key, out)
    assert result.returncode == 0, result.stderr
    assert sha256(out) == built.sha256[key]
    return out


def unpack(archive: Path, member: str, out: Path) -> Path:
    command = [sys.executable, "-m", "pipeline", "classify-unpack", "--archive", str(archive)]
    result = subprocess.run(
        [*command, "--member", member, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def served(data_root, tmp_path_factory):
    """(server, {lang: Mirror}): both paper configs' mirrors under one file server."""
    root = tmp_path_factory.mktemp("mirrors")
    with file_server.start(root / "files") as server:
        built = {
            lang: mirror.build(
                paper_config(lang),
                REPO,
                data_root,
                root / "files" / lang,
                f"{server.url}/{lang}",
                sources_dir=root / "sources" / lang,
            )
            for lang in LANGS
        }
        yield server, built


@pytest.fixture(scope="module")
def en(served):
    return served[1]["en"]


@pytest.fixture(scope="module")
def zh(served):
    return served[1]["zh"]


# ------------------------------------------------------------------ byte-identical copies
@pytest.mark.parametrize(
    "key", ["sick/SICK.txt", "ulr_analogy/semantic/word/capital-common.txt", "nli/snli_1.0/snli_1.0_dev.csv"]
)
def test_copies_download_byte_for_byte(en, data_root, tmp_path, key):
    out = fetched(en, key, tmp_path)
    real = {"nli/snli_1.0/snli_1.0_dev.csv": "nli/snli_dev_test_csv/snli_1.0_dev.csv"}.get(key, key)
    assert out.read_bytes() == (data_root / real).read_bytes()
    served_file = en.path_of(en.downloads[key]["url"])
    assert served_file.is_symlink()
    assert en.origins[served_file.relative_to(en.root).as_posix()] == f"copy of {real}"


@pytest.mark.parametrize("key", ["glue/CoLA/train.tsv", "glue/RTE/train.tsv"])
def test_parts_join_to_the_real_file(en, data_root, tmp_path, key):
    spec = en.downloads[key]
    assert len(spec["parts"]) == 2 and all(url.startswith(en.base_url) for url in spec["parts"])
    out = fetched(en, key, tmp_path)
    assert out.read_bytes() == (data_root / key).read_bytes()


def test_chinese_clue_file_is_a_copy(zh, data_root, tmp_path):
    out = fetched(zh, "chinese/fewclue/bustm/test_public.json", tmp_path)
    assert out.read_bytes() == (data_root / "chinese/fewclue/bustm/test_public.json").read_bytes()


# ------------------------------------------------------------------ stand-ins, read by the stages' own readers
@pytest.mark.parametrize("lang", LANGS)
def test_dump_and_index_are_checked_against_the_sha1_list(served, tmp_path, lang):
    from pipeline.corpus.multistream import SliceReader, stream_offsets, stream_slice

    built = served[1][lang]
    (part,) = built.config["corpus"][lang]["dumps"].values()
    for spec in (part, part["index"]):
        assert spec["checksums_url"].startswith(built.base_url) and spec["checksums_url"].endswith("-sha1sums.txt")
        assert not any(algorithm in spec for algorithm in ("sha256", "sha1", "md5"))
    dump, index = fetched(built, part["path"], tmp_path), fetched(built, part["index"]["path"], tmp_path)
    listing = urllib.request.urlopen(part["checksums_url"], timeout=30).read().decode()
    assert f"{hashlib.sha1(dump.read_bytes()).hexdigest()}  {dump.name}" in listing.splitlines()

    titles = bz2.decompress(index.read_bytes()).decode().splitlines()
    text = bz2.decompress(dump.read_bytes()).decode()
    assert text.count("<page>") == len(titles) > 20
    offsets = stream_offsets(index)
    for offset in offsets:  # each offset starts a bz2 stream of whole pages
        assert bz2.BZ2Decompressor().decompress(dump.read_bytes()[offset:]).lstrip().startswith(b"<page>")
    pages = 0
    for k in range(3):  # the corpus stage's slices: each one a well-formed document, together every page
        reader = SliceReader(dump, stream_slice(dump, index, k, 3))
        chunks = []
        while chunk := reader.read(1 << 16):
            chunks.append(chunk)
        reader.close()
        document = bz2.decompress(b"".join(chunks)).decode()
        assert document.rstrip().endswith("</mediawiki>")
        pages += document.count("<page>")
    assert pages == len(titles)


def test_nli_archives_and_csv_read_as_nli_pairs(en, tmp_path):
    from pipeline.tasks.nli import read_source

    snli = fetched(en, "nli/snli_1.0.zip", tmp_path)
    assert zipfile.ZipFile(snli).namelist() == sorted(zipfile.ZipFile(snli).namelist())
    assert {name for name in zipfile.ZipFile(snli).namelist() if name.endswith(".jsonl")} == {
        f"snli_1.0/snli_1.0_{split}.jsonl" for split in ("train", "dev", "test")
    }
    assert len(read_source(f"{snli}:train")) > 400
    mnli = fetched(en, "nli/multinli_1.0.zip", tmp_path)
    assert len(read_source(f"{mnli}:train")) > 400 and len(read_source(f"{mnli}:dev_mismatched")) > 100
    # the BiLSTM's SNLI train CSV: no checksum in paper-en; the mirror config pins the served file's
    assert (
        en.config["bilstm"]["downloads"]["nli/snli_1.0/snli_1.0_train.csv"]["sha256"]
        == en.sha256["nli/snli_1.0/snli_1.0_train.csv"]
    )
    assert len(read_source(str(fetched(en, "nli/snli_1.0/snli_1.0_train.csv", tmp_path)))) > 400


def test_glue_archive_unpacks_into_readable_splits(en, tmp_path):
    from pipeline.classify.tasks import TASKS

    archive = fetched(en, "downloads/glue-MNLI.zip", tmp_path)
    sources = yaml.safe_load((en.sources_dir / "classification-sources.yaml").read_text(encoding="utf-8"))
    members = {key: spec["member"] for key, spec in sources["files"].items() if spec.get("archive") == "glue-MNLI.zip"}
    assert len(members) == 5
    for key, member in members.items():
        out = unpack(archive, member, tmp_path / "data" / key)
        examples = TASKS["mnli"].read([out])
        assert len(examples) >= 90  # MultiNLI rows without a gold label are dropped
        assert all(example.label is None for example in examples) == ("test" in key)


def test_every_classification_file_is_there_and_readable(en, tmp_path):
    """Every file of classification-sources.yaml (an archive's member or a file), read by its task's reader."""
    from pipeline.classify.tasks import TASKS

    built = en
    sources = yaml.safe_load((built.sources_dir / "classification-sources.yaml").read_text(encoding="utf-8"))
    for key, spec in sources["files"].items():
        if "archive" in spec:
            archive = built.path_of(sources["archives"][spec["archive"]]["url"])
            out = tmp_path / key
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(zipfile.ZipFile(archive).read(spec["member"]))
        else:
            fetched(built, key, tmp_path)
    for key in sources["files"]:  # every file in place first: ChID's answers are read beside their split
        if key.endswith("_answer.json"):
            continue
        task = TASKS[next(task for folder, task in TASK_OF_FOLDER.items() if key.startswith(folder))]
        assert len(task.read([tmp_path / key])) >= 5, key


def test_clue_archive_and_ocnli_download(zh, tmp_path):
    from pipeline.classify.tasks import TASKS

    archive = fetched(zh, "downloads/clue-tnews.zip", tmp_path)
    train = unpack(archive, "train.json", tmp_path / "data/chinese/tnews/train.json")
    assert len(TASKS["tnews"].read([train])) == 300
    test = unpack(archive, "test.json", tmp_path / "data/chinese/tnews/test.json")
    assert all(example.label is None for example in TASKS["tnews"].read([test]))
    ocnli = fetched(zh, "chinese/ocnli/train.50k.json", tmp_path)
    assert len(TASKS["ocnli"].read([ocnli])) > 250


def test_ppdb_pack_reads_with_every_twin_class(en, tmp_path):
    from pipeline.finetune.ppdb import read
    from pipeline.finetune.ppdb_tasks import PTC_MAPPING

    spec = en.downloads["ppdb/ppdb-2.0-s-phrasal.gz"]
    assert spec["unverified"] is True and spec["sha256"] == en.sha256["ppdb/ppdb-2.0-s-phrasal.gz"]
    assert "--unverified" not in CHECKSUM_FLAGS(spec)  # checked, since the mirror pins it
    pairs = read(fetched(en, "ppdb/ppdb-2.0-s-phrasal.gz", tmp_path))
    assert len(pairs) == stand_ins.PPDB_PAIRS
    assert {PTC_MAPPING[p.relation] for p in pairs if p.relation in PTC_MAPPING} == {
        "equivalence",
        "entailment",
        "independent",
    }


def test_glove_zip_reads_as_300d_vectors(en, data_root, tmp_path):
    from pipeline.models import word_vectors

    bilstm = en.config["bilstm"]
    assert bilstm["vectors_url"].startswith(en.base_url) and bilstm["vectors_sha256"] == en.sha256[bilstm["vectors"]]
    vectors = fetched(en, bilstm["vectors"], tmp_path)
    assert zipfile.ZipFile(vectors).namelist() == ["glove.840B.300d.txt"]
    loaded = word_vectors.load(vectors, limit=50, vocabulary={"woman", "dog", "Two"})
    assert loaded.dim == 300
    assert {"woman", "dog", "Two"} <= set(loaded.words)


# ------------------------------------------------------------------ refusals
LOG_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} pipeline\.")


def _one_line_refusal(result: subprocess.CompletedProcess, expected: str) -> None:
    """Exit 2 and one error line (besides the stage's log records, e.g. each part fetched), no traceback."""
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if not LOG_RECORD.match(line)]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]


def test_tampered_files_are_refused(en, tmp_path):
    for key, expected in (
        ("ppdb/ppdb-2.0-s-phrasal.gz", "sha256 mismatch"),  # a stand-in
        ("sick/SICK.txt", "sha256 mismatch"),  # a copy (a symlink in the mirror)
        ("glue/CoLA/train.tsv", "sha256 mismatch"),  # a part
        (en.config["corpus"]["en"]["dumps"]["enwiki-20201101"]["path"], "sha1 mismatch"),  # via the sha1 list
        ("downloads/glue-QQP-clean.zip", "md5 mismatch"),  # md5 only, as the original entry
    ):
        spec = en.downloads[key]
        served_file = en.path_of(spec.get("url") or spec["parts"][0])
        original = served_file.read_bytes()
        link = os.readlink(served_file) if served_file.is_symlink() else None
        served_file.unlink()
        served_file.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
        try:
            out = tmp_path / key
            _one_line_refusal(fetch(en, key, out), expected)
            assert not out.exists()
        finally:
            served_file.unlink()
            if link:
                served_file.symlink_to(link)
            else:
                served_file.write_bytes(original)
        assert sha256(fetched(en, key, tmp_path / "again")) == en.sha256[key]


def test_the_server_serves_only_the_mirror(served):
    server = served[0]
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{server.url}/en/no/such/file", timeout=10)
    assert missing.value.code == 404
    for url in (f"{server.url}/en/", server.url.removesuffix("/files") + "/en/sick", f"{server.url}/../SOURCES.md"):
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(url, timeout=10)
    request = urllib.request.Request(f"{server.url}/en/x", data=b"x", method="PUT")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 501


def test_missing_real_data_is_one_clear_error(tmp_path):
    from pipeline.errors import InputError

    data_root = tmp_path / "data"
    data_root.mkdir()
    (data_root / "SOURCES.md").write_text("empty\n")
    with pytest.raises(InputError, match="no byte-identical copy in the data root") as error:
        mirror.build(paper_config("zh"), REPO, data_root, tmp_path / "mirror", "http://127.0.0.1:1/files")
    assert "\n" not in str(error.value)


# ------------------------------------------------------------------ every download job, and determinism
DOWNLOAD_JOB = re.compile(
    r"^rule download:\n(?:    .*\n)*?    output: (?P<out>\S+)\n(?:.*\n)*?Shell command: (?P<cmd>.*)$", re.MULTILINE
)


@pytest.mark.parametrize("lang", LANGS)
def test_every_download_job_of_the_dry_run_is_mirrored(served, tmp_path, lang):
    """The paper config's dry run on the mirror config (config `sources`: the rewritten lists): every
    download job is a mirror entry, fetched from the mirror with exactly the entry's flags."""
    built = served[1][lang]
    config = {**built.config, "sources": str(built.sources_dir)}
    configfile = tmp_path / "mirror.yaml"
    configfile.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    data = tmp_path / "data"
    command = [sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "1", "--configfile", str(configfile)]
    command += ["--config", f"data_root={data}", f"run=mirror-test-{lang}"]
    result = subprocess.run(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False, timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:]
    jobs = {match["out"]: match["cmd"] for match in DOWNLOAD_JOB.finditer(result.stdout)}
    assert len(jobs) == result.stdout.count("rule download:") > 10
    for out, shell in jobs.items():
        key = os.path.relpath(out, data)
        assert key in built.downloads, key
        words = shlex.split(shell.split(" > ", 1)[0])
        assert words[:3] == ["python", "-m", "pipeline"]
        assert words[3:] == download_command(built.downloads[key], Path(out))[3:], key


def test_the_rewritten_lists_keep_the_originals_structure(en):
    for name in mirror.SOURCE_FILES:
        original = yaml.safe_load((REPO / "workflow" / "data" / name).read_text(encoding="utf-8"))
        rewritten = yaml.safe_load((en.sources_dir / name).read_text(encoding="utf-8"))

        def keys(node, prefix=()):
            if not isinstance(node, dict):
                return set()
            return {prefix + (k,) for k in node} | {p for k, v in node.items() for p in keys(v, prefix + (k,))}

        # same entries and keys, a sha256 added only where the original pinned nothing
        added = keys(rewritten) - keys(original)
        assert all(path[-1] == "sha256" for path in added), added
        assert keys(original) <= keys(rewritten)
        text = (en.sources_dir / name).read_text(encoding="utf-8")
        assert "https://" not in text and "http://nlpgrid" not in text


@pytest.mark.parametrize("lang", LANGS)
def test_the_mirror_is_deterministic(served, data_root, tmp_path, lang):
    built = served[1][lang]
    again = mirror.build(
        paper_config(lang), REPO, data_root, tmp_path / "mirror", built.base_url, sources_dir=tmp_path / "sources"
    )
    assert again.files == built.files
    assert again.config == built.config
    for name in mirror.SOURCE_FILES:
        assert (tmp_path / "sources" / name).read_bytes() == (built.sources_dir / name).read_bytes()
    assert built.disk_bytes() < 20 * 2**20 and built.served_bytes() < 100 * 2**20


# ------------------------------------------------------------------ ChID: CLUE's own release layout
CHID_MEMBERS = ("train.json", "train_answer.json", "dev.json", "dev_answer.json", "test1.0.json")
CHID_SPLITS = {"train": "train_few_all", "dev": "dev_few_all", "test": "test_public"}  # -> FewCLUE's file


def test_chid_release_downloads_unpacks_and_reads_with_its_answers(zh, data_root, tmp_path):
    """chid_public.zip: fetched by the download stage, each member taken out by classify-unpack, and
    read by the ChID reader in CLUE's layout, the answers of train and dev from <split>_answer.json."""
    from pipeline.classify.tasks import TASKS

    sources = yaml.safe_load((zh.sources_dir / "classification-sources.yaml").read_text(encoding="utf-8"))
    spec = sources["archives"]["clue-chid.zip"]
    assert spec["url"].startswith(zh.base_url) and spec["url"].endswith("/cluebenchmark/tasks/chid_public.zip")
    assert spec["sha256"] == zh.sha256["downloads/clue-chid.zip"]  # null in the original list: pinned here
    assert CHECKSUM_FLAGS(zh.downloads["downloads/clue-chid.zip"]) == ["--sha256", spec["sha256"]]
    archive = fetched(zh, "downloads/clue-chid.zip", tmp_path)
    with zipfile.ZipFile(archive) as bundle:
        assert bundle.namelist() == sorted(CHID_MEMBERS)
        assert {info.date_time for info in bundle.infolist()} == {stand_ins.ZIP_TIME}
    members = {key: s["member"] for key, s in sources["files"].items() if s.get("archive") == "clue-chid.zip"}
    assert members == {f"chinese/chid/{member}": member for member in CHID_MEMBERS}
    data = tmp_path / "data"
    for key, member in members.items():
        assert unpack(archive, member, data / key).read_bytes() == zipfile.ZipFile(archive).read(member)

    chid, tags = TASKS["chid"], []
    for split, fewclue in CHID_SPLITS.items():
        files = chid.split_files(data, split, allow_substitutes=False)
        assert files == [data / "chinese/chid" / ("test1.0.json" if split == "test" else f"{split}.json")]
        examples = chid.read(files)
        real = [
            json.loads(line) for line in (data_root / f"chinese/fewclue/chid/{fewclue}.json").open(encoding="utf-8")
        ]
        assert 90 <= len(examples) <= min(len(real), stand_ins.TRAIN_ROWS)
        for example, row in zip(examples, real, strict=False):  # the real rows, in order
            assert len(example.choices) == len(row["candidates"]) == 7
            for choice, candidate in zip(example.choices, row["candidates"], strict=True):
                assert choice == row["content"].replace("#idiom#", candidate)
            assert example.label == (None if split == "test" else row["answer"])
        if split != "test":
            answers = json.loads((files[0].parent / f"{split}_answer.json").read_text(encoding="utf-8"))
            assert answers == {example.id: example.label for example in examples}
        tags += [example.id for example in examples]
    assert tags == [f"#idiom{number:06d}#" for number in range(1, len(tags) + 1)]  # unique across the splits
    assert len(tags) <= 500


def test_chid_release_is_downloaded_and_unpacked_for_the_classify_job(zh, tmp_path):
    """The workflow on the mirror's lists with classify.download on and ChID configured: one download
    of chid_public.zip, one classify_unpack job per member, and the answers among the classify job's inputs."""
    config = copy.deepcopy(zh.config) | {"sources": str(zh.sources_dir)}
    config["classify"] |= {"download": True}
    config["classify"]["clue"] = {**config["classify"]["clue"], "tasks": ["chid"]}
    configfile = tmp_path / "mirror.yaml"
    configfile.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    data = tmp_path / "data"
    command = [sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "1", "--configfile", str(configfile)]
    command += ["--config", f"data_root={data}", "run=mirror-test-chid"]
    result = subprocess.run(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False, timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:]
    jobs = result.stdout.split("\n\n")
    archive = data / "downloads" / "clue-chid.zip"
    (download,) = [job for job in jobs if "rule download:" in job and f"output: {archive}\n" in job]
    assert zh.downloads["downloads/clue-chid.zip"]["url"] in download
    unpacked = {data / "chinese/chid" / member for member in CHID_MEMBERS}
    unpacks = [job for job in jobs if "rule classify_unpack:" in job]
    assert {Path(re.search(r"output: (\S+)", job)[1]) for job in unpacks} >= unpacked
    assert all(f"input: {archive}\n" in job for job in unpacks if "/chinese/chid/" in job)
    # paper-zh fuses its models' runs by backbone (classify.fuse_checkpoints): classify_fused_* jobs read it
    classify = [job for job in jobs if re.search(r"rule classify(_fused_\w+)?:", job) and "task=chid" in job]
    assert classify
    for job in classify:
        inputs = set(re.search(r"input: (.*)\n", job)[1].split(", "))
        assert {str(path) for path in unpacked} <= inputs


def test_a_file_of_four_line_instances_is_sampled_in_whole_instances(tmp_path):
    """SemEval-2013 5(a)'s splits are four lines an instance (pipeline/tasks/semeval5a.py): the rehearsal's
    small copy keeps whole instances, which the reader takes (200 lines cut anywhere made a file of broken
    instances and stopped every SemEval job of the paper-en rehearsal)."""
    from pipeline.errors import InputError
    from pipeline.tasks.semeval5a import INSTANCE_LINES, read_instances

    rows = []
    for k in range(1000):  # 4,000 lines, both labels
        rows += [f"first{k}\tJJ", f"second{k}\tNN", f"word{k}", str(k // 3 % 2)]
    source = tmp_path / "en.trainSet"
    source.write_text("\n".join(rows) + "\n")
    body, _ = mirror._evenly_spaced(source, 200, INSTANCE_LINES)()
    small = tmp_path / "small" / "en.trainSet"
    small.parent.mkdir()
    small.write_bytes(body)
    bigrams, words, labels = read_instances(small)
    assert len(bigrams) == 50 and set(labels) == {0, 1}
    assert all(b == f"first{w[4:]} second{w[4:]}" for b, w in zip(bigrams, words))
    cut_anywhere, _ = mirror._evenly_spaced(source, 198)()
    broken = tmp_path / "broken" / "en.trainSet"
    broken.parent.mkdir()
    broken.write_bytes(cut_anywhere)
    with pytest.raises(InputError):
        read_instances(broken)

# Shared by every stage (read first): run paths, the corpus layout, the shell prefix, how options
# are passed, the registry of downloaded inputs and the one resolver of model specs. Each stage's
# own config checks, run lists, options and input functions live in workflow/rules/functions/<stage>.smk
# (Snakemake's lint wants functions and rules in separate files), its rules in workflow/rules/<stage>.smk.
# Nothing here runs a job. The imports serve every file (Snakemake reads them into one namespace).
import os
import re
import sys
from pathlib import Path

import yaml

from pipeline.errors import InputError
from pipeline.models.hub_lock import check_snapshot, hub_spec
from pipeline.models.spec import HUB_PREFIX, hub_reference, resolve_path
from pipeline.tasks.data_root import leaves_root

RUN = config["run"]
RESULTS = f"results/{RUN}"
LOGS = f"{RESULTS}/logs"
BENCHMARKS = f"{RESULTS}/benchmarks"
DATA_ROOT = config["data_root"]
LANGUAGES = config["corpus"]["languages"]
SHARDS = [f"shard-{k:03d}" for k in range(config["corpus"]["shards"])]

for _lang in LANGUAGES:
    if _lang not in config["corpus"]:
        raise ValueError(f"config: corpus.languages lists {_lang!r} but there is no corpus.{_lang} section")

# Every pre-training run, label -> backbone, objective and its experiment's settings
# (pipeline/experiments.py): the n-gram stage reads it for the presets the runs need, the
# later stages for the models they name; and the recipes of each fine-tuning start.
from pipeline.experiments import finetune_recipes
from pipeline.experiments import runs as pretrain_runs

PRETRAIN_RUNS = pretrain_runs(config["pretrain"])

# Rules run `python -m pipeline ...` from the repository root; the package is importable
# from there in any environment (a venv, or a rule's conda env that holds the dependencies).
# Each job also gets a watchdog that stops it when Snakemake itself is killed (pipeline/job_watchdog.py).
from pipeline.job_watchdog import SHELL_PREFIX as JOB_WATCHDOG

shell.prefix(f"export PYTHONPATH={workflow.basedir}${{{{PYTHONPATH:+:$PYTHONPATH}}}}; {JOB_WATCHDOG}")


wildcard_constraints:
    lang="|".join(LANGUAGES),
    part=r"[A-Za-z0-9_.-]+",
    shard=r"shard-\d{3}",


# ------------------------------------------------------------------ the corpus layout, read by every stage
def lang_config(lang):
    return config["corpus"][lang]


def dump_parts(lang):
    return list(lang_config(lang)["dumps"])


def per_shard(pattern, lang):
    """Every (part, shard) file of a per-shard corpus stage, for one language."""
    return expand(pattern, lang=lang, part=dump_parts(lang), shard=SHARDS)


# ------------------------------------------------------------------ download source lists
def sources_file(name):
    """One of the download source lists (workflow/data/NAME by default; config `sources` names the
    folder, the dress rehearsal's mirror among them)."""
    return os.path.join(workflow.basedir, config["sources"], name)


# ------------------------------------------------------------------ paths under data_root
def data_path(*parts):
    """data_root/PARTS: every input the rules read under data_root is joined here, which refuses a
    path that would leave it (absolute, or climbing out with '..'; pipeline/tasks/data_root.py),
    whichever config key or data list it came from."""
    relative = os.path.join(*parts)
    reason = leaves_root(relative)
    if reason:
        raise ValueError(f"config: data path {relative!r} {reason}")
    return os.path.join(DATA_ROOT, relative)


# ------------------------------------------------------------------ NLI sources (finetune, word2vec)
def nli_data_files(spec):
    """The files behind one NLI source under data_root, as the stages' --nli takes it (DIR:SPLIT -> its
    three files; ARCHIVE.zip:SPLIT -> the archive; a CSV or jsonl file -> itself)."""
    path = data_path(spec)
    if ":" in spec and not os.path.exists(path):
        head, split = path.rsplit(":", 1)
        if head.endswith(".zip"):
            return [head]
        return [os.path.join(head, f"{name}.{split}") for name in ("s1", "s2", "labels")]
    return [path]


# ------------------------------------------------------------------ options
# Options from the config reach a shell command as a list of strings, `{params.flags:q}`, whose
# elements Snakemake quotes one by one, so that no config value reaches a shell unquoted.
def options(settings, *keys):
    """["--max-steps", "30", ...]: each key of a config section as a command-line option."""
    return [arg for key in keys for arg in (f"--{key.replace('_', '-')}", str(settings[key]))]


# ------------------------------------------------------------------ threads of the GPU rules
def gpu_job_threads(cpus_per_gpu, gpus=1):
    """A GPU rule's threads: its CPUs per GPU times its GPUs (the SLURM profile's cpus_per_gpu), or the
    config's threads_per_job where set, for a run on a few CPU cores (Snakemake gives a job's threads to
    torch as OMP_NUM_THREADS)."""
    return config["threads_per_job"] or cpus_per_gpu * gpus


# The shapes of the config's names (the schema's patterns): a backbone's name has no "+", a pre-trained
# model's label is "<backbone>+<objective><suffix>", a pinned hub model's folder is
# <data_root>/models/ORG/NAME@COMMIT. Rules whose names grow with the config constrain their wildcards with
# these shapes, not with one_of(every name): Snakemake copies a constraint into each of the rule's paths and
# rewrites them once per job, so an alternation of N names made the dry run quadratic in N (BENCHMARKS.md
# "Dry run at scale"). The rules' input functions still read the one entry a name has.
BACKBONE_NAME = r"[A-Za-z0-9_-][A-Za-z0-9_.-]*"
PRETRAINED_LABEL = BACKBONE_NAME + r"\+[A-Za-z0-9_.+-]+"
# (the folder as pipeline/models/spec.py's hub_folder writes it)
HUB_FOLDER = re.escape(str(Path(DATA_ROOT) / "models")) + r"\/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+@(?:[0-9a-f]{40}|locked)"


def one_of(names):
    """A wildcard constraint matching exactly these names (none: a pattern that matches nothing)."""
    return "|".join(re.escape(name) for name in sorted(names, key=lambda name: (-len(name), name))) or "(?!)"


# ------------------------------------------------------------------ live curves (pipeline/tracking.py)
def tracking_flags(stage):
    """Params of a training rule: --report-to (tracking.report_to) and --tracking-dir, its TensorBoard
    event files under LOGS/tensorboard/<stage>/<the job's wildcards> (`tensorboard --logdir results/<run>`)."""

    def flags(wildcards):
        folder = os.path.join(f"{LOGS}/tensorboard/{stage}", *(str(value) for value in wildcards))
        return ["--report-to", config["tracking"]["report_to"], "--tracking-dir", folder]

    return flags


# ------------------------------------------------------------------ downloaded inputs (download.smk)
# Local path -> where it comes from (a URL or parts, checksums): the outputs of the download rule.
# Each stage file registers its own inputs while it is read; download.smk, included last, turns
# the registry into the download rule's wildcard.
DOWNLOADS = {}


def register_download(path, spec):
    """Let the download rule fetch `path` (a path under data_root) from `spec` where it is missing."""
    if DOWNLOADS.get(path, spec) != spec:
        raise ValueError(f"config: {path} is fetched from two different sources: {DOWNLOADS[path]} and {spec}")
    DOWNLOADS[path] = spec


# ------------------------------------------------------------------ model specs
# Hub models pinned to a commit ("hub:ORG/NAME@COMMIT"): the download_model rule fetches each into
# <data_root>/models/ORG/NAME@COMMIT (pipeline/download_model.py), and the jobs read that folder.
# Filled by resolve_model while the rule files are read (download_model's wildcard). An unpinned one
# ("hub:ORG/NAME") is read from <data_root>/models/ORG/NAME@locked, whatever its commit, so that the path
# is known before the first download resolves the commit into models.lock (pipeline/models/hub_lock.py).
HUB_MODELS = {}
MODELS_LOCK = config["models"].get("lock")


def is_tiny(spec):
    """Whether `spec` is a tiny BERT trained on the run's corpus: "tiny" (of pretrain.language) or "tiny:LANG"."""
    return spec == "tiny" or spec.startswith("tiny:")


def resolve_model(spec, name=None, key="models.backbones"):
    """(what a job's --model is given, the files it needs) for a model spec of the config (`key` names
    where it was read, for the error): "package:NAME" -> the checkpoint folder inside that installed
    package; "hub:ORG/NAME@COMMIT" -> its folder under data_root, fetched by the download_model rule;
    "tiny" / "tiny:LANG" for backbone `name` -> results/<run>/models/<name> (the tiny_model rule);
    a plain hub id (no local folder of that name) as "hub:ID", locked at its first download in models.lock
    and refused without one, never loaded unpinned at job time; anything else (a path) as given."""
    if name is not None and is_tiny(spec):
        return f"{RESULTS}/models/{name}", [f"{RESULTS}/models/{name}"]
    try:
        if not spec.startswith(HUB_PREFIX) and hub_spec(spec) and not MODELS_LOCK:
            raise InputError(
                spec,
                f"a hub id without a commit would load whatever the hub serves at job time: write "
                f"hub:{spec}@<commit>, or hub:{spec} with models.lock (its commit recorded at the first download)",
            )
        spec = hub_spec(spec) or spec
        path = resolve_path(spec, DATA_ROOT)  # the grammar: pipeline/models/spec.py
        if spec.startswith(HUB_PREFIX) and hub_reference(spec)[1] is None:
            if not MODELS_LOCK:
                raise InputError(spec, "a hub model without a commit needs models.lock, where its commit is recorded")
            check_snapshot(path, hub_reference(spec)[0], MODELS_LOCK)  # the folder holds the locked commit
    except InputError as exc:
        raise ValueError(f"config: {key}: {exc}") from None
    if spec.startswith(HUB_PREFIX):
        HUB_MODELS[path] = spec
        return path, [path]
    return path, []

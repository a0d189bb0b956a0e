"""Stage ``evaluate``: one encoder on one or more tasks → a metrics JSON per task (docs/method.md §5; ULR §5,
BURT §4, ALBURT).

Tasks: ``analogy`` (universal analogy, per category / level, PPR, PNR, rank histograms),
``analogy_examples`` (each candidate's score on the analogy questions BURT Table VII and ALBURT Table 5 print),
``sts`` (STS12-16, STS-B, SICK-R), ``transfer`` (SentEval's transfer tasks, logistic regression
on frozen embeddings, paper 004 Table 3), ``wordsim`` (SimLex-999, WS-353, MEN, ...), ``geogranno``
(question-paraphrase retrieval, Top-1/5/10 and Table 9's groupings) and ``faq`` (Chinese
question-matching sets as FAQ retrieval, Acc@1 and MRR), ``ppdb`` (phrase similarity on the PPDB 2.0
human labels), ``semeval5a`` (SemEval-2013 Task 5(a), a logistic regression on frozen pair
features) and ``scws`` (SCWS word similarity, where its file is present). Every number is a percentage.

Several tasks in one call (``evaluate analogy sts --out A.json B.json``, one ``--out`` per task, in
order) load the model once; each task is seeded and fingerprinted as if it ran alone, so its JSON is
byte-identical to a call of its own. The files are written once every task has been scored, as one
set (:class:`pipeline.atomic.AtomicFiles`): a task that fails, or an output that cannot be written (a
read-only folder, a full disk), leaves none of them new and every earlier file as it was; the error
names the output, never its temporary. Two ``--out`` that are one file (``x/a.json`` and
``x/../x/a.json``, a link to another output, a path through a linked folder, a hard link) are refused,
and so is an output that is an input of the call: a file under the data root, the model (its folder
or vector file) or a data file the task read (docs/behaviour.md, "Outputs are never someone else's files").

--model is a transformers checkpoint (local path or hub id), ``word2vec:PATH`` (bag of
word2vec vectors), ``input-embeddings:PATH_OR_ID`` (bag of a model's input embeddings),
``bilstm:DIR`` (a BiLSTM encoder of the ``bilstm`` stage), or
``bm25`` / ``tfidf`` (retrieval tasks only). --data is the data root laid out as
``docs/data.md`` describes; each task reads its files under it.

The JSON holds the task's metrics, ``task``, ``model`` {name, path, kind, pooling} and
``provenance`` (code version, parameters, seed, the checkpoint with the SHA-256 of its config
and weights, every data file with its SHA-256).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import math
import time
from pathlib import Path

from pipeline import arguments, provenance
from pipeline.atomic import AtomicFiles, check_file_target, is_special, json_text, writing
from pipeline.errors import InputError
from pipeline.models.pooling import POOLINGS
from pipeline.models.runtime import seed_everything
from pipeline.models.spec import LEXICAL, load_model, model_path
from pipeline.models.tokenizer_check import MIN_MAX_LENGTH
from pipeline.output_guard import FileIdentity, refuse_inputs, refuse_read_files
from pipeline.tasks.data_root import DataRoot

log = logging.getLogger("pipeline.evaluate")

TASKS = {
    "analogy": "pipeline.tasks.analogy",
    "analogy_examples": "pipeline.tasks.analogy_examples",
    "sts": "pipeline.tasks.sts",
    "wordsim": "pipeline.tasks.wordsim",
    "geogranno": "pipeline.tasks.geogranno",
    "faq": "pipeline.tasks.faq",
    "ppdb": "pipeline.tasks.ppdb",
    "semeval5a": "pipeline.tasks.semeval5a",
    "scws": "pipeline.tasks.scws",
    "transfer": "pipeline.tasks.transfer",
}
RETRIEVAL_TASKS = ("geogranno", "faq")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", nargs="+", choices=sorted(TASKS), help="the evaluation tasks, each once")
    parser.add_argument(
        "--model",
        required=True,
        help="checkpoint path or hub id, word2vec:PATH, input-embeddings:PATH_OR_ID, bm25 or tfidf",
    )
    parser.add_argument("--pooling", choices=POOLINGS, default="mean", help="token pooling (default mean)")
    parser.add_argument("--data", required=True, type=Path, help="data root (layout of docs/data.md)")
    parser.add_argument(
        "--out", required=True, nargs="+", type=Path, help="the metrics JSON of each task, in the tasks' order"
    )
    parser.add_argument("--batch-size", type=arguments.BATCH, default=64, help="strings per forward pass (default 64)")
    parser.add_argument(
        "--max-length",
        type=arguments.integer(MIN_MAX_LENGTH, arguments.MAX_LENGTH),
        default=128,
        help=f"truncate to this many tokens, at least {MIN_MAX_LENGTH}: [CLS], one token, [SEP] (default 128)",
    )
    parser.add_argument("--seed", type=arguments.SEED, default=0, help="seed for python, numpy and torch (default 0)")
    parser.add_argument("--name", help="label of the model in the result tables (default: the --model value)")
    parser.add_argument(
        "--transfer-tasks",
        help="transfer: comma-separated tasks (default all: MR,CR,SUBJ,MPQA,SST2,TREC,MRPC,SICK-E,SICK-R,STS14,STS-B)",
    )
    parser.add_argument(
        "--kfold", type=arguments.FOLDS, default=10, help="transfer: folds of the cross-validations (default 10)"
    )
    parser.add_argument(
        "--transfer-classifier",
        choices=("adam", "sklearn"),
        default="adam",
        help="transfer: logistic regression trained with Adam, batch 64 (paper 004 §3.2; default), or scikit-learn's",
    )


def finite(value):
    """NaN / inf → None, recursively: JSON has no NaN, and a table must show the gap."""
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def evaluate_task(task: str, model, data: DataRoot, spec: str = "", **options) -> dict:
    """Load the task's data under ``data`` and score ``model`` on it (the metrics, no provenance)."""
    if model.kind in LEXICAL and task not in RETRIEVAL_TASKS:
        raise InputError(
            spec or model.kind,
            f"{model.kind} is a lexical retrieval baseline with no embeddings; "
            f"it runs on {' and '.join(RETRIEVAL_TASKS)}, not {task}",
        )
    module = importlib.import_module(TASKS[task])
    return module.evaluate(model, data.load(module.load), **options)


def transfer_options(args: argparse.Namespace) -> dict:
    from pipeline.tasks.transfer import TASKS as TRANSFER_TASKS

    tasks = [task.strip() for task in args.transfer_tasks.split(",")] if args.transfer_tasks else list(TRANSFER_TASKS)
    unknown = [task for task in tasks if task not in TRANSFER_TASKS]
    if unknown:
        raise InputError("--transfer-tasks", f"unknown tasks {unknown} (known: {', '.join(TRANSFER_TASKS)})")
    if args.kfold < 2:
        raise InputError("--kfold", f"needs at least 2 folds, not {args.kfold}")
    return {
        "tasks": tasks,
        "kfold": args.kfold,
        "seed": args.seed,
        "classifier": getattr(args, "transfer_classifier", "adam"),
    }


def check_arguments(args: argparse.Namespace) -> None:
    """Values outside their domain (argparse refuses them on the command line; this covers a caller
    that builds the namespace itself), refused before anything is loaded; so are ``--out`` folders
    and an ``--out`` list that does not pair with the tasks."""
    if args.batch_size < 1:
        raise InputError("--batch-size", f"must be at least 1, not {args.batch_size}")
    if args.max_length < MIN_MAX_LENGTH:
        raise InputError("--max-length", f"must be at least {MIN_MAX_LENGTH}, not {args.max_length}")
    if not 0 <= args.seed < 2**32:
        raise InputError("--seed", f"must be between 0 and 2**32 - 1 (NumPy's seeds), not {args.seed}")
    tasks, outs = as_list(args.task), as_list(args.out)
    if len(outs) != len(tasks):
        raise InputError("--out", f"names {len(outs)} files for {len(tasks)} tasks ({' '.join(tasks)}): one per task")
    for name, values in (("task", tasks), ("--out", [str(out) for out in outs])):
        repeated = sorted({value for value in values if values.count(value) > 1})
        if repeated:
            raise InputError(name, f"{', '.join(repeated)} given twice")
    for out in outs:
        check_file_target(out)


def as_list(value) -> list:
    return list(value) if isinstance(value, list | tuple) else [value]


def check_outputs(tasks: list[str], outs: list[Path], args: argparse.Namespace) -> None:
    """Before anything is loaded: each output a file of its own (an alias of an earlier output, by
    ``..``, a link or a hard link, would be overwritten by the next task's metrics), and none of them
    an input of the call: under the data root, or the model's folder or vector file."""
    seen: list[tuple[Path, str, FileIdentity]] = []
    for task, out in zip(tasks, outs, strict=True):
        identity = FileIdentity(out)
        # a stream or device (/dev/stdout twice through 2>&1) is appended to, never replaced: nothing is lost
        for earlier, earlier_task, earlier_identity in [] if is_special(out) else seen:
            if identity.same(earlier_identity):
                raise InputError(
                    out,
                    f"is the same file as {earlier} (the output of {earlier_task}): give each task an output of its own",
                )
        seen.append((out, task, identity))
        refuse_inputs(out, getattr(args, "data", None), [getattr(args, "model", None)])


def check_not_read(outs: list[Path], read: list[Path]) -> None:
    """After the tasks ran, before anything is written: no output is a data file a task read (one the data
    root links to from elsewhere escapes :func:`check_outputs`)."""
    refuse_read_files(outs, read, "this evaluation")


def run(args: argparse.Namespace) -> None:
    check_arguments(args)
    tasks, outs = as_list(args.task), [Path(out) for out in as_list(args.out)]
    check_outputs(tasks, outs, args)
    refused = [task for task in tasks if task not in RETRIEVAL_TASKS] if args.model in LEXICAL else []
    if refused:  # fail before loading anything
        evaluate_task(refused[0], load_model(args.model), DataRoot(args.data), args.model)
    model = load_model(args.model, args.pooling, args.batch_size, args.max_length)
    read: list[Path] = []
    results = [score(task, model, args, read) for task in tasks]
    check_not_read(outs, read)
    write_outputs(outs, results)


def write_outputs(outs: list[Path], results: list[dict]) -> None:
    """Every metrics JSON as one set: all temporaries written first, then all renamed
    (:meth:`pipeline.atomic.AtomicFiles.commit` puts the earlier ones back if a rename fails); a failure
    names the output whose file could not be written."""
    with AtomicFiles() as files:
        for out, result in zip(outs, results, strict=True):
            temp = files.temp(out)
            with writing(out):
                temp.write_text(json_text(result), encoding="utf-8")


def score(task: str, model, args: argparse.Namespace, read: list[Path] | None = None) -> dict:
    """One task's metrics JSON. Seeded, and with a data root of its own (its fingerprints list only
    this task's files), as a call for this task alone would be; the files it read are added to ``read``."""
    started = time.monotonic()
    data = DataRoot(args.data)
    seed_everything(args.seed)
    options = transfer_options(args) if task == "transfer" else {}
    metrics = evaluate_task(task, model, data, args.model, **options)
    log.info("%s on %s in %.1f s", task, args.model, time.monotonic() - started)
    params = {
        "task": task,
        "model": args.model,
        "pooling": getattr(model, "pooling", None),
        "batch_size": args.batch_size,
        "max_length": args.max_length,
        "data_root": provenance.portable_path(args.data),
        **options,
    }
    record = provenance.make("evaluate", params, inputs=data.fingerprints(), seed=args.seed)
    if read is not None:
        read.extend(data.used)
    record["checkpoint"] = model.describe()
    result = {
        **metrics,
        "task": task,
        "model": {
            "name": args.name or args.model,
            "path": model_path(args.model),
            "kind": model.kind,
            "pooling": getattr(model, "pooling", None),
        },
        "provenance": record,
    }
    return finite(result)

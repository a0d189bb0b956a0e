"""Stage ``gpu-acceptance``: would a paper run work on this GPU, and what would it cost? (docs/stages/acceptance.md)

    python -m pipeline gpu-acceptance --bundle .gpu-bundle --out OUT          # the lent GPU host, its own python3
    python -m pipeline gpu-acceptance --bundle .gpu-bundle --out OUT --quick  # a shorter subset
    python -m pipeline gpu-acceptance --device cpu                            # the CPU form: tiny models, every row

Runs the pipeline's own entry points on random-weight models of the papers' architectures (tiny ones on CPU),
a few dozen steps each, and checks the paths only a GPU takes: bf16 autocast in every objective, fused stacks
under ``vmap``, the memory model that sizes each stack, CUDA random state across a resume, DDP, torchrun. The
rows: :mod:`pipeline.acceptance.rows`; their verdicts, each able to fail: :mod:`pipeline.acceptance.verdicts`.

On the GPU host (no network; its own Python and PyTorch; pipeline/acceptance/host.py) it starts from the bundle
``python -m pipeline gpu-bundle`` made here: it installs the bundle's wheels with ``pip --no-index --no-deps
--target``, sets the hub libraries offline, reads the input data the bundle carries (so the corpus stages'
packages never run there), and checks every import, CUDA, the GPU's free memory, the disk and the time before
any job starts, reporting all that is missing at once (exit status 2). Each row is written to ``--out`` as it
finishes (``acceptance.md``, ``acceptance.json``, ``acceptance.log``: pipeline/acceptance/results.py), and at
the end ``acceptance.yaml``, the plan's file; a CUDA run with no failed row also writes it to
``pipeline/budget/acceptance.yaml``, which the plan reads (pipeline/budget/acceptance_file.py). A CPU run never
writes there. Exit status 1 when a row fails.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

from pipeline.acceptance import host
from pipeline.arguments import number
from pipeline.errors import InputError

REPO = Path(__file__).resolve().parents[2]
BUDGET_S = {"full": 360.0, "quick": 180.0}  # the run within 6 (quick: 3) minutes: no job starts after it
SECONDS = number(10, 7200)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--out", type=Path, help="the results' folder, 5 files (default results/gpu-acceptance/DEVICE)")
    parser.add_argument("--work", type=Path, help="models and jobs (GBs on CUDA; default a temporary folder)")
    parser.add_argument("--bundle", type=Path, help="what `python -m pipeline gpu-bundle` made (data and wheels)")
    parser.add_argument("--quick", action="store_true", help="the short subset (about half the rows)")
    parser.add_argument("--budget-s", type=SECONDS, help="start no job after this (default 360; --quick 180)")
    parser.add_argument("--no-plan", action="store_true", help="CUDA: do not write pipeline/budget/acceptance.yaml")
    parser.add_argument("--keep-work", action="store_true", help="keep the work folder (default: removed at the end)")


def check_folders(args) -> None:
    """The output folder holds only what this stage writes: never a file, the repository or the bundle."""
    for label, folder in (("--out", args.out), ("--work", args.work)):
        if folder is None:
            continue
        if folder.exists() and not folder.is_dir():
            raise InputError(folder, f"{label}: not a folder")
        real = folder.resolve()
        if real == REPO or real in REPO.parents or (args.bundle and real == args.bundle.resolve()):
            raise InputError(
                folder, f"{label}: would write over the repository or the bundle; name a folder of its own"
            )
    if args.bundle is not None and not (args.bundle / "BUNDLE.json").is_file():
        raise InputError(args.bundle, "not a bundle (no BUNDLE.json): make it with `python -m pipeline gpu-bundle`")


def run(args: argparse.Namespace) -> None:
    started = time.monotonic()
    args.out = args.out or REPO / "results" / "gpu-acceptance" / args.device
    check_folders(args)
    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-acceptance-"))
    budget = args.budget_s or BUDGET_S["quick" if args.quick else "full"]
    try:
        status = accept(args, work, started, budget)
    finally:
        if not args.keep_work and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    if status:
        raise SystemExit(status)


def accept(args, work: Path, started: float, budget: float) -> int:
    os.environ.update(host.OFFLINE)
    problems = host.install_wheels(args.bundle / "wheels", work / "site") if args.bundle else []
    from pipeline.acceptance import run_time

    need = run_time.run_need(args.device, args.quick)
    problems += host.preflight(args.device, work, args.out, need, budget)
    if problems:
        for problem in problems:
            print(f"preflight: {problem}", file=sys.stderr)
        raise InputError(args.bundle or REPO, f"preflight found {len(problems)} problem(s), listed above; no job ran")
    print(
        f"preflight ok in {time.monotonic() - started:.0f} s; the run needs about {need['seconds']:.0f} s", flush=True
    )
    return measure(args, work, started, budget)


def measure(args, work: Path, started: float, budget: float) -> int:
    import torch
    import transformers

    from pipeline.acceptance import estimates, jobs
    from pipeline.acceptance.layout import expected_rows, model_names
    from pipeline.acceptance.results import Results, table
    from pipeline.acceptance.rows import Acceptance, plan_file

    card = torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU (tiny models)"
    today = datetime.date.today().isoformat()
    header = {
        "card": card,
        "date": today,
        "device": args.device,
        "quick": args.quick,
        "python": platform.python_version(),
    }
    header |= {"torch": torch.__version__, "transformers": transformers.__version__}
    results = Results(args.out, header)
    results.log(f"gpu-acceptance on {card}, {today}: results in {args.out}, work in {work}")
    run = Acceptance(args.device, work, started + budget, results, args.quick)
    data_root = args.bundle / "data" if args.bundle else work / "data"
    models: dict = {}
    try:
        data = jobs.make_data(data_root)
        glue = jobs.make_chid(jobs.make_glue(data_root, data["sentences"]), data["sentences"])
        models = {
            name: jobs.make_model(work, name, data["sentences"], run.profile.models[name], run.profile.vocab_size)
            for name in model_names(args.device, args.quick)
        }
        if args.quick:
            models["bert-large"] = models["bert-base"]  # only its K is read (no bert-large row in --quick)
        run.run_rows(data, glue, models)
    except KeyboardInterrupt:
        results.log("interrupted: the rows above are kept; the rest are missing")
    present = {(r["group"], r["row"]) for r in results.rows}
    for group, name in expected_rows(run.large_k, args.quick):
        if (group, name) not in present:
            results.rows.append(
                {"group": group, "row": name, "verdict": "FAIL", "result": "row missing", "measure": ""}
            )
    layers = estimates.architecture_of(models["bert-base"])[0].layers if "bert-base" in models else 12
    summary = plan_file(run, card, layers)
    results.write({"plan": summary})
    seconds = time.monotonic() - started
    results.log(f"\ngpu-acceptance on {card}, {today}, {seconds:.0f} s\n{table(results.rows)}")
    write_plan_file(args, run, summary, results)
    failed = results.failed()
    results.log(f"{len(results.rows) - len(failed)} of {len(results.rows)} rows passed or n/a; {seconds:.0f} s")
    return 1 if failed else 0


def write_plan_file(args, run, summary: dict, results) -> None:
    """``OUT/acceptance.yaml`` always (kept to the schema, CPU form too); pipeline/budget/acceptance.yaml from a
    CUDA run with no failed row (not --quick: its rows are a subset)."""
    import yaml

    from pipeline.atomic import AtomicFiles
    from pipeline.budget.acceptance_file import ACCEPTANCE, check

    header = "# python -m pipeline gpu-acceptance: what a paper run measured on this card (acceptance_file.py)\n"
    check({**summary, "device": "cuda"}, args.out / "acceptance.yaml")
    targets = [args.out / "acceptance.yaml"]
    if args.device == "cuda" and not args.no_plan and not args.quick and not results.failed():
        check(summary, ACCEPTANCE)
        targets.append(ACCEPTANCE)
    with AtomicFiles() as files:
        for target in targets:
            files.temp(target).write_text(header + yaml.safe_dump(summary, sort_keys=False), encoding="utf-8")
    if len(targets) > 1:
        results.log(f"wrote {ACCEPTANCE.relative_to(REPO)}: the plan now reads it")
    elif args.device == "cuda":
        results.log("pipeline/budget/acceptance.yaml not written (a row failed, --quick or --no-plan)")

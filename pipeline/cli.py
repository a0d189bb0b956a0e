"""``python -m pipeline STAGE [options]``: the entry point every Snakemake rule calls.

Each stage module provides ``add_arguments(parser)`` and ``run(args)``; its docstring is
the stage's ``--help`` text. Bad input (:class:`~pipeline.errors.InputError`) ends the run
with a one-line message naming the file and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from pipeline.errors import InputError

# stage name → module; imported lazily so that a corpus stage never pays for torch.
STAGES = {
    "download": "pipeline.download",
    "extract": "pipeline.corpus.extract",
    "convert": "pipeline.corpus.convert",
    "clean": "pipeline.corpus.clean",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="stage", required=True, metavar="STAGE")
    for name, module_name in STAGES.items():
        module = importlib.import_module(module_name)
        doc = (module.__doc__ or "").strip()
        stage = sub.add_parser(name, help=doc.split("\n")[0], description=doc,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(stage)
        stage.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    try:
        args.run(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0

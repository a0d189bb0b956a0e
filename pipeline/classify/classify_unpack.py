"""Stage ``classify-unpack``: one member of a downloaded GLUE / CLUE archive → its place under the data root.

The benchmarks ship their splits as zip archives (workflow/data/classification-sources.yaml);
the download rule fetches and checks an archive, this stage takes one file out of it, written
atomically. A missing member or a file that is not a zip archive stops with one line naming it.
"""

from __future__ import annotations

import argparse
import shutil
import zipfile
from pathlib import Path

from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--archive", required=True, type=Path, help="a zip archive")
    parser.add_argument("--member", required=True, help="the file inside it")
    parser.add_argument("--out", required=True, type=Path, help="where to write it")


def run(args: argparse.Namespace) -> None:
    try:
        archive = zipfile.ZipFile(args.archive)
    except (OSError, zipfile.BadZipFile) as exc:
        raise InputError(args.archive, f"not a readable zip archive: {exc}") from exc
    with archive, AtomicFiles() as files:
        try:
            source = archive.open(args.member)
        except KeyError:
            raise InputError(args.archive, f"no member {args.member!r} in the archive") from None
        with source, files.temp(args.out).open("wb") as target:
            shutil.copyfileobj(source, target)

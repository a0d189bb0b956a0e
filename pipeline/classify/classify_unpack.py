"""Stage ``classify-unpack``: one member of a downloaded GLUE / CLUE archive → its place under the data root.

The benchmarks ship their splits as zip archives (workflow/data/classification-sources.yaml);
the download rule fetches and checks an archive, this stage takes one file out of it, written
atomically. A missing member, a file that is not a zip archive, or a member that cannot be read
back (a bad CRC, corrupt or truncated data, encrypted) stops with one line naming the archive and
the member, and writes nothing (docs/behaviour.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.archives import MEMBER_ERRORS, ZIP_ERRORS, member_name, open_archive
from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError
from pipeline.output_guard import refuse_inputs

CHUNK = 1 << 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--archive", required=True, type=Path, help="a zip archive")
    parser.add_argument("--member", required=True, help="the file inside it")
    parser.add_argument("--out", required=True, type=Path, help="where to write it")


def run(args: argparse.Namespace) -> None:
    refuse_inputs(args.out, files=[args.archive])  # never the archive itself (or a hard link to it)
    archive = open_archive(args.archive)
    member = member_name(args.archive, args.member)
    with archive, AtomicFiles() as files:
        try:
            source = archive.open(args.member)
        except KeyError:
            raise InputError(args.archive, f"no member {args.member!r} in the archive") from None
        except MEMBER_ERRORS as exc:
            raise InputError(member, f"unreadable archive member: {exc}") from exc
        with source, files.temp(args.out).open("wb") as target:
            while True:
                try:
                    chunk = source.read(CHUNK)  # the CRC is checked when the member's end is read
                except ZIP_ERRORS as exc:  # a failure to write the output is AtomicFiles' to name
                    raise InputError(member, f"unreadable archive member (corrupt or truncated): {exc}") from exc
                if not chunk:
                    break
                target.write(chunk)

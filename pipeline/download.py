"""Stage ``download``: fetch an input (a Wikipedia dump, an evaluation set) and verify it.

For users with internet: the paper configs name each dump's original Wikimedia URL and
either its checksum or the dump's published checksum list (``*-sha1sums.txt`` /
``*-md5sums.txt``, read from the same dump directory), and this stage refuses a file whose
checksum does not match. The file appears under its final name only once verified.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import urllib.request
from pathlib import Path

from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError
from pipeline.progress import Progress

log = logging.getLogger("pipeline.download")
ALGORITHMS = ("sha256", "sha1", "md5")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", required=True, help="where to fetch the file")
    parser.add_argument("--out", required=True, type=Path, help="local path to write")
    for algorithm in ALGORITHMS:
        parser.add_argument(f"--{algorithm}", help=f"expected {algorithm} hex digest")
    parser.add_argument("--checksums-url", help="a published '<digest>  <filename>' list to check against")
    parser.add_argument("--unverified", action="store_true",
                        help="fetch a file whose source publishes no checksum (its sha256 is logged); only "
                             "where a config marks the source so (e.g. the PPDB 2.0 packs)")


def _expected_from_list(url: str, filename: str) -> tuple[str, str]:
    with urllib.request.urlopen(url, timeout=60) as response:
        listing = response.read().decode()
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == filename:
            digest = parts[0].lower()
            algorithm = {64: "sha256", 40: "sha1", 32: "md5"}.get(len(digest))
            if algorithm:
                return algorithm, digest
    raise InputError(url, f"checksum list has no entry for {filename!r}")


def download(url: str, out: Path, expected: dict[str, str], checksums_url: str | None = None,
             unverified: bool = False) -> None:
    if checksums_url:
        algorithm, digest = _expected_from_list(checksums_url, url.rsplit("/", 1)[-1])
        expected = {**expected, algorithm: digest}
    if not expected and not unverified:
        raise InputError(out, "refusing to download without a checksum (give --sha256/--sha1/--md5 or --checksums-url)")
    # An unverified source is still hashed, so that the log records what was fetched.
    digests = {algorithm: hashlib.new(algorithm) for algorithm in expected or {"sha256": None}}
    with AtomicFiles() as files, urllib.request.urlopen(url, timeout=60) as response:
        total = int(response.headers.get("Content-Length") or 0) or None
        meter = Progress(log, "MiB", total=total)
        with files.temp(out).open("wb") as handle:
            while block := response.read(1 << 22):
                handle.write(block)
                for digest in digests.values():
                    digest.update(block)
                meter.update(len(block) >> 20, position=meter.position + len(block))
        for algorithm, digest in digests.items():
            if not expected:
                log.warning("%s: no published checksum; fetched %s with sha256 %s (put it in the config to pin it)",
                            url, out, digest.hexdigest())
                continue
            if digest.hexdigest() != expected[algorithm].lower():
                raise InputError(url, f"{algorithm} mismatch: got {digest.hexdigest()}, expected {expected[algorithm]}")
        meter.done()


def run(args: argparse.Namespace) -> None:
    expected = {a: getattr(args, a) for a in ALGORITHMS if getattr(args, a)}
    download(args.url, args.out, expected, args.checksums_url, args.unverified)

"""Stage ``download``: fetch an input (a Wikipedia dump, an evaluation set) and verify it.

For users with internet: the paper configs name each dump's original Wikimedia URL and
either its checksum or the dump's published checksum list (``*-sha1sums.txt`` /
``*-md5sums.txt``, read from the same dump directory), and this stage refuses a file whose
checksum does not match. The file appears under its final name only once verified.

Some inputs exist publicly only inside an archive: the sample config's English Wikipedia
excerpts are test data inside the gensim wheel on PyPI. ``--member PATH`` fetches the zip or
wheel at ``--url`` (checked against ``--archive-sha256`` when given), extracts that one member
and checks the member against ``--sha256`` / ``--sha1`` / ``--md5``; the archive is deleted.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import tempfile
import urllib.request
import zipfile
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
    parser.add_argument("--member", help="path of the wanted file inside the zip / wheel archive at --url")
    parser.add_argument("--archive-sha256", help="expected sha256 of the archive itself (with --member)")
    parser.add_argument(
        "--unverified",
        action="store_true",
        help="fetch a file whose source publishes no checksum (its sha256 is logged); only "
        "where a config marks the source so (e.g. the PPDB 2.0 packs)",
    )


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


def _verify(source: str, digests: dict, expected: dict[str, str]) -> None:
    for algorithm, digest in digests.items():
        if digest.hexdigest() != expected[algorithm].lower():
            raise InputError(source, f"{algorithm} mismatch: got {digest.hexdigest()}, expected {expected[algorithm]}")


def _fetch(url: str, path: Path, expected: dict[str, str], log_sha256: bool = False) -> None:
    """Stream ``url`` into ``path``, logging progress, and check it against ``expected`` (or, with
    ``log_sha256``, log the sha256 of a file that has nothing to be checked against)."""
    digests = {algorithm: hashlib.new(algorithm) for algorithm in expected or ({"sha256": 0} if log_sha256 else {})}
    with urllib.request.urlopen(url, timeout=60) as response:
        total = int(response.headers.get("Content-Length") or 0) or None
        meter = Progress(log, "MiB", total=total)
        with path.open("wb") as handle:
            while block := response.read(1 << 22):
                handle.write(block)
                for digest in digests.values():
                    digest.update(block)
                meter.update(len(block) >> 20, position=meter.position + len(block))
    if expected:
        _verify(url, digests, expected)
    elif log_sha256:
        log.warning(
            "%s: no published checksum; fetched it with sha256 %s (put it in the config to pin it)",
            url,
            digests["sha256"].hexdigest(),
        )
    meter.done()


def _extract_member(archive: Path, url: str, member: str, path: Path, expected: dict[str, str]) -> None:
    """Copy one member of the zip (or wheel) ``archive`` to ``path`` and check it against ``expected``."""
    digests = {algorithm: hashlib.new(algorithm) for algorithm in expected}
    try:
        with zipfile.ZipFile(archive) as bundle, bundle.open(member) as source, path.open("wb") as handle:
            while block := source.read(1 << 22):
                handle.write(block)
                for digest in digests.values():
                    digest.update(block)
    except zipfile.BadZipFile as exc:
        raise InputError(url, f"not a zip or wheel archive ({exc})") from None
    except KeyError:
        raise InputError(url, f"archive has no member {member!r}") from None
    _verify(f"{url}!{member}", digests, expected)


def download(
    url: str,
    out: Path,
    expected: dict[str, str],
    checksums_url: str | None = None,
    member: str | None = None,
    archive_sha256: str | None = None,
    unverified: bool = False,
) -> None:
    """Fetch ``url`` (or its archive ``member``) to ``out``, refusing it unless it matches ``expected``."""
    if checksums_url:
        algorithm, digest = _expected_from_list(checksums_url, url.rsplit("/", 1)[-1])
        expected = {**expected, algorithm: digest}
    if not expected and not unverified:
        raise InputError(out, "refusing to download without a checksum (give --sha256/--sha1/--md5 or --checksums-url)")
    with AtomicFiles() as files:
        target = files.temp(out)
        if member is None:
            _fetch(url, target, expected, log_sha256=unverified)
            return
        handle, archive = tempfile.mkstemp(prefix=f".{out.name}.archive-", dir=out.parent)
        os.close(handle)
        try:
            _fetch(url, Path(archive), {"sha256": archive_sha256} if archive_sha256 else {})
            _extract_member(Path(archive), url, member, target, expected)
        finally:
            Path(archive).unlink(missing_ok=True)


def run(args: argparse.Namespace) -> None:
    expected = {a: getattr(args, a) for a in ALGORITHMS if getattr(args, a)}
    download(args.url, args.out, expected, args.checksums_url, args.member, args.archive_sha256, args.unverified)

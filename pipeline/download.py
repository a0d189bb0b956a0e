"""Stage ``download``: fetch an input (a Wikipedia dump, an evaluation set) and verify it.

For users with internet: the paper configs name each dump's original Wikimedia URL and
either its checksum or the dump's published checksum list (``*-sha1sums.txt`` /
``*-md5sums.txt``, read from the same dump directory), and this stage refuses a file whose
checksum does not match. The file appears under its final name only once verified.

Some inputs exist publicly only inside an archive: the sample config's English Wikipedia
excerpts are test data inside the gensim wheel on PyPI. ``--member PATH`` fetches the zip or
wheel at ``--url`` (checked against ``--archive-sha256`` when given), extracts that one member
and checks the member against ``--sha256`` / ``--sha1`` / ``--md5``; the archive is deleted.

A few files of the sample data root exist publicly only as parts: a snapshot that split a GLUE
training set into ``train.tsv`` and ``val.tsv`` (docs/data.md). ``--url`` given more than once
fetches every part and joins them with ``--join`` (``concatenate``: the parts' lines in order;
``sort-by-index``: their rows merged in the order of the integer ``index`` column, one header
kept); the checksums then apply to the joined file, so the result is verified byte for byte.
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
from urllib.parse import urlparse
from urllib.request import url2pathname

from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError
from pipeline.output_guard import refuse_read_files
from pipeline.progress import Progress

log = logging.getLogger("pipeline.download")
ALGORITHMS = ("sha256", "sha1", "md5")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", required=True, action="append", help="where to fetch the file (repeated: its parts, see --join)"
    )
    parser.add_argument("--join", choices=sorted(JOINS), help="how the parts of a file given as several --url join")
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


def _lines(path: Path, url: str) -> list[bytes]:
    """A fetched part's lines, each ending in a newline (a missing final newline is supplied)."""
    data = path.read_bytes()
    if not data:
        raise InputError(url, "empty file")
    return data.removesuffix(b"\n").split(b"\n")


def _concatenate(parts: list[tuple[str, Path]], out: Path) -> None:
    with out.open("wb") as handle:
        for url, path in parts:
            handle.writelines(line + b"\n" for line in _lines(path, url))


def _sort_by_index(parts: list[tuple[str, Path]], out: Path) -> None:
    """Rows of TSV parts in the order of their ``index`` column. The first part carries the header;
    a later part may repeat it or have none. An index must be an integer, and appear once."""
    header, rows = None, {}
    for url, path in parts:
        lines = _lines(path, url)
        if header is None:
            header = lines.pop(0)
            columns = header.split(b"\t")
            if b"index" not in columns:
                raise InputError(url, "first part has no 'index' column in its header")
            column = columns.index(b"index")
        elif lines[0] == header:
            lines.pop(0)
        for number, line in enumerate(lines, 1):
            fields = line.split(b"\t")
            try:
                index = int(fields[column])
            except (IndexError, ValueError):
                raise InputError(url, f"line {number}: no integer in the 'index' column") from None
            if index in rows:
                raise InputError(url, f"line {number}: index {index} appears twice among the parts")
            rows[index] = line
    with out.open("wb") as handle:
        handle.write(header + b"\n")
        handle.writelines(rows[index] + b"\n" for index in sorted(rows))


JOINS = {"concatenate": _concatenate, "sort-by-index": _sort_by_index}


def _fetch_parts(urls: list[str], join: str, target: Path, expected: dict[str, str]) -> None:
    """Fetch every part next to ``target``, join them into it and check the joined file."""
    parts = []
    try:
        for number, url in enumerate(urls):
            handle, part = tempfile.mkstemp(prefix=f".{target.name}.part{number}-", dir=target.parent)
            os.close(handle)
            parts.append((url, Path(part)))
            _fetch(url, Path(part), {})  # the parts are checked through the joined file
        JOINS[join](parts, target)
    finally:
        for _, part in parts:
            part.unlink(missing_ok=True)
    digests = {algorithm: hashlib.new(algorithm, target.read_bytes()) for algorithm in expected}
    _verify(f"{target.name} joined from {len(urls)} parts", digests, expected)


def download(
    url: str | list[str],
    out: Path,
    expected: dict[str, str],
    checksums_url: str | None = None,
    member: str | None = None,
    archive_sha256: str | None = None,
    unverified: bool = False,
    join: str | None = None,
) -> None:
    """Fetch ``url`` (or its archive ``member``, or its parts joined by ``join``) to ``out``, refusing
    it unless it matches ``expected``."""
    urls = [url] if isinstance(url, str) else list(url)
    if (len(urls) > 1) != (join is not None):
        raise InputError(out, "several --url need --join (how the parts join), and --join needs several --url")
    if join and (member or checksums_url or unverified):
        raise InputError(out, "a file joined from parts is checked by its own checksum (--sha256 / --sha1 / --md5)")
    # a file: URL is a local input: never the file written over it (an archive replaced by its member)
    sources = [*urls, *([checksums_url] if checksums_url else [])]
    local = [Path(url2pathname(urlparse(u).path)) for u in sources if urlparse(u).scheme == "file"]
    refuse_read_files([out], local, "download")
    url = urls[0]
    if checksums_url:
        algorithm, digest = _expected_from_list(checksums_url, url.rsplit("/", 1)[-1])
        expected = {**expected, algorithm: digest}
    if not expected and not unverified:
        raise InputError(out, "refusing to download without a checksum (give --sha256/--sha1/--md5 or --checksums-url)")
    with AtomicFiles() as files:
        target = files.temp(out)
        if join:
            _fetch_parts(urls, join, target, expected)
            return
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
    download(
        args.url, args.out, expected, args.checksums_url, args.member, args.archive_sha256, args.unverified, args.join
    )

"""A local Hugging Face hub over a folder of snapshots, for the dress rehearsal (``HF_ENDPOINT=<url>``).

The root holds one folder per pinned commit, ``<root>/ORG/NAME/COMMIT/`` (what
:func:`pipeline.rehearsal.tiny_hub.build_snapshot` writes). :func:`start` serves it on 127.0.0.1 from
a daemon thread, through the endpoints that huggingface_hub's ``HfApi.list_repo_files`` (via
``list_repo_tree``), ``model_info`` and ``hf_hub_download`` call, answered as the hub answers them:

- ``GET /api/models/ORG/NAME/tree/COMMIT[/PATH][?recursive=true]``: a JSON list of
  ``{"type": "file", "oid", "size", "path"[, "lfs"]}`` and ``{"type": "directory", "oid", "path"}``;
- ``GET /api/models/ORG/NAME/revision/COMMIT``: the model's info (``id``, ``sha``, ``siblings``);
- ``GET /api/agent-harnesses``: an empty registry (huggingface_hub asks for it once a day, for its
  user-agent header, and caches it under ``HF_HOME``);
- ``HEAD`` / ``GET /ORG/NAME/resolve/COMMIT/FILE``: the file, with ``X-Repo-Commit``, ``ETag`` (the git
  blob id; for the files the hub keeps in LFS, the weights, the SHA-256, also as ``X-Linked-Etag`` with
  ``X-Linked-Size``), ``Content-Length`` and ``Accept-Ranges``: a ``Range: bytes=A-B`` gets a 206.

Full 40-character commits resolve, and a branch where ``ORG/NAME/refs/BRANCH`` names its commit (``main`` of a
model the config locks at its first download, ``hub:ORG/NAME``); no tag. A missing
repository, commit or file is a 404 with the hub's ``X-Error-Code`` (``RepoNotFound``,
``RevisionNotFound``, ``EntryNotFound``), ``X-Error-Message`` and a JSON ``{"error": ...}`` body, which
huggingface_hub turns into ``RepositoryNotFoundError``, ``RevisionNotFoundError`` and
``RemoteEntryNotFoundError``. Requests are logged at DEBUG level only, never to stderr.

``python -m pipeline.rehearsal.hub_server ROOT [--port N]`` serves ROOT until interrupted and prints
the ``HF_ENDPOINT=...`` line to use.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from pipeline.errors import os_message
from pipeline.rehearsal.background_server import BackgroundServer

log = logging.getLogger("pipeline.rehearsal.hub_server")

COMMIT = re.compile(r"^[0-9a-f]{40}$")
NAME_PART = re.compile(r"^[A-Za-z0-9][\w.-]*$")
# What the hub's .gitattributes sends to LFS (the weights and other binaries).
LFS_SUFFIXES = (".safetensors", ".bin", ".h5", ".msgpack", ".ckpt", ".onnx", ".pt", ".pth", ".model", ".gguf")
CHUNK = 1 << 20


class HubError(Exception):
    """A refused request: the HTTP status, the hub's ``X-Error-Code`` (None: none) and message."""

    def __init__(self, status: int, code: str | None, message: str, commit: str | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.commit = status, code, message, commit


class Hub:
    """The hub's answers over ``root``, without the HTTP (digests cached by file, size and time)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._digests: dict[tuple, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def snapshot(self, repo_id: str, revision: str) -> Path:
        """The folder of ``repo_id`` at ``revision``; the hub's 404 where there is none."""
        parts = repo_id.split("/")
        repo = self.root / repo_id
        if len(parts) != 2 or not all(NAME_PART.match(part) for part in parts) or not repo.is_dir():
            raise HubError(404, "RepoNotFound", "Repository not found")
        if not _inside(repo, self.root):  # a repository linked in from elsewhere is not served
            raise HubError(404, "RepoNotFound", "Repository not found")
        ref = repo / "refs" / revision  # a branch (tiny_hub writes refs/main for a model locked at first download)
        if not COMMIT.match(revision) and NAME_PART.match(revision) and ref.is_file():
            revision = ref.read_text(encoding="utf-8").strip()
        folder = repo / revision
        if not COMMIT.match(revision) or not folder.is_dir() or not _inside(folder, self.root):
            raise HubError(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return folder

    def file(self, snapshot: Path, name: str) -> Path:
        """The file ``name`` of a snapshot (never outside it, never a hidden one)."""
        path = snapshot / name
        inside = _inside(path, snapshot)
        if not name or not inside or any(part.startswith(".") for part in Path(name).parts) or not path.is_file():
            raise HubError(404, "EntryNotFound", "Entry not found", commit=snapshot.name)
        return path

    def digests(self, path: Path) -> tuple[str, str]:
        """(git blob id, SHA-256) of a file."""
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        with self._lock:
            if key in self._digests:
                return self._digests[key]
        data = path.read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        found = (blob, hashlib.sha256(data).hexdigest())
        with self._lock:
            self._digests[key] = found
        return found

    def is_lfs(self, path: Path) -> bool:
        return path.name.endswith(LFS_SUFFIXES)

    def file_entry(self, snapshot: Path, path: Path) -> dict:
        blob, sha256 = self.digests(path)
        size = path.stat().st_size
        entry = {"type": "file", "oid": blob, "size": size, "path": path.relative_to(snapshot).as_posix()}
        if self.is_lfs(path):
            pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()
            entry["oid"] = hashlib.sha1(b"blob %d\0" % len(pointer) + pointer).hexdigest()
            entry["lfs"] = {"oid": sha256, "size": size, "pointerSize": len(pointer)}
        return entry

    def tree(self, repo_id: str, revision: str, path: str = "", recursive: bool = False) -> list[dict]:
        snapshot = self.snapshot(repo_id, revision)
        folder = snapshot / path if path else snapshot
        visible = not path or not any(part.startswith(".") for part in Path(path).parts)
        if not visible or not _inside(folder, snapshot) or not folder.is_dir():
            raise HubError(404, "EntryNotFound", f"{path} does not exist on {revision!r}", commit=revision)
        children = folder.rglob("*") if recursive else folder.iterdir()
        entries = []
        for child in sorted(children):
            relative = child.relative_to(snapshot)
            if any(part.startswith(".") for part in relative.parts) or not _inside(child, snapshot):
                continue  # hidden, or a link out of the snapshot: neither listed nor served
            if child.is_dir():
                oid = hashlib.sha1(f"{revision}/{relative.as_posix()}".encode()).hexdigest()
                entries.append({"type": "directory", "oid": oid, "path": relative.as_posix()})
            elif child.is_file():
                entries.append(self.file_entry(snapshot, child))
        return entries

    def info(self, repo_id: str, revision: str, blobs: bool = False) -> dict:
        snapshot = self.snapshot(repo_id, revision)
        siblings = []
        for entry in self.tree(repo_id, revision, recursive=True):
            if entry["type"] != "file":
                continue
            sibling = {"rfilename": entry["path"]}
            if blobs:
                sibling.update(size=entry["size"], blobId=entry["oid"])
                if "lfs" in entry:
                    lfs = entry["lfs"]
                    sibling["lfs"] = {"sha256": lfs["oid"], "size": lfs["size"], "pointerSize": lfs["pointerSize"]}
            siblings.append(sibling)
        return {
            "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24],
            "id": repo_id,
            "modelId": repo_id,
            "author": repo_id.split("/")[0],
            "sha": snapshot.name,
            "private": False,
            "gated": False,
            "disabled": False,
            "tags": [],
            "siblings": siblings,
        }


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path``, links followed, lies in ``folder``: what the hub lists or serves never leaves it."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError):  # a link loop, a NUL byte
        return False


def header_value(text: str) -> str:
    """``text`` as one header line: control characters (CR and LF among them, which would end the header
    and start another: a request's path echoed in ``X-Error-Message`` could set a cookie) and non-Latin
    characters escaped as ``\\xNN``."""
    return "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii") for c in text)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    hub: Hub

    def handle_error(self, request, client_address) -> None:  # a client gone mid-answer: no traceback on stderr
        log.debug("error answering %s: %r", client_address, sys.exc_info()[1])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer says its Content-Length
    server_version = "tiny-hub"
    server: _Server

    def log_message(self, format: str, *args) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        url = urlsplit(self.path)
        parts = [unquote(part) for part in url.path.split("/")[1:]]
        query = {key: values[-1] for key, values in parse_qs(url.query).items()}
        hub = self.server.hub
        try:
            if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "tree":
                recursive = query.get("recursive", "false").lower() in ("true", "1")
                repo_id, path = "/".join(parts[2:4]), "/".join(parts[6:])
                self._json(hub.tree(repo_id, parts[5], path, recursive), body)
            elif parts[:2] == ["api", "models"] and len(parts) == 6 and parts[4] == "revision":
                blobs = query.get("blobs", "false").lower() in ("true", "1")
                self._json(hub.info("/".join(parts[2:4]), parts[5], blobs), body)
            elif parts == ["api", "agent-harnesses"]:  # huggingface_hub's user-agent probe: an empty registry
                self._json({"standardEnvVars": [], "harnesses": {}}, body)
            elif len(parts) >= 5 and parts[2] == "resolve" and parts[0] != "api":
                snapshot = hub.snapshot("/".join(parts[:2]), parts[3])
                self._file(hub, snapshot, hub.file(snapshot, "/".join(parts[4:])), body)
            else:
                raise HubError(404, None, "Sorry, we can't find the page you are looking for.")
        except HubError as error:
            self._error(error, body)

    def _send(self, status: int, headers: dict, payload: bytes, body: bool) -> None:
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(payload))}.items():
            self.send_header(name, header_value(value))
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def _json(self, obj, body: bool) -> None:
        payload = json.dumps(obj).encode()
        self._send(200, {"Content-Type": "application/json; charset=utf-8"}, payload, body)

    def _error(self, error: HubError, body: bool) -> None:
        headers = {"Content-Type": "application/json; charset=utf-8", "X-Error-Message": error.message}
        if error.code:
            headers["X-Error-Code"] = error.code
        if error.commit:
            headers["X-Repo-Commit"] = error.commit
        self._send(error.status, headers, json.dumps({"error": error.message}).encode(), body)

    def _file(self, hub: Hub, snapshot: Path, path: Path, body: bool) -> None:
        blob, sha256 = hub.digests(path)
        size = path.stat().st_size
        headers = {
            "Content-Type": "application/octet-stream",
            "X-Repo-Commit": snapshot.name,
            "ETag": f'"{sha256 if hub.is_lfs(path) else blob}"',
            "Accept-Ranges": "bytes",
        }
        if hub.is_lfs(path):
            headers.update({"X-Linked-Etag": f'"{sha256}"', "X-Linked-Size": str(size)})
        start, end, status = 0, size, 200
        wanted = self.headers.get("Range")
        if wanted:
            found = re.fullmatch(r"bytes=(\d*)-(\d*)", wanted.strip())
            first, last = (found.group(1), found.group(2)) if found else ("", "")
            if first:
                start, end = int(first), (min(int(last) + 1, size) if last else size)
            elif last:
                start, end = max(size - int(last), 0), size
            if not found or start >= end:
                self._send(416, {**headers, "Content-Range": f"bytes */{size}"}, b"", body)
                return
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(end - start)}.items():
            self.send_header(name, header_value(value))
        self.end_headers()
        if not body:
            return
        with path.open("rb") as stream:
            stream.seek(start)
            left = end - start
            while left > 0 and (chunk := stream.read(min(CHUNK, left))):
                self.wfile.write(chunk)
                left -= len(chunk)


class HubServer(BackgroundServer):
    """A running local hub: ``url`` (for ``HF_ENDPOINT``), ``stop()``; a context manager that stops on exit."""

    def __init__(self, root: Path, host: str = "127.0.0.1", port: int = 0):
        self.root = Path(root)
        server = _Server((host, port), _Handler)
        server.hub = Hub(self.root)
        super().__init__(server, "tiny-hub")
        self.url = f"http://{self.host}:{self.port}"


def start(root: Path, host: str = "127.0.0.1", port: int = 0) -> HubServer:
    """Serve the snapshots under ``root`` as a hub on ``host:port`` (0: a free port) from a daemon thread."""
    return HubServer(root, host, port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.rehearsal.hub_server", description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, help="folder of snapshots: ROOT/ORG/NAME/COMMIT/")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        parser.error(f"{args.root}: not a folder")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop as on Ctrl-C: the server closes first
    try:
        server = start(args.root, args.host, args.port)
    except OSError as exc:  # the port in use, a host that is not this machine's: one line, exit 2
        parser.exit(2, f"error: {args.host}:{args.port}: cannot listen: {os_message(exc)}\n")
    with server:
        print(f"HF_ENDPOINT={server.url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

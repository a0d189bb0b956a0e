"""A local, read-only HTTP server for the rehearsal mirror (:mod:`pipeline.rehearsal.mirror`).

``start(mirror)`` serves the files under ``mirror`` at ``http://127.0.0.1:PORT/files/<path>`` from a
daemon thread (a :class:`~http.server.ThreadingHTTPServer`), so that the workflow's ``download``
rule fetches them with ``urllib`` as it fetches the real sources. GET and HEAD only, with the
``Content-Length`` the download stage's progress reads; no directory listings, nothing outside
``/files/`` (404), no request log (``log.debug`` only). Symlinks in the mirror (its copies of
data-root files) are followed. The download stage needs neither ranges nor HEAD: a file is one GET.

    with start(mirror) as server:
        build(config, repo, data_root, mirror, server.url)  # or build first, with a known port
"""

from __future__ import annotations

import logging
import sys
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

from pipeline.rehearsal.background_server import BackgroundServer

log = logging.getLogger("pipeline.rehearsal.file_server")
PREFIX = "/files"


class _Handler(SimpleHTTPRequestHandler):
    def translate_path(self, path: str) -> str:
        route = path.split("?", 1)[0].split("#", 1)[0]
        missing = str(Path(self.directory) / ".missing" / "not-under-files")  # answered 404
        if not route.startswith(PREFIX + "/") or "\0" in unquote(route):  # a NUL byte names no file
            return missing
        return super().translate_path(route[len(PREFIX) :])

    def list_directory(self, path):
        self.send_error(HTTPStatus.NOT_FOUND, "no directory listings")

    def log_message(self, format, *args):
        log.debug("%s %s", self.address_string(), format % args)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:  # a client gone mid-answer: no traceback on stderr
        log.debug("error answering %s: %r", client_address, sys.exc_info()[1])


class FileServer(BackgroundServer):
    """A running server: ``url`` (``http://HOST:PORT/files``), ``stop()``; a context manager."""

    def __init__(self, mirror: Path, host: str = "127.0.0.1", port: int = 0):
        self.mirror = Path(mirror)
        self.mirror.mkdir(parents=True, exist_ok=True)  # served before it is filled (its URL goes into the build)
        handler = partial(_Handler, directory=str(self.mirror))
        super().__init__(_Server((host, port), handler), "rehearsal-file-server")
        self.url = f"http://{self.host}:{self.port}{PREFIX}"


def start(mirror: Path, host: str = "127.0.0.1", port: int = 0) -> FileServer:
    """Serve ``mirror`` (made if missing) read-only at ``http://HOST:PORT/files/`` (port 0: any free port)
    until ``stop()``."""
    return FileServer(mirror, host, port)

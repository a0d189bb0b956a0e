"""An HTTP server on a daemon thread, stopped by ``stop()`` or at the end of a ``with`` block: the
rehearsal's local mirror (file_server.py) and local hub (hub_server.py) are both one."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from typing import Self


class BackgroundServer:
    """``server`` serving from a daemon thread; ``host`` and ``port`` are where it listens."""

    def __init__(self, server: ThreadingHTTPServer, name: str):
        self._server = server
        self._server.daemon_threads = True
        self.host, self.port = server.server_address[:2]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, name=name, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

"""The one exception type for bad input.

Stages raise :class:`InputError` for anything wrong with what they were given (a missing
file, a corrupt dump, an unknown language). The CLI turns it into a one-line message on
stderr and a non-zero exit, without a traceback: the message already names the file and,
where there is one, the page.
"""

from __future__ import annotations


class InputError(Exception):
    """Bad input: ``path`` names the offending file, ``where`` the place inside it."""

    def __init__(self, path, message: str, where: str | None = None):
        self.path = str(path)
        self.where = where
        self.message = message
        location = f"{self.path} ({where})" if where else self.path
        super().__init__(f"{location}: {message}")

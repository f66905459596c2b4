"""A server whose catalog follows a feature-flag file, while it runs.

``mcpkit serve examples/flags.py`` serves ``http://127.0.0.1:8000/mcp``.  The tools behind a
flag are offered only while the flag is on in ``flags.json`` beside this file (another file
with ``MCPKIT_FLAGS=/path/to/flags.json``)::

    {"beta": true}

Turn ``beta`` on or off and save: within a second the server swaps in the matching catalog
(``Server.swap``).  Calls already running finish on the catalog they started with; clients
listening on 2026-07-28 (``subscriptions/listen`` with ``toolsListChanged``) and 2025 sessions
(their ``GET`` stream) are sent ``notifications/tools/list_changed`` and list the tools again.
A file that is missing means every flag is off; one that is not a JSON object of booleans is
ignored (the catalog stays as it is, and a warning says why).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from mcpkit import (
    CompleteResult,
    Endpoint,
    EndpointRegistry,
    Lease,
    Revision,
    Server,
    SubscriptionRequest,
    endpoint,
    tool,
)

log = logging.getLogger("flags")

FLAGS: Final = Path(os.environ.get("MCPKIT_FLAGS", Path(__file__).with_name("flags.json")))
BEHIND: Final = {"summarize": "beta"}
"""The tools behind a flag: offered only while it is on."""


@endpoint(
    path="/mcp",
    name="flags-example",
    version="1.0.0",
    revisions={Revision.V2025_11_25, Revision.V2026_07_28},
    session_revisions={Revision.V2025_11_25},
    listen=True,
)
class TextTools:
    @tool(name="shout", description="Returns the text in upper case")
    def shout(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text.upper())

    @tool(name="summarize", description="(beta) Returns the first sentence of the text")
    def summarize(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text.split(". ")[0].strip())


EVERY_TOOL: Final = EndpointRegistry.from_classes(TextTools).endpoints[0]


def catalog(flags: Mapping[str, bool]) -> Endpoint:
    """The endpoint with the tools the flags allow (a flag not named is off)."""

    def offered(name: str) -> bool:
        flag = BEHIND.get(name)
        return flag is None or flags.get(flag, False)

    return EVERY_TOOL.replace(tools=[tool for tool in EVERY_TOOL.tools if offered(tool.name)])


def read_flags(path: Path) -> dict[str, bool] | None:
    """The flags in ``path`` (none when it is missing), or ``None`` when it is unreadable."""
    try:
        flags = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        log.warning("flags: %s is not readable JSON (%s); the catalog stays", path, error)
        return None
    if not isinstance(flags, dict) or not all(isinstance(v, bool) for v in flags.values()):
        log.warning("flags: %s must be a JSON object of booleans; the catalog stays", path)
        return None
    return flags


class FlagWatcher:
    """Swaps ``server``'s catalog whenever the flag file changes (checked every
    ``interval`` seconds by a daemon thread, or by calling ``check``)."""

    def __init__(self, server: Server, path: Path, interval: float = 1.0) -> None:
        self._server = server
        self._path = path
        self._interval = interval
        self._seen = self._stamp()

    def _stamp(self) -> tuple[int, int] | None:
        """When the file was written, and its size (a coarse clock may repeat a time)."""
        try:
            status = self._path.stat()
        except FileNotFoundError:
            return None
        return status.st_mtime_ns, status.st_size

    def check(self) -> bool:
        """Swap in the catalog of the file's flags if the file changed; whether it did."""
        stamp = self._stamp()
        if stamp == self._seen:
            return False
        self._seen = stamp
        flags = read_flags(self._path)
        if flags is None:
            return False
        self._server.swap(catalog(flags))  # a swap that changes no list tells nobody
        return True

    def start(self) -> None:
        def watch() -> None:
            while True:
                threading.Event().wait(self._interval)
                self.check()

        threading.Thread(target=watch, name="flag-watcher", daemon=True).start()


def grant(request: SubscriptionRequest) -> Lease:
    """Anyone may listen (a loopback example); a real server checks ``request.identity``."""
    return Lease(60.0)


server = Server(catalog(read_flags(FLAGS) or {}), subscription_authorizer=grant)
FlagWatcher(server, FLAGS).start()

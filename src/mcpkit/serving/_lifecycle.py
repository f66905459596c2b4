"""Stopping the embedded HTTP server without dropping the calls it has accepted.

uvicorn's own graceful shutdown waits a few seconds for its tasks and then cancels them: each
client of a call still running gets a plain-text 500 and the log a traceback per call.
``GracefulServer`` puts mcpkit's drain in front of that: on SIGTERM or SIGINT it stops
accepting connections, closes idle ones, lets the engine refuse new requests (503 with
``Retry-After``) while the admitted calls finish within ``drain_seconds``, answers those still
running with the JSON-RPC overload error on their own response (their tokens cancelled), and
only then lets uvicorn finish.  A connection whose client still does not take its answer after
a short grace is aborted.  One log line when stopping starts with calls in flight, and one
summary at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any, Final

import uvicorn

from mcpkit.server import Engine

__all__ = ["GracefulServer"]

log = logging.getLogger("mcpkit")

_ANSWER_GRACE: Final = 1.0
"""Seconds the answers of cut-off calls get to reach their clients before connections that
are still busy are aborted."""
_POLL: Final = 0.05


def _nothing() -> None:
    """No start-up hook."""


class GracefulServer(uvicorn.Server):
    """A ``uvicorn.Server`` whose shutdown drains ``engine`` first (module docstring)."""

    def __init__(self, config: uvicorn.Config, engine: Engine, drain_seconds: float) -> None:
        super().__init__(config)
        self._engine = engine
        self._drain_seconds = drain_seconds
        self.reraise_signals = True
        self.on_started: Callable[[], object] = _nothing
        """Called once serving: the sockets listen and the application has started."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn's start-up exits rather than returns when it fails.
        await super().startup(sockets)
        self.on_started()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn raises a captured signal again once it has stopped, so that the program
        around it sees the signal too.  ``reraise_signals=False`` (``Server.run``, the
        foreground server) ends with a normal return instead: the stop was the graceful
        answer to the signal, not a failure (no ``KeyboardInterrupt`` traceback, exit 0)."""
        with super().capture_signals():
            yield
            if not self.reraise_signals:
                self._captured_signals.clear()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # No new connections (uvicorn's own shutdown below does this again, harmlessly, and
        # closes any sockets it was handed; a request arriving on one meanwhile gets a 503).
        for server in self.servers:
            server.close()
        connections: Any = self.server_state.connections
        for connection in list(connections):
            connection.shutdown()  # idle ones close now, busy ones after their response
        engine = self._engine
        in_flight = engine.calls
        if in_flight:  # otherwise the summary below follows at once
            log.info(
                "mcpkit: stopping: %d call(s) in flight, draining for up to %g s",
                in_flight,
                self._drain_seconds,
            )
        cut = await engine.drain(self._drain_seconds, hurry=lambda: self.force_exit)
        loop = asyncio.get_running_loop()
        end = loop.time() + _ANSWER_GRACE  # ends as soon as every answer is out
        while self.server_state.tasks and loop.time() < end:
            await asyncio.sleep(_POLL)
        aborted = 0
        for connection in list(connections):
            transport = connection.transport
            # Still open (a response in progress), or closed with an answer its client never
            # reads: nothing more can be delivered, so it is not waited for.
            if not transport.is_closing() or transport.get_write_buffer_size():
                transport.abort()
                aborted += 1
        if cut or aborted:
            log.warning(
                "mcpkit: stopped: %d call(s) finished, %d cut off after %g s, "
                "%d connection(s) aborted",
                in_flight - cut,
                cut,
                self._drain_seconds,
                aborted,
            )
        else:
            log.info("mcpkit: stopped: %d call(s) finished", in_flight)
        await super().shutdown(sockets)

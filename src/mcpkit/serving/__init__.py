"""``mcpkit.Server``: a registry served over the embedded HTTP server or stdio (layer 7).

Its own layer so that the command line (layer 8) is only a front end: an application that
serves from Python and one that runs ``mcpkit serve`` get the same server.  ``GracefulServer``
(``mcpkit.serving._lifecycle``) is not imported here: it loads uvicorn, which ``asgi()`` and
stdio do not need.
"""

from mcpkit.serving._server import EventLoop as EventLoop
from mcpkit.serving._server import Server as Server
from mcpkit.serving._server import registry_of as registry_of
from mcpkit.serving._workers import SharedMetrics as SharedMetrics
from mcpkit.serving._workers import Supervisor as Supervisor
from mcpkit.serving._workers import bind_workers as bind_workers
from mcpkit.serving._workers import inherited_sockets as inherited_sockets
from mcpkit.serving._workers import shared_metrics as shared_metrics
from mcpkit.serving._workers import single_process_reasons as single_process_reasons

__all__ = (
    "EventLoop",
    "Server",
    "SharedMetrics",
    "Supervisor",
    "bind_workers",
    "inherited_sockets",
    "registry_of",
    "shared_metrics",
    "single_process_reasons",
)

"""The command line and the embedded HTTP server start-up (layer 7)."""

from mcpkit.cli._main import load_target as load_target
from mcpkit.cli._main import main as main
from mcpkit.cli._server import Server as Server
from mcpkit.cli._server import registry_of as registry_of

__all__ = ("Server", "load_target", "main", "registry_of")

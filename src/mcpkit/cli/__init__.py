"""The ``mcpkit`` command line (layer 8); the server it starts is ``mcpkit.serving``'s."""

from mcpkit.cli._main import load_target as load_target
from mcpkit.cli._main import main as main

__all__ = ("load_target", "main")

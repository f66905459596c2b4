"""The single source of mcpkit's version number (read by ``pyproject.toml`` at build time)."""

__version__ = "0.1.0"

"""``python -m mcpkit``: the ``mcpkit`` command (``mcpkit serve FILE_OR_MODULE[:ATTR]``)."""

import sys

from mcpkit.cli import main

if __name__ == "__main__":
    sys.exit(main())

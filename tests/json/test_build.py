"""The C accelerator must be present unless pure Python is asked for explicitly.

The ``impl`` fixture skips the C variant when the extension is missing; without this test a
broken build would turn half the suite into skips and still pass CI.
"""

from __future__ import annotations

import os

import pytest

import mcpkit.json
from mcpkit.json._codec import IMPLEMENTATIONS

PURE_PYTHON = os.environ.get("MCPKIT_PURE_PYTHON") == "1"


@pytest.mark.skipif(PURE_PYTHON, reason="MCPKIT_PURE_PYTHON=1 allows a missing extension")
def test_c_extension_is_built() -> None:
    """Without MCPKIT_PURE_PYTHON=1 the C codec is built and is the one in use."""
    assert "c" in IMPLEMENTATIONS, "mcpkit.json._speedups is not built"
    assert mcpkit.json.IMPLEMENTATION == "c"


def test_selected_implementation() -> None:
    """The public functions are the selected implementation's; pure Python when asked for."""
    assert "python" in IMPLEMENTATIONS
    assert mcpkit.json.IMPLEMENTATION in IMPLEMENTATIONS
    if PURE_PYTHON:
        assert mcpkit.json.IMPLEMENTATION == "python"
    assert mcpkit.json.decode(b'{"a":[1]}') == mcpkit.json.from_python({"a": [1]})
    assert mcpkit.json.encode({"a": [1]}) == b'{"a":[1]}'

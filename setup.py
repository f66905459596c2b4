"""Build hook for the optional C accelerator; all other metadata lives in pyproject.toml.

The extension is skipped, never half-built, when ``MCPKIT_PURE_PYTHON=1`` is set or when its
source is absent; mcpkit then runs on the pure-Python reference codec.
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import Extension, setup

SPEEDUPS_SOURCE = "src/mcpkit/json/_speedups.c"


def extensions() -> list[Extension]:
    if os.environ.get("MCPKIT_PURE_PYTHON") == "1":
        return []
    if not (Path(__file__).resolve().parent / SPEEDUPS_SOURCE).is_file():
        return []
    return [
        Extension(
            "mcpkit.json._speedups",
            [SPEEDUPS_SOURCE],
            extra_compile_args=[
                "-O2",
                "-std=c11",
                "-Wall",
                "-Wextra",
                "-Werror=implicit-function-declaration",
            ],
        )
    ]


setup(ext_modules=extensions())

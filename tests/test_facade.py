"""The ``mcpkit`` facade: explicit re-exports, a tidy ``__all__``, and a core free of I/O."""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import json
import re
import subprocess
import sys
import types

import mcpkit
import mcpkit.errors
import mcpkit.limits
from mcpkit import _version

# What the core (layers 1-4) must never load: no event loop, socket or web stack.
FORBIDDEN_IN_CORE = ("asyncio", "anyio", "socket", "uvicorn", "starlette")
CORE_PACKAGES = ("errors", "limits", "json", "schema", "model", "protocol")


def _isort_key(name: str) -> tuple[int, list[tuple[int, str]]]:
    """The order ruff's RUF022 keeps: CONSTANTS, then CamelCase, then everything else, with
    digit runs compared as numbers (``Int8`` before ``Int16``)."""
    natural = [
        (int(part), "") if part.isdigit() else (0, part) for part in re.split(r"(\d+)", name)
    ]
    if name.isupper() and len(name) > 1:
        return (0, natural)
    if name[:1].isupper():
        return (1, natural)
    return (2, natural)


def test_all_is_a_sorted_tuple_without_duplicates() -> None:
    assert isinstance(mcpkit.__all__, tuple)
    assert len(set(mcpkit.__all__)) == len(mcpkit.__all__)
    assert list(mcpkit.__all__) == sorted(mcpkit.__all__, key=_isort_key)


def test_every_name_in_all_exists() -> None:
    for name in mcpkit.__all__:
        assert hasattr(mcpkit, name), name


def test_errors_are_re_exported() -> None:
    for name in mcpkit.errors.__all__:
        assert name in mcpkit.__all__, name
        assert getattr(mcpkit, name) is getattr(mcpkit.errors, name)


def test_limits_and_version_are_re_exported() -> None:
    assert mcpkit.Limits is mcpkit.limits.Limits
    assert mcpkit.DEFAULT_LIMITS is mcpkit.limits.DEFAULT_LIMITS
    assert mcpkit.__version__ == _version.__version__
    assert {"Limits", "DEFAULT_LIMITS", "__version__"} <= set(mcpkit.__all__)


def test_version_matches_installed_metadata() -> None:
    assert importlib.metadata.version("mcpkit") == mcpkit.__version__


def test_no_public_name_outside_all() -> None:
    """Nothing leaks into the facade by accident (submodules aside)."""
    for name, value in vars(mcpkit).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        assert name in mcpkit.__all__, name


def test_package_is_typed() -> None:
    assert importlib.resources.files("mcpkit").joinpath("py.typed").is_file()


def test_core_imports_no_event_loop_or_socket() -> None:
    """Importing mcpkit and every module of its core layers loads none of FORBIDDEN_IN_CORE.

    Runs in a fresh interpreter, so modules the test runner loaded do not count.
    """
    script = f"""
import importlib, json, pkgutil, sys
import mcpkit
core = {CORE_PACKAGES!r}
for top in pkgutil.iter_modules(mcpkit.__path__):
    if top.name not in core:
        continue  # walk_packages would import non-core packages to list their children
    module = importlib.import_module("mcpkit." + top.name)
    if top.ispkg:
        for info in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
            importlib.import_module(info.name)
forbidden = {FORBIDDEN_IN_CORE!r}
loaded = sorted(
    name for name in sys.modules
    if name in forbidden or name.startswith(tuple(f + "." for f in forbidden))
)
ours = sorted(name for name in sys.modules if name.startswith("mcpkit"))
print(json.dumps({{"loaded": loaded, "modules": ours}}))
"""
    result = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert "mcpkit.errors" in report["modules"]
    assert "mcpkit.limits" in report["modules"]
    assert "mcpkit.json._values" in report["modules"]
    assert report["loaded"] == []

"""``examples/codec_demo.py``: the codec demo round-trips its sample and refuses bad bodies."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import mcpkit

PATH = Path(__file__).resolve().parents[1] / "examples" / "codec_demo.py"
_SPEC = importlib.util.spec_from_file_location("mcpkit_example_codec", PATH)
assert _SPEC is not None and _SPEC.loader is not None
demo = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(demo)


def test_demo_prints_round_trip_and_parse_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main() == 0
    out = capsys.readouterr().out
    assert f"mcpkit {mcpkit.__version__}" in out
    assert '"method":"tools/call"' in out
    assert '"max_price":19.90' in out  # the decimal keeps its scale through the round trip
    lines = out.splitlines()
    for label, _ in demo.BAD_BODIES:
        line = next(line for line in lines if line.startswith(label + ":"))
        assert "-32700 'Parse error' (HTTP 400" in line


def test_demo_fails_if_a_bad_body_is_accepted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo, "BAD_BODIES", (("valid", b"[]"),))
    assert demo.main() == 1
    assert "valid: accepted, but must be refused" in capsys.readouterr().out


def test_script_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-I", str(PATH)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "reason duplicate_member" in result.stdout

"""The official conformance suite, run by ``tools/run_conformance.py`` (which installs Node and
the pinned harness into ``build/conformance-cache`` on first use), and what it scored."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[2]
RUNNER: Final = ROOT / "tools" / "run_conformance.py"
EXPECTED_FAILURES: Final = ROOT / "conformance" / "expected-failures.{rev}.yml"
SUITE_SECONDS: Final = 300.0
"""The longest a run may take (it takes 15 to 50 s)."""


@dataclass(frozen=True)
class Scores:
    """One run of the runner: its exit status, what it printed, and its ``summary.json``."""

    returncode: int
    output: str
    summary: dict[str, Any]
    out: Path

    def run(self, name: str) -> dict[str, Any]:
        """The summary of the run ``name`` (``req-2026-07-28``...)."""
        result: dict[str, Any] = self.summary[name]
        return result

    def outcomes(self, name: str) -> dict[str, bool]:
        """Whether each scenario of the run passed."""
        return {scenario: bool(o["ok"]) for scenario, o in self.run(name)["scenarios"].items()}

    def not_passed(self, name: str, scenario: str) -> dict[str, str]:
        """The checks of a scenario that did not pass (a failure, or a warning, which the
        harness's own verdict counts against the scenario too): id to status."""
        found = sorted((self.out / name).glob(f"server-{scenario}-20*/checks.json"))
        assert len(found) == 1, found
        checks = json.loads(found[0].read_text(encoding="utf-8"))
        return {c["id"]: c["status"] for c in checks if c["status"] in ("FAILURE", "WARNING")}


def run_suite(target: list[str], runs: str, out: Path) -> Scores:
    """The runner against ``target`` (``--url URL`` or ``--cmd COMMAND``), with the project's
    expected-failures files, its results in ``out``."""
    command = [sys.executable, str(RUNNER), *target, "--runs", runs]
    command += ["--expected-failures", str(EXPECTED_FAILURES), "--out", str(out)]
    done = subprocess.run(
        command,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=SUITE_SECONDS,
    )
    output = done.stdout + done.stderr
    summary_path = out / "summary.json"
    assert summary_path.is_file(), f"the runner wrote no summary:\n{output}"
    summary: dict[str, Any] = json.loads(summary_path.read_text(encoding="utf-8"))
    return Scores(done.returncode, output, summary, out)

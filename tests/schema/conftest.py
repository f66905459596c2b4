"""End-of-run counts of the JSON-Schema-Test-Suite differential run (test_suite_differential).

Printed in the terminal summary so that ``make test`` and CI logs always show how many suite
cases were kept, skipped and run, not only whether they passed.
"""

from __future__ import annotations

from typing import Final

import pytest

from .suite import SELECTION_KEY, Group, jsonschema_version

CASE_NODE: Final = "test_suite_differential.py::test_case["


def _cases(groups: tuple[Group, ...]) -> int:
    return sum(len(group.cases) for group in groups)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    selection = config.stash.get(SELECTION_KEY, None)
    if selection is None:
        return  # the differential module was not collected in this run
    counts = {
        outcome: sum(
            1
            for report in terminalreporter.stats.get(outcome, [])
            if isinstance(report, pytest.TestReport) and CASE_NODE in report.nodeid
        )
        for outcome in ("passed", "failed", "skipped")
    }
    terminalreporter.write_sep(
        "-", f"JSON-Schema-Test-Suite draft2020-12 (jsonschema {jsonschema_version()} sdist)"
    )
    terminalreporter.write_line(
        f"kept {len(selection.kept)} groups / {_cases(selection.kept)} cases; "
        f"skipped outside Profile 1 {len(selection.skipped)} / {_cases(selection.skipped)}; "
        f"refused by compile (named rule) {len(selection.rejected)} / "
        f"{_cases(selection.rejected)}"
    )
    terminalreporter.write_line(
        f"ran {sum(counts.values())}: passed {counts['passed']}, failed {counts['failed']}, "
        f"skipped {counts['skipped']}"
    )

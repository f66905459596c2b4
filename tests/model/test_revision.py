"""Protocol revisions (RV-01): three exact wire strings, parsed exactly or not at all.

A revision string arrives from a client in a header or in ``_meta``; anything that is not one of
the three exact strings must be an unknown revision, never a near miss that gets corrected.
"""

from __future__ import annotations

import pytest

from mcpkit.model import Revision

WIRE = {
    Revision.V2025_06_18: "2025-06-18",
    Revision.V2025_11_25: "2025-11-25",
    Revision.V2026_07_28: "2026-07-28",
}


def test_exactly_three_revisions_RV_01() -> None:
    """RV-01: the enum holds the three supported revisions and nothing else."""
    assert list(Revision) == [Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28]


@pytest.mark.parametrize("revision", list(Revision), ids=lambda r: r.wire)
def test_wire_is_the_exact_string_RV_01(revision: Revision) -> None:
    """RV-01: ``wire`` (and the enum value) is the exact string, of type ``str``."""
    assert revision.wire == WIRE[revision] == revision.value
    assert type(revision.wire) is str


@pytest.mark.parametrize("revision", list(Revision), ids=lambda r: r.wire)
def test_parse_round_trips_RV_01(revision: Revision) -> None:
    """RV-01: parsing a wire string gives the member back."""
    assert Revision.parse(revision.wire) is revision


def test_parse_accepts_a_str_subclass_RV_01() -> None:
    """A ``str`` subclass is read as its plain text, whatever its ``__eq__`` says."""

    class Text(str):
        def __eq__(self, other: object) -> bool:
            return False

        __hash__ = str.__hash__

    assert Revision.parse(Text("2026-07-28")) is Revision.V2026_07_28


@pytest.mark.parametrize(
    "text",
    [
        "",
        " 2025-06-18",
        "2025-06-18 ",
        "2025-06-18\n",
        "\t2026-07-28",
        "2025-6-18",
        "2025-06-18T00:00:00Z",
        "2025/06/18",
        "20250618",
        "2025-03-26",  # a real MCP revision, but not one mcpkit serves
        "2024-11-05",
        "2026-07-29",
        "V2026_07_28",
        "latest",
        "\uff12\uff10\uff12\uff16-07-28",  # fullwidth digits
        "2026\u201007\u201028",  # Unicode hyphens
        "2026-07-28\x00",
    ],
)
def test_parse_refuses_near_misses_RV_01(text: str) -> None:
    """RV-01: no trimming, no case folding, no date normalisation."""
    assert Revision.parse(text) is None


@pytest.mark.parametrize(
    "value", [None, b"2026-07-28", 20260728, ["2026-07-28"], Revision.V2026_07_28]
)
def test_parse_refuses_non_strings_RV_01(value: object) -> None:
    """A decoded JSON value of the wrong type is simply an unknown revision."""
    assert Revision.parse(value) is None


def test_legacy_revisions_RV_01() -> None:
    """The two 2025 revisions are legacy (initialize negotiation); 2026-07-28 is not."""
    assert [r for r in Revision if r.has_handshake] == [Revision.V2025_06_18, Revision.V2025_11_25]
    assert not Revision.V2026_07_28.has_handshake


def test_a_revision_is_not_a_string_RV_01() -> None:
    """Members never compare equal to strings, so code cannot branch on raw wire text by
    accident (revision differences live in one table)."""
    wire: object = "2026-07-28"
    assert wire != Revision.V2026_07_28
    assert wire not in set(Revision)
    assert not isinstance(Revision.V2026_07_28, str)


def test_wire_strings_sort_chronologically_RV_01() -> None:
    """The wire strings are ISO dates, so ``key=lambda r: r.wire`` orders by release."""
    assert sorted(Revision, key=lambda r: r.wire) == list(Revision)
    assert max(Revision, key=lambda r: r.wire) is Revision.V2026_07_28

"""The hand-written corpus through both implementations (JL-25: strict RFC 8259 plus limits)."""

from __future__ import annotations

import pytest

from mcpkit.errors import ParseFailure
from mcpkit.json import json_equal

from .corpus import INVALID, VALID
from .helpers import Impl, assert_same


def test_corpus_size() -> None:
    """The corpus stays big enough to mean something."""
    assert len(VALID) >= 60
    assert len(INVALID) >= 80
    ids = [name for name, _, _ in VALID] + [name for name, _, _ in INVALID]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("document", "expected"), [pytest.param(d, e, id=i) for i, d, e in VALID])
def test_valid(impl: Impl, document: bytes, expected: object) -> None:
    """JL-25: valid documents decode to exactly the expected types, order and scale."""
    assert_same(impl.decode(document), expected)


@pytest.mark.parametrize("document", [pytest.param(d, id=i) for i, d, _ in VALID])
def test_valid_round_trips(impl: Impl, document: bytes) -> None:
    """Writing a decoded value and reading it back gives a JSON-equal value, stable bytes.

    Not always the same types: ``1E+0`` is written ``1``, which reads back as an int.
    """
    decoded = impl.decode(document)
    written = impl.encode(decoded)
    again = impl.decode(written)
    assert json_equal(again, decoded)
    assert impl.encode(again) == written


@pytest.mark.parametrize(("document", "reason"), [pytest.param(d, r, id=i) for i, d, r in INVALID])
def test_invalid(impl: Impl, document: bytes, reason: ParseFailure) -> None:
    """JL-25: invalid documents fail with the reason the contract assigns."""
    assert impl.parse_failure(document) is reason

"""The call contract both implementations share: one positional argument, ``limits`` by
keyword only and of the right type, and input that is not bytes-like refused up front."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.limits import Limits

from .helpers import Impl


def _call(function: Any, *args: object, **kwargs: object) -> object:
    return function(*args, **kwargs)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        pytest.param((b"1", Limits()), {}, id="limits-positional"),
        pytest.param((), {}, id="no-argument"),
        pytest.param((b"1",), {"limit": Limits()}, id="unknown-keyword"),
        pytest.param((b"1",), {"limits": object()}, id="limits-wrong-type"),
        pytest.param((b"1",), {"limits": None}, id="limits-none"),
    ],
)
def test_decode_and_encode_refuse_bad_calls(
    impl: Impl, args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    with pytest.raises(TypeError):
        _call(impl.decode, *args, **kwargs)
    with pytest.raises(TypeError):
        _call(impl.encode, *args, **kwargs)


@pytest.mark.parametrize("data", ["[1]", 1, None, [b"1"]])
def test_decode_accepts_only_bytes_like_input(impl: Impl, data: object) -> None:
    with pytest.raises(TypeError):
        _call(impl.decode, data)


def test_limits_by_keyword_are_honoured_and_cached_per_object(impl: Impl) -> None:
    small = Limits(max_json_nodes=1)
    assert impl.decode(b"1", limits=small) == 1
    for _ in range(2):  # the C reader caches the last Limits it saw: switching must not leak
        with pytest.raises(Exception, match="Parse error"):
            impl.decode(b"[1]", limits=small)
        assert impl.decode(b"[1]", limits=Limits()) == [1]

"""Fixtures shared by the server tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..redis_server import RedisServer, running_redis


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A real ``redis-server`` on a loopback port, just for this test (``tests/redis_server``)."""
    with running_redis() as server:
        yield server

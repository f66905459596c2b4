"""The ``impl`` fixture: every codec test runs once per implementation (C and pure Python).

Session-scoped so hypothesis tests may use it.  A missing C extension skips the "c" variant
here; ``test_build.py`` is what fails when the extension silently went missing.
"""

from __future__ import annotations

import pytest

from mcpkit.json._codec import IMPLEMENTATIONS

from .helpers import Impl


@pytest.fixture(scope="session", params=["c", "python"])
def impl(request: pytest.FixtureRequest) -> Impl:
    name: str = request.param
    if name not in IMPLEMENTATIONS:
        pytest.skip("the C extension is not built")
    decode, encode = IMPLEMENTATIONS[name]
    return Impl(name, decode, encode)

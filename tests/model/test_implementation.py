"""The server's self-description and catalog cache hints (PE-02, PE-06) and their wire form.

``Implementation`` is written into every ``initialize`` result and every 2026 result ``_meta``,
so what it writes is checked against the official schemas of all three revisions.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonObject, encode
from mcpkit.model import Icon
from mcpkit.model._implementation import CachePolicy, Implementation

from ..spec_schemas import schema_errors

SECRET = "SECRET-7f3a"
ICON = Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=("48x48",))


def refusal(build: Any) -> str:
    with pytest.raises(InvalidValueError) as caught:
        build()
    assert SECRET not in str(caught.value)
    return str(caught.value)


# --- the official schemas ----------------------------------------------------------------------


def wire(value: Any) -> Any:
    """What the server would write for ``value``, read back as plain Python."""
    return json.loads(encode(value.to_json()))


# --- Implementation (PE-02) ----------------------------------------------------------------------


def full() -> Implementation:
    return Implementation(
        "inventory",
        "1.0.0",
        title="Inventory MCP",
        description="Inventory search and reference data",
        website_url="https://example.com/inventory",
        icons=(ICON,),
    )


def test_name_and_version_are_required_and_the_rest_keyword_only_PE_02() -> None:
    """PE-02: ``withNameAndVersion(name, version)`` then optional setters."""
    implementation = Implementation("inventory", "1.0.0")
    assert (implementation.name, implementation.version) == ("inventory", "1.0.0")
    assert implementation.title is implementation.description is implementation.website_url
    assert implementation.title is None and implementation.icons == ()
    assert Implementation(name="a", version="1") == Implementation("a", "1")
    with pytest.raises(TypeError):
        Implementation("a", "1", "title")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Implementation("a")  # type: ignore[call-arg]


def test_all_fields_are_kept_PE_02() -> None:
    implementation = full()
    assert implementation.title == "Inventory MCP"
    assert implementation.description == "Inventory search and reference data"
    assert implementation.website_url == "https://example.com/inventory"
    assert implementation.icons == (ICON,) and type(implementation.icons) is tuple
    from_list = Implementation("a", "1", icons=[ICON, ICON])  # type: ignore[arg-type]
    assert from_list.icons == (ICON, ICON) and type(from_list.icons) is tuple


@pytest.mark.parametrize("field", ["name", "version"])
def test_name_and_version_must_not_be_empty_PE_02(field: str) -> None:
    values: dict[str, Any] = {"name": "a", "version": "1", field: ""}
    assert refusal(lambda: Implementation(**values)) == f"Implementation.{field}: must not be empty"


@pytest.mark.parametrize("field", ["name", "version", "title", "description"])
def test_text_must_be_well_formed_PE_02(field: str) -> None:
    """Unpaired surrogates are refused in every text field (CB-16); the message names the field
    and the rule, never the value."""
    values: dict[str, Any] = {"name": "a", "version": "1", field: SECRET + "\ud800"}
    message = refusal(lambda: Implementation(**values))
    assert message == f"Implementation.{field}: text contains an unpaired surrogate"
    values[field] = 7
    assert refusal(lambda: Implementation(**values)).startswith(f"Implementation.{field}: ")


def test_text_is_kept_exactly_and_str_subclasses_become_str_PE_02() -> None:
    class Text(str):
        pass

    implementation = Implementation(Text(" a\u0301 "), Text("1.0\U0001f680"), title=Text(""))
    assert implementation.name == " a\u0301 " and type(implementation.name) is str
    assert type(implementation.version) is str and type(implementation.title) is str
    assert implementation.title == ""


@pytest.mark.parametrize(
    "url",
    ["https://example.com/inventory", "HTTP://Example.COM/a/../b?q=%7e#f", "urn:x:y", "mailto:a@b"],
)
def test_website_url_is_an_absolute_uri_kept_as_spelt_PE_02(url: str) -> None:
    assert Implementation("a", "1", website_url=url).website_url == url


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("/inventory", "must be an absolute URI that starts with a scheme (RFC 3986)"),
        ("example.com/" + SECRET, "must be an absolute URI that starts with a scheme (RFC 3986)"),
        ("", "must be an absolute URI that starts with a scheme (RFC 3986)"),
        ("https://example.com/a b" + SECRET, "a URI cannot contain spaces or control characters"),
        ("https://example.com/\x00", "a URI cannot contain spaces or control characters"),
    ],
)
def test_website_url_must_be_absolute_PE_02(url: str, rule: str) -> None:
    message = refusal(lambda: Implementation("a", "1", website_url=url))
    assert message == f"Implementation.website_url: {rule}"


@pytest.mark.parametrize(
    ("icons", "rule"),
    [
        ("https://example.com/i.png", "must be a tuple or a list"),
        ({ICON}, "must be a tuple or a list"),
        ([ICON, "https://example.com/i.png"], "every icon must be an Icon"),
    ],
)
def test_icons_must_be_a_sequence_of_icons_PE_02(icons: Any, rule: str) -> None:
    assert refusal(lambda: Implementation("a", "1", icons=icons)) == f"Implementation.icons: {rule}"


def test_implementation_is_immutable_and_replace_revalidates_PE_02() -> None:
    implementation = full()
    with pytest.raises(dataclasses.FrozenInstanceError):
        implementation.name = "b"  # type: ignore[misc]
    assert not hasattr(implementation, "__dict__")
    assert dataclasses.replace(implementation, title=None).title is None
    with pytest.raises(InvalidValueError):
        dataclasses.replace(implementation, name="")
    assert hash(implementation) == hash(full()) and implementation == full()


def test_to_json_writes_present_members_only_PE_02() -> None:
    assert wire(Implementation("a", "1")) == {"name": "a", "version": "1"}
    assert list(wire(full())) == ["name", "version", "title", "description", "websiteUrl", "icons"]
    assert wire(full())["icons"] == [ICON.to_json()]
    assert wire(Implementation("a", "1", title="")) == {"name": "a", "version": "1", "title": ""}
    assert type(full().to_json()) is JsonObject


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_implementation_matches_the_official_schema_PE_02(revision: str) -> None:
    """The full object is a valid ``Implementation`` on the revisions that know every field."""
    for implementation in (Implementation("a", "1"), full()):
        assert schema_errors(revision, "Implementation", wire(implementation)) == []


def test_june_knows_only_name_title_and_version_PE_02() -> None:
    """2025-06-18 has no description, website or icons: the protocol layer must project, which
    the closed June schema shows."""
    assert schema_errors("2025-06-18", "Implementation", wire(Implementation("a", "1"))) == []
    titled = Implementation("a", "1", title="A")
    assert schema_errors("2025-06-18", "Implementation", wire(titled)) == []
    assert schema_errors("2025-06-18", "Implementation", wire(full())) != []


def test_server_info_in_2026_result_meta_matches_the_official_schema_PE_02() -> None:
    """2026-07-28 results carry the implementation in ``_meta`` (ResultMetaObject)."""
    result = {
        "resultType": "complete",
        "content": [],
        "_meta": {"io.modelcontextprotocol/serverInfo": wire(full())},
    }
    assert schema_errors("2026-07-28", "CallToolResult", result) == []
    result["_meta"] = {"io.modelcontextprotocol/serverInfo": {"name": "a"}}
    assert schema_errors("2026-07-28", "CallToolResult", result) != []


# --- CachePolicy (PE-06) -------------------------------------------------------------------------


def test_private_no_cache_instance_PE_06() -> None:
    """PE-06: Soklet's ``privateNoCacheInstance()``: private scope, TTL 0, one shared value."""
    policy = CachePolicy.PRIVATE_NO_CACHE
    assert policy == CachePolicy(0, "private") and policy is CachePolicy.PRIVATE_NO_CACHE
    assert (policy.ttl_ms, policy.scope) == (0, "private")


@pytest.mark.parametrize(
    ("ttl_ms", "scope"),
    [(0, "public"), (1, "private"), (3_600_000, "public"), (2**53 - 1, "private")],
)
def test_cache_policy_fields_PE_06(ttl_ms: int, scope: Any) -> None:
    policy = CachePolicy(ttl_ms=ttl_ms, scope=scope)
    assert (policy.ttl_ms, policy.scope) == (ttl_ms, scope)
    assert wire(policy) == {"ttlMs": ttl_ms, "cacheScope": scope}


@pytest.mark.parametrize(
    ("ttl_ms", "rule"),
    [
        (-1, "must be between 0 and 2**53 - 1"),
        (2**53, "must be between 0 and 2**53 - 1"),
        (True, "must be an int"),
        (1.0, "must be an int"),
        ("5", "must be an int"),
        (None, "must be an int"),
    ],
)
def test_ttl_must_be_a_non_negative_safe_integer_PE_06(ttl_ms: Any, rule: str) -> None:
    assert refusal(lambda: CachePolicy(ttl_ms, "private")) == f"CachePolicy.ttl_ms: {rule}"


@pytest.mark.parametrize("scope", ["PUBLIC", "shared", "", " private", None, 1])
def test_scope_is_public_or_private_PE_06(scope: Any) -> None:
    message = refusal(lambda: CachePolicy(0, scope))
    assert message == "CachePolicy.scope: must be 'public' or 'private'"


def test_int_and_str_subclasses_are_stored_plainly_PE_06() -> None:
    class Scope(str):
        pass

    class Millis(int):
        pass

    policy = CachePolicy(Millis(5), Scope("public"))  # type: ignore[arg-type]
    assert type(policy.ttl_ms) is int and type(policy.scope) is str


def test_cache_policy_is_immutable_PE_06() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        CachePolicy.PRIVATE_NO_CACHE.ttl_ms = 5  # type: ignore[misc]
    assert hash(CachePolicy(0, "private")) == hash(CachePolicy.PRIVATE_NO_CACHE)


@pytest.mark.parametrize("policy", [CachePolicy.PRIVATE_NO_CACHE, CachePolicy(60_000, "public")])
def test_cache_members_match_the_official_schema_PE_06(policy: CachePolicy) -> None:
    """The two members make a valid 2026 ``CacheableResult``; without them it is invalid."""
    assert (
        schema_errors("2026-07-28", "CacheableResult", {"resultType": "complete", **wire(policy)})
        == []
    )
    assert schema_errors("2026-07-28", "CacheableResult", {"resultType": "complete"}) != []

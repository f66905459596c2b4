"""Catalog pages (issue 4 item 7): built and encoded once, ordered per revision (CT-08, CT-09),
icons per revision (LG-11), 2026 cache hints and ``resultType``, strict opaque cursors; every
page is checked against its revision's official (closed) schema."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from mcpkit.errors import ConfigurationError, InvalidParams
from mcpkit.limits import Limits
from mcpkit.model import (
    UNSET,
    CachePolicy,
    Endpoint,
    ResourceListPage,
    ResourceListRegistration,
    Revision,
)
from mcpkit.protocol import DEFAULT_PAGE_SIZE, SERVER_INFO_KEY, Catalog, ListKind

from ..spec_schemas import schema_errors
from .samples import (
    ALL,
    IMPLEMENTATION,
    JUNE,
    MODERN,
    NOVEMBER,
    PATH,
    REVISIONS,
    endpoint,
    raw_tool,
    wire,
)

RESULTS = {
    ListKind.TOOLS: "ListToolsResult",
    ListKind.PROMPTS: "ListPromptsResult",
    ListKind.RESOURCES: "ListResourcesResult",
    ListKind.RESOURCE_TEMPLATES: "ListResourceTemplatesResult",
}
KEYS = {
    ListKind.TOOLS: "name",
    ListKind.PROMPTS: "name",
    ListKind.RESOURCES: "uri",
    ListKind.RESOURCE_TEMPLATES: "uriTemplate",
}


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def pages(catalog: Catalog, revision: Revision, kind: ListKind) -> list[Any]:
    """Every page decoded, each checked against the revision's schema."""
    decoded = [json.loads(page) for page in catalog.pages(revision, kind)]
    for page in decoded:
        assert schema_errors(revision.wire, RESULTS[kind], page) == []
    return decoded


def keys(catalog: Catalog, revision: Revision, kind: ListKind) -> list[str]:
    return [
        entry[KEYS[kind]] for page in pages(catalog, revision, kind) for entry in page[kind.member]
    ]


def test_list_kinds() -> None:
    assert [kind.method for kind in ListKind] == [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ]
    assert [kind.member for kind in ListKind] == [
        "tools",
        "prompts",
        "resources",
        "resourceTemplates",
    ]


def test_CT_08_modern_lists_keep_registration_order() -> None:
    catalog = Catalog.build(endpoint(), page_size=2)
    assert keys(catalog, MODERN, ListKind.TOOLS) == ["zeta", "Alpha", "mid", "beta"]
    assert keys(catalog, MODERN, ListKind.PROMPTS) == ["review", "Audit", "compare"]
    assert keys(catalog, MODERN, ListKind.RESOURCES) == [
        "file:///z.txt",
        "file:///a.txt",
        "file:///M.txt",
    ]
    assert keys(catalog, MODERN, ListKind.RESOURCE_TEMPLATES) == [
        "inventory://items/{sku}",
        "catalog://{section}/x",
    ]


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
def test_CT_09_2025_lists_use_code_point_order(revision: Revision) -> None:
    catalog = Catalog.build(endpoint(), page_size=2)
    assert keys(catalog, revision, ListKind.TOOLS) == ["Alpha", "beta", "mid", "zeta"]
    assert keys(catalog, revision, ListKind.PROMPTS) == ["Audit", "compare", "review"]
    assert keys(catalog, revision, ListKind.RESOURCES) == [
        "file:///M.txt",
        "file:///a.txt",
        "file:///z.txt",
    ]
    assert keys(catalog, revision, ListKind.RESOURCE_TEMPLATES) == [
        "catalog://{section}/x",
        "inventory://items/{sku}",
    ]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("kind", list(ListKind))
def test_LG_11_icons_per_revision_and_exact_members(revision: Revision, kind: ListKind) -> None:
    catalog = Catalog.build(endpoint())
    (page,) = pages(catalog, revision, kind)
    entries = page[kind.member]
    assert entries
    with_icons = ["icons" in entry for entry in entries]
    assert any(with_icons) if revision is not JUNE else not any(with_icons)
    if revision is MODERN:
        assert list(page) == [kind.member, "resultType", "ttlMs", "cacheScope", "_meta"]
        assert page["resultType"] == "complete"
        assert page["_meta"] == {SERVER_INFO_KEY: wire(IMPLEMENTATION.to_json())}
    else:
        assert list(page) == [kind.member]


def test_cache_hints_come_from_the_endpoint_and_the_build_options() -> None:
    """AN-12, AN-13: the endpoint's resource list and template list cache hints are the hints of
    those pages."""
    source = endpoint(
        resource_list_cache=CachePolicy(5_000, "public"),
        resource_template_list_cache=CachePolicy(7_000, "private"),
    )
    catalog = Catalog.build(
        source,
        tool_list_cache=CachePolicy(1_000, "public"),
        prompt_list_cache=CachePolicy(2_000, "public"),
    )
    hints = {}
    for kind in ListKind:
        (page,) = pages(catalog, MODERN, kind)
        hints[kind] = (page["ttlMs"], page["cacheScope"])
    assert hints == {
        ListKind.TOOLS: (1_000, "public"),
        ListKind.PROMPTS: (2_000, "public"),
        ListKind.RESOURCES: (5_000, "public"),
        ListKind.RESOURCE_TEMPLATES: (7_000, "private"),
    }
    default = Catalog.build(endpoint())
    (tools,) = pages(default, MODERN, ListKind.TOOLS)
    assert (tools["ttlMs"], tools["cacheScope"]) == (0, "private")


def test_pages_are_built_once_and_served_as_the_same_bytes() -> None:
    catalog = Catalog.build(endpoint())
    first = catalog.page(MODERN, ListKind.TOOLS)
    assert isinstance(first, bytes)
    assert catalog.page(MODERN, ListKind.TOOLS) is first
    assert catalog.pages(MODERN, ListKind.TOOLS) == (first,)
    assert catalog.page_size == DEFAULT_PAGE_SIZE
    assert catalog.endpoint.path == PATH


@pytest.mark.parametrize("revision", REVISIONS)
def test_pagination_follows_next_cursor_to_the_end(revision: Revision) -> None:
    catalog = Catalog.build(endpoint(), page_size=1)
    seen: list[str] = []
    page = json.loads(catalog.page(revision, ListKind.TOOLS))
    while True:
        seen.extend(tool["name"] for tool in page["tools"])
        if "nextCursor" not in page:
            break
        cursor = page["nextCursor"]
        assert isinstance(cursor, str) and len(cursor) == 22
        page = json.loads(catalog.page(revision, ListKind.TOOLS, cursor))
        assert schema_errors(revision.wire, "ListToolsResult", page) == []
    assert sorted(seen) == sorted(["zeta", "Alpha", "mid", "beta"])
    assert len(catalog.pages(revision, ListKind.TOOLS)) == 4


def test_an_exact_multiple_of_the_page_size_has_no_empty_last_page() -> None:
    catalog = Catalog.build(endpoint(), page_size=2)
    tools = pages(catalog, MODERN, ListKind.TOOLS)
    assert [len(page["tools"]) for page in tools] == [2, 2]
    assert "nextCursor" in tools[0] and "nextCursor" not in tools[1]


def test_an_endpoint_without_operations_has_one_empty_page_per_list() -> None:
    catalog = Catalog.build(Endpoint(PATH, IMPLEMENTATION, ALL))
    for revision in REVISIONS:
        for kind in ListKind:
            (page,) = pages(catalog, revision, kind)
            assert page[kind.member] == []


def test_only_served_revisions_and_static_resources_are_paged() -> None:
    def handler(ctx: object, cursor: str | None, features: object) -> ResourceListPage:
        raise NotImplementedError

    listing = ResourceListRegistration(revisions=frozenset({MODERN}), handler=handler)
    source = Endpoint(
        PATH,
        IMPLEMENTATION,
        frozenset({MODERN}),
        tools=(raw_tool("a", frozenset({MODERN})),),
        resource_list=listing,
    )
    catalog = Catalog.build(source)
    (page,) = pages(catalog, MODERN, ListKind.RESOURCES)
    assert page["resources"] == []
    with pytest.raises(LookupError):
        catalog.page(JUNE, ListKind.TOOLS)
    with pytest.raises(LookupError):
        catalog.pages(NOVEMBER, ListKind.TOOLS)
    assert repr(catalog) == "<Catalog '/inventory/mcp', 4 lists>"


def test_operations_appear_only_on_their_revisions() -> None:
    source = Endpoint(
        PATH,
        IMPLEMENTATION,
        ALL,
        tools=(raw_tool("modern", frozenset({MODERN})), raw_tool("everywhere")),
    )
    catalog = Catalog.build(source)
    assert keys(catalog, MODERN, ListKind.TOOLS) == ["modern", "everywhere"]
    assert keys(catalog, JUNE, ListKind.TOOLS) == ["everywhere"]


# --- cursors -----------------------------------------------------------------------------------


def _cursors(catalog: Catalog, revision: Revision, kind: ListKind) -> list[str]:
    return [page["nextCursor"] for page in pages(catalog, revision, kind)[:-1]]


def _forge(cursor: str, *, index: int | None = None, flip_tag: bool = False) -> str:
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=="))
    if index is not None:
        raw[12:] = index.to_bytes(4, "big")
    if flip_tag:
        raw[0] ^= 1
    return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode("ascii")


def test_cursors_from_an_equal_catalog_are_accepted_stateless_workers() -> None:
    one = Catalog.build(endpoint(), page_size=1)
    two = Catalog.build(endpoint(), page_size=1)
    for cursor in _cursors(one, MODERN, ListKind.PROMPTS):
        assert two.page(MODERN, ListKind.PROMPTS, cursor) == one.page(
            MODERN, ListKind.PROMPTS, cursor
        )


def test_invalid_cursors_are_invalid_params() -> None:
    catalog = Catalog.build(endpoint(), page_size=1)
    good = _cursors(catalog, MODERN, ListKind.TOOLS)
    assert len(good) == 3
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = good[0][-1]
    non_canonical = good[0][:-1] + alphabet[alphabet.index(last) ^ 1]
    other_list = _cursors(catalog, MODERN, ListKind.PROMPTS)[0]
    other_revision = _cursors(catalog, NOVEMBER, ListKind.TOOLS)[0]
    changed = Catalog.build(endpoint(tools=(raw_tool("x"), raw_tool("y"))), page_size=1)
    other_catalog = _cursors(changed, MODERN, ListKind.TOOLS)[0]
    bad: list[object] = [
        None,
        1,
        b"cursor",
        "",
        good[0] + "A",
        good[0][:-1],
        good[0][:-1] + "=",
        good[0][:-1] + "+",
        " " + good[0][1:],
        non_canonical,
        _forge(good[0], index=0),
        _forge(good[0], index=4),
        _forge(good[0], index=2**32 - 1),
        _forge(good[0], flip_tag=True),
        other_list,
        other_revision,
        other_catalog,
    ]
    for cursor in bad:
        with pytest.raises(InvalidParams) as caught:
            catalog.page(MODERN, ListKind.TOOLS, cursor)
        assert str(caught.value) == "Invalid params"
    assert catalog.page(MODERN, ListKind.TOOLS, UNSET) == catalog.pages(MODERN, ListKind.TOOLS)[0]
    assert catalog.page(MODERN, ListKind.TOOLS, good[2]) == catalog.pages(MODERN, ListKind.TOOLS)[3]


# --- build options -----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, -1, True, 1.0, "2", None])
def test_page_size_must_be_a_positive_int(size: object) -> None:
    with pytest.raises(ConfigurationError, match="page_size"):
        Catalog.build(endpoint(), page_size=_any(size))


def test_build_option_types() -> None:
    with pytest.raises(TypeError, match="Endpoint"):
        Catalog.build(_any("/mcp"))
    with pytest.raises(ConfigurationError, match="CachePolicy"):
        Catalog.build(endpoint(), tool_list_cache=_any({"ttlMs": 0}))
    with pytest.raises(ConfigurationError, match="CachePolicy"):
        Catalog.build(endpoint(), prompt_list_cache=_any(None))


def test_a_page_over_the_output_limit_fails_at_build_time() -> None:
    limits = Limits(max_response_bytes=200)
    with pytest.raises(ConfigurationError, match="lower page_size") as caught:
        Catalog.build(endpoint(), limits=limits)
    assert "/inventory/mcp" in str(caught.value)
    small = Catalog.build(Endpoint(PATH, IMPLEMENTATION, frozenset({JUNE})), limits=limits)
    assert small.pages(JUNE, ListKind.TOOLS) == (b'{"tools":[]}',)


def test_a_catalog_is_immutable_and_only_built() -> None:
    with pytest.raises(TypeError, match=r"Catalog\.build"):
        Catalog()
    catalog = Catalog.build(endpoint())
    with pytest.raises(AttributeError):
        catalog.page_size = 3

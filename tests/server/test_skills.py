"""The Skills extension over HTTP: ``skills/list`` pages of at most 32 with opaque cursors,
``skills/get`` manifests, skill files through ``resources/read`` (text or base64 by suffix),
the access policy on every list entry, get and read (denied and unknown alike), and the
2025 views, which have no skills at all."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

import mcpkit
from mcpkit import Limits, Server, SkillAccess, SkillBundle, SkillRegistration
from mcpkit.model import SKILLS_EXTENSION
from mcpkit.server._operations import METHODS
from mcpkit.server._skills import PAGE_SIZE, _cursor
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request

NOVEMBER = "2025-11-25"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def skill(name: str, extra: dict[str, bytes] | None = None) -> SkillRegistration:
    root = f"---\nname: {name}\ndescription: The {name} skill\n---\n# {name}\n".encode()
    return SkillRegistration(SkillBundle.from_files({"SKILL.md": root, **(extra or {})}))


PDF = skill("pdf", {"refs/FORMS.md": b"forms\r\n", "logo.png": PNG, "raw": b"\x00\x01"})
MANY = [PDF, *(skill(f"s{index:02d}") for index in range(PAGE_SIZE + 1))]
DENIED: set[str] = set()


def policy(access: SkillAccess) -> bool:
    if "boom" in DENIED and access.skill is not PDF:
        raise RuntimeError("policy failure")
    if "one" in DENIED and access.skill is not PDF:
        return 1  # type: ignore[return-value]  # only True grants
    return access.skill.uri not in DENIED


def app(*skills: SkillRegistration, **options: Any) -> mcpkit.EndpointBuilder:
    builder = mcpkit.EndpointBuilder(
        "skills", version="1", skills=list(skills), revisions=None, **options
    )

    @builder.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @builder.resource("test://doc", name="doc")
    def doc() -> str:
        return "doc"

    return builder


@pytest.fixture
def client() -> Iterator[TestClient]:
    DENIED.clear()
    with TestClient(Server(app(*MANY, skill_access=policy))) as test_client:
        yield test_client
    DENIED.clear()


def post(client: TestClient, method: str, params: dict[str, object] | None = None) -> Any:
    uri = (params or {}).get("uri") if method == "resources/read" else None
    headers = stateless_headers(method, uri if isinstance(uri, str) else None)
    response = client.post("/mcp", stateless_request(method, params), headers=headers)
    return response.json


def legacy(client: TestClient, method: str, params: dict[str, object] | None = None) -> Any:
    body = handshake_request(method, params)
    return client.post("/mcp", body, headers={"MCP-Protocol-Version": NOVEMBER}).json


def test_the_methods_are_rows_of_the_table() -> None:
    rows = {method.name: method for method in METHODS if method.skills}
    assert set(rows) == {"skills/list", "skills/get", "resources/directory/read"}
    assert all(not revision.has_handshake for row in rows.values() for revision in row.revisions)


def test_list_pages_hold_at_most_32_and_the_cursor_continues(client: TestClient) -> None:
    first = post(client, "skills/list")["result"]
    assert [entry["uri"] for entry in first["skills"]] == [s.uri for s in MANY[:PAGE_SIZE]]
    assert first["skills"][0] == PDF.manifest
    assert (first["ttlMs"], first["cacheScope"], first["resultType"]) == (0, "private", "complete")
    second = post(client, "skills/list", {"cursor": first["nextCursor"]})["result"]
    assert [entry["uri"] for entry in second["skills"]] == [s.uri for s in MANY[PAGE_SIZE:]]
    assert "nextCursor" not in second


def test_cursors_this_list_did_not_issue_are_invalid_params(client: TestClient) -> None:
    issued = post(client, "skills/list")["result"]["nextCursor"]
    skills = tuple(MANY)
    other = _cursor((PDF,), 1)
    flipped = issued[:-1] + ("B" if issued[-1] == "A" else "A")
    for cursor in ("", "x", "!" * 27, other, _cursor(skills, 0), _cursor(skills, 99), flipped, 5):
        assert post(client, "skills/list", {"cursor": cursor})["error"]["code"] == -32602


def test_get_returns_the_manifest(client: TestClient) -> None:
    result = post(client, "skills/get", {"uri": PDF.uri})["result"]
    assert result["skill"] == PDF.manifest and "nextCursor" not in result
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    entries = {entry["uri"]: entry for entry in result["skill"]["resources"]}
    assert entries["skill://pdf/refs/FORMS.md"]["size"] == 7


def test_unknown_and_denied_are_the_same_refusal(client: TestClient) -> None:
    unknown = post(client, "skills/get", {"uri": "skill://nothing/SKILL.md"})
    DENIED.add(PDF.uri)
    denied = post(client, "skills/get", {"uri": PDF.uri})
    assert unknown["error"] == denied["error"] and denied["error"]["code"] == -32602
    listed = post(client, "skills/list")["result"]["skills"]
    assert PDF.uri not in [entry["uri"] for entry in listed] and len(listed) == PAGE_SIZE
    missing = post(client, "resources/read", {"uri": "skill://pdf/refs/NOPE.md"})
    hidden = post(client, "resources/read", {"uri": "skill://pdf/refs/FORMS.md"})
    assert missing["error"]["code"] == hidden["error"]["code"] == -32602
    assert missing["error"]["message"] == hidden["error"]["message"]


def test_a_policy_that_fails_or_answers_other_than_true_denies(client: TestClient) -> None:
    for mode in ("boom", "one"):
        DENIED.clear()
        DENIED.add(mode)
        listed = post(client, "skills/list")["result"]
        assert [entry["uri"] for entry in listed["skills"]] == [PDF.uri]
        assert "nextCursor" not in listed
        uri = MANY[1].uri
        assert post(client, "skills/get", {"uri": uri})["error"]["code"] == -32602


def test_files_are_read_as_their_suffix_says(client: TestClient) -> None:
    text = post(client, "resources/read", {"uri": "skill://pdf/refs/FORMS.md"})["result"]
    assert text["contents"] == [
        {"uri": "skill://pdf/refs/FORMS.md", "mimeType": "text/markdown", "text": "forms\r\n"}
    ]
    assert (text["ttlMs"], text["cacheScope"]) == (0, "private")
    image = post(client, "resources/read", {"uri": "skill://pdf/logo.png"})["result"]
    assert image["contents"][0]["mimeType"] == "image/png"
    assert base64.b64decode(image["contents"][0]["blob"]) == PNG
    raw = post(client, "resources/read", {"uri": "skill://pdf/raw"})["result"]["contents"][0]
    assert raw["mimeType"] == "application/octet-stream"


def test_binary_files_over_the_item_ceiling_are_not_written() -> None:
    limits = Limits(max_binary_item_bytes=len(PNG) - 1)
    with TestClient(Server(app(PDF), limits=limits)) as client:
        response = post(client, "resources/read", {"uri": "skill://pdf/logo.png"})
        assert response["error"]["code"] == -32603
        assert "result" in post(client, "resources/read", {"uri": "skill://pdf/refs/FORMS.md"})


def test_skill_md_is_listed_as_a_resource_without_a_policy() -> None:
    with TestClient(Server(app(PDF))) as client:
        resources = post(client, "resources/list")["result"]["resources"]
        assert PDF.resource in resources
        discovered = post(client, "server/discover")["result"]["capabilities"]
        assert discovered["extensions"] == {SKILLS_EXTENSION: {"directoryRead": True}}
        assert "resources" in discovered


def test_under_a_policy_skill_md_is_not_in_the_static_resource_list(client: TestClient) -> None:
    assert "result" in post(client, "resources/list")
    assert all(
        entry["uri"] != PDF.uri
        for entry in post(client, "resources/list")["result"].get("resources", [])
    )


def test_2025_views_have_no_skills(client: TestClient) -> None:
    assert legacy(client, "skills/list")["error"]["code"] == -32601
    assert legacy(client, "skills/get", {"uri": PDF.uri})["error"]["code"] == -32601
    read = legacy(client, "resources/read", {"uri": "skill://pdf/refs/FORMS.md"})
    assert read["error"]["code"] == -32002
    capabilities = legacy(
        client,
        "initialize",
        {
            "protocolVersion": NOVEMBER,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    )["result"]["capabilities"]
    assert "extensions" not in capabilities


def test_directories_list_their_direct_children(client: TestClient) -> None:
    root = post(client, "resources/directory/read", {"uri": "skill://pdf"})["result"]
    assert root["resources"] == [
        {"uri": "skill://pdf/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown"},
        {"uri": "skill://pdf/logo.png", "name": "logo.png", "mimeType": "image/png"},
        {"uri": "skill://pdf/raw", "name": "raw", "mimeType": "application/octet-stream"},
        {"uri": "skill://pdf/refs", "name": "refs", "mimeType": "inode/directory"},
    ]
    assert "nextCursor" not in root and root["ttlMs"] == 0
    refs = post(client, "resources/directory/read", {"uri": "skill://pdf/refs"})["result"]
    assert [entry["uri"] for entry in refs["resources"]] == ["skill://pdf/refs/FORMS.md"]


def test_directory_reads_refuse_files_unknown_denied_and_cursors(client: TestClient) -> None:
    method = "resources/directory/read"
    cases: tuple[dict[str, object], ...] = (
        {"uri": "skill://pdf/SKILL.md"},
        {"uri": "skill://nothing"},
        {"uri": "skill://pdf", "cursor": "x"},
        {},
    )
    for params in cases:
        assert post(client, method, params)["error"]["code"] == -32602
    DENIED.add(PDF.uri)
    assert post(client, method, {"uri": "skill://pdf"})["error"]["code"] == -32602
    assert legacy(client, method, {"uri": "skill://pdf"})["error"]["code"] == -32601


def test_without_skills_the_methods_do_not_exist() -> None:
    with TestClient(Server(app())) as client:
        assert post(client, "skills/list")["error"]["code"] == -32601
        assert post(client, "skills/get", {"uri": PDF.uri})["error"]["code"] == -32601

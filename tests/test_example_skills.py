"""``examples/skills/``: the server publishes its bundle on 2026-07-28 (list, get, files) and
shows 2025 clients an endpoint without skills."""

from __future__ import annotations

import hashlib
import runpy
from pathlib import Path
from typing import Any

from mcpkit import EndpointBuilder, Revision, Server
from mcpkit.testing import TestClient, stateless_headers, stateless_request

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "skills"


def post(client: TestClient, method: str, params: dict[str, object] | None = None) -> Any:
    uri = (params or {}).get("uri") if method == "resources/read" else None
    headers = stateless_headers(method, uri if isinstance(uri, str) else None)
    return client.post("/mcp", stateless_request(method, params), headers=headers).json


def test_the_example_serves_its_bundle() -> None:
    builder = runpy.run_path(str(EXAMPLE / "server.py"))["skills"]
    assert isinstance(builder, EndpointBuilder)
    endpoint = builder.endpoint
    assert endpoint.skills_for(Revision.V2025_11_25) == ()
    with TestClient(Server(builder)) as client:
        (entry,) = post(client, "skills/list")["result"]["skills"]
        assert entry["uri"] == "skill://pdf-processing/SKILL.md"
        assert entry["frontmatter"]["name"] == "pdf-processing"
        assert post(client, "skills/get", {"uri": entry["uri"]})["result"]["skill"] == entry
        for resource in entry["resources"]:
            contents = post(client, "resources/read", {"uri": resource["uri"]})["result"]
            data = contents["contents"][0]["text"].encode()
            assert resource["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert resource["size"] == len(data)

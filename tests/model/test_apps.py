"""MCP Apps declarations (``model/_apps.py``, ``model/_app_checks.py``): the values, their
build-time validation, the 2026-07-28-only rule on every authoring path, the endpoint's link
check, the labelling of read contents and the client capability check."""

from __future__ import annotations

from typing import Any

import pytest

import mcpkit
from mcpkit import (
    APP_MIME_TYPE,
    APPS_EXTENSION,
    AppCsp,
    AppPermission,
    AppResource,
    AppTool,
    AppVisibility,
    BlobResourceContents,
    CompleteResult,
    Endpoint,
    EndpointBuilder,
    Implementation,
    ResourceOutput,
    ResourceRegistration,
    Revision,
    TextResourceContents,
    ToolRegistration,
    client_supports_apps,
)
from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonObject
from mcpkit.model._apps import app_contents, holds_app_html

MODERN = frozenset({Revision.V2026_07_28})
VIEW = "ui://app/view"


def _tool_handler(ctx: object, arguments: object, features: object) -> CompleteResult:
    return CompleteResult.from_tool_text("ok")


def _resource_handler(ctx: object, features: object) -> ResourceOutput:
    return ResourceOutput(contents=(TextResourceContents(uri=VIEW, text="<p>hi</p>"),))


def app_tool(
    app: object, revisions: frozenset[Revision] = MODERN, name: str = "show"
) -> ToolRegistration:
    return ToolRegistration.json_object(
        name=name,
        revisions=revisions,
        handler=_tool_handler,
        app=app,  # type: ignore[arg-type]
    )


def app_resource(
    app: object = AppResource(),
    *,
    uri: str = VIEW,
    revisions: frozenset[Revision] = MODERN,
    mime_type: str | None = None,
) -> ResourceRegistration:
    return ResourceRegistration.exact(
        uri=uri, name="view", revisions=revisions, handler=_resource_handler,
        mime_type=mime_type, app=app,  # type: ignore[arg-type]
    )  # fmt: skip


# --- values ------------------------------------------------------------------------------------


def test_an_app_tool_writes_the_extension_keys() -> None:
    assert AppTool(VIEW).to_json() == {"resourceUri": VIEW, "visibility": ["model", "app"]}
    only_app = AppTool(visibility=(AppVisibility.APP,))
    assert only_app.to_json() == {"visibility": ["app"]}
    assert only_app.resource_uri is None
    listed = AppTool(VIEW, [AppVisibility.APP, AppVisibility.MODEL])  # type: ignore[arg-type]
    assert listed.visibility == (AppVisibility.APP, AppVisibility.MODEL)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"resource_uri": 3}, "AppTool.resource_uri: must be a str"),
        ({"resource_uri": "https://x.example/app"}, "AppTool.resource_uri: must be a ui:// URI"),
        ({"resource_uri": "ui://"}, "AppTool.resource_uri: must be a ui:// URI"),
        ({"resource_uri": "ui://caf\u00e9"}, "AppTool.resource_uri: must be ASCII"),
        ({"resource_uri": "ui://a/{x}"}, "AppTool.resource_uri: must be ASCII without"),
        ({"resource_uri": "ui://a b"}, "AppTool.resource_uri: "),
        ({"resource_uri": None}, "AppTool.resource_uri: is required unless"),
        ({"resource_uri": VIEW, "visibility": ()}, "AppTool.visibility: must name at least"),
        ({"resource_uri": VIEW, "visibility": "app"}, "AppTool.visibility: must be a list"),
        ({"resource_uri": VIEW, "visibility": ("app",)}, "AppTool.visibility: every item"),
        (
            {"resource_uri": VIEW, "visibility": (AppVisibility.APP, AppVisibility.APP)},
            "AppTool.visibility: must not repeat",
        ),
    ],
)
def test_an_app_tool_refuses_what_the_extension_does_not_define(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        AppTool(**kwargs)
    assert str(caught.value).startswith(message)
    assert "example" not in str(caught.value)  # the value is never echoed


def test_a_csp_keeps_origins_and_writes_only_the_lists_given() -> None:
    csp = AppCsp(
        connect_domains=["https://api.example.com", "wss://live.example.com:8443"],  # type: ignore[arg-type]
        resource_domains=("https://*.cdn.example.com", "http://localhost:3000"),
        frame_domains=("https://[2001:db8::1]:8080",),
        base_uri_domains=("http://127.0.0.1",),
    )
    assert csp.connect_domains == ("https://api.example.com", "wss://live.example.com:8443")
    assert csp.to_json() == {
        "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
        "resourceDomains": ["https://*.cdn.example.com", "http://localhost:3000"],
        "frameDomains": ["https://[2001:db8::1]:8080"],
        "baseUriDomains": ["http://127.0.0.1"],
    }
    assert AppCsp().to_json() == {}


@pytest.mark.parametrize(
    "origin",
    [
        "https://example.com/",  # a path, even an empty one
        "https://example.com/api",
        "https://example.com?q=1",
        "https://example.com#x",
        "https://user@example.com",
        "ftp://example.com",
        "HTTPS://example.com",
        "example.com",
        "https://*.com",  # a wildcard over a public suffix alone
        "https://*",
        "https://a.*.example.com",
        "https://*example.com",
        "https://exa mple.com",
        "https://example.com; script-src *",  # a directive smuggled into the header
        "'self'",
        "https://example.com:0",
        "https://example.com:65536",
        "https://example.com:",
        "https://-bad.example.com",
        "https://[not-ipv6]",
        "https://[1:2:3]",  # bracketed, but no IPv6 address
        "https://" + "a" * 64 + ".example.com",  # a label over 63 characters
        "https://" + ".".join(["abcdefgh"] * 29) + ".com",  # a host over 253 characters
        "https://ex\u00e4mple.com",
        "",
    ],
)
def test_a_csp_entry_must_be_an_origin(origin: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        AppCsp(connect_domains=(origin,))
    where, _, rule = str(caught.value).partition(": ")
    assert where == "AppCsp.connect_domains[0]"
    # one of two fixed rules: the entry is never echoed
    assert rule.startswith(("must be an origin, scheme://host[:port]", "the port must be 1"))


def test_a_port_out_of_range_says_so() -> None:
    with pytest.raises(ConfigurationError, match=r"\[1\]: the port must be 1 to 65535"):
        AppCsp(frame_domains=("https://a.example", "https://b.example:70000"))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("https://example.com", "must be a list or tuple of origins"),
        ((3,), r"\[0\]: must be a str"),
        (("https://a.example",) * 2, "must not repeat an origin"),
        (tuple(f"https://h{i}.example" for i in range(65)), "at most 64 origins"),
    ],
)
def test_a_csp_list_is_a_bounded_list_of_distinct_origins(value: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        AppCsp(base_uri_domains=value)  # type: ignore[arg-type]


def test_a_resource_declaration_writes_the_extension_keys() -> None:
    full = AppResource(
        csp=AppCsp(connect_domains=("https://api.example.com",)),
        permissions=(AppPermission.CAMERA, AppPermission.CLIPBOARD_WRITE),
        domain="a904794854a047f6.claudemcpcontent.com",
        prefers_border=False,
    )
    assert full.to_json() == {
        "csp": {"connectDomains": ["https://api.example.com"]},
        "permissions": {"camera": {}, "clipboardWrite": {}},
        "domain": "a904794854a047f6.claudemcpcontent.com",
        "prefersBorder": False,
    }
    assert AppResource().to_json() == {}
    assert AppResource(domain="https://widgets.example.com").domain == (
        "https://widgets.example.com"
    )
    assert {p.value for p in AppPermission} == {
        "camera", "microphone", "geolocation", "clipboardWrite",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"csp": {"connectDomains": []}}, "AppResource.csp: must be an AppCsp or None"),
        ({"permissions": ("camera",)}, "AppResource.permissions: every item"),
        ({"permissions": {AppPermission.CAMERA}}, "AppResource.permissions: must be a list"),
        (
            {"permissions": (AppPermission.CAMERA, AppPermission.CAMERA)},
            "AppResource.permissions: must not repeat",
        ),
        ({"domain": 7}, "AppResource.domain: must be a str or None"),
        ({"domain": "*.example.com"}, "AppResource.domain: must be a host name"),
        ({"domain": "http://example.com"}, "AppResource.domain: must be a host name"),
        ({"domain": "example.com/x"}, "AppResource.domain: must be a host name"),
        ({"domain": "\u00e9.example"}, "AppResource.domain: must be a host name"),
        ({"prefers_border": 1}, "AppResource.prefers_border: must be a bool or None"),
    ],
)
def test_a_resource_declaration_refuses_unknown_forms(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        AppResource(**kwargs)
    assert str(caught.value).startswith(message)


# --- registrations -----------------------------------------------------------------------------


def test_every_tool_shape_takes_an_app_on_2026_only() -> None:
    app = AppTool(VIEW)
    assert app_tool(app).app is app
    assert app_tool(None).app is None
    with pytest.raises(ConfigurationError) as caught:
        app_tool(app, frozenset(Revision))
    assert str(caught.value).startswith("tool 'show' (revisions 2025-06-18, 2025-11-25, ")
    assert "MCP Apps exist only on 2026-07-28" in str(caught.value)
    with pytest.raises(ConfigurationError, match="app must be an AppTool or None"):
        app_tool({"resourceUri": VIEW})


def test_an_app_resource_is_an_exact_ui_resource_of_the_app_type_on_2026_only() -> None:
    registration = app_resource()
    assert registration.mime_type == APP_MIME_TYPE
    assert registration.definition()["mimeType"] == APP_MIME_TYPE
    assert app_resource(mime_type=APP_MIME_TYPE).mime_type == APP_MIME_TYPE
    assert app_resource(None, uri="file:///x", mime_type="text/plain").app is None
    with pytest.raises(ConfigurationError, match="MCP Apps exist only on 2026-07-28"):
        app_resource(revisions=frozenset({Revision.V2025_11_25, Revision.V2026_07_28}))
    with pytest.raises(ConfigurationError, match="must have a ui:// URI"):
        app_resource(uri="https://example.com/view")
    with pytest.raises(ConfigurationError, match="leave it out"):
        app_resource(mime_type="text/html")
    with pytest.raises(ConfigurationError, match="app must be an AppResource or None"):
        app_resource(AppTool(VIEW))
    template = ResourceRegistration.template(
        uri_template="ui://app/{page}", name="pages", revisions=MODERN,
        handler=lambda ctx, variables, features: None,  # type: ignore[arg-type,return-value]
    )  # fmt: skip
    assert template.app is None


def _endpoint(tools: list[ToolRegistration], resources: list[ResourceRegistration]) -> Endpoint:
    return Endpoint("/mcp", Implementation("apps", "1"), MODERN, tools=tools, resources=resources)


def test_an_endpoint_refuses_an_app_tool_whose_resource_it_lacks() -> None:
    assert _endpoint([app_tool(AppTool(VIEW))], [app_resource()]).tools[0].app is not None
    only_app = app_tool(AppTool(visibility=(AppVisibility.APP,)))
    assert _endpoint([only_app], []).tools == (only_app,)
    plain = ResourceRegistration.exact(
        uri=VIEW, name="view", revisions=MODERN, handler=_resource_handler
    )
    for resources in ([], [plain], [app_resource(uri="ui://app/other")]):
        with pytest.raises(ConfigurationError) as caught:
            _endpoint([app_tool(AppTool(VIEW))], resources)
        assert str(caught.value).startswith("endpoint '/mcp' (revisions 2026-07-28): tool 'show'")
        assert "declared with app=AppResource(...)" in str(caught.value)


def test_decorated_apps_inherit_2026_alone_and_refuse_an_explicit_2025() -> None:
    builder = EndpointBuilder("apps", version="1")

    @builder.tool(app=AppTool(VIEW))
    def show() -> str:
        return "shown"

    @builder.resource(VIEW, name="view", app=AppResource(prefers_border=True))
    def view() -> str:
        return "<p>view</p>"

    @builder.tool
    def plain() -> str:
        return "plain"

    endpoint = builder.endpoint
    assert endpoint.revisions == frozenset(Revision)  # the plain tool serves every revision
    by_name = {tool.name: tool for tool in endpoint.tools}
    assert by_name["show"].revisions == MODERN
    assert by_name["plain"].revisions == frozenset(Revision)
    assert endpoint.resources[0].revisions == MODERN
    assert endpoint.resources[0].app == AppResource(prefers_border=True)

    explicit = EndpointBuilder("apps", version="1", revisions={Revision.V2025_11_25,
                                                               Revision.V2026_07_28})  # fmt: skip

    @explicit.tool(app=AppTool(visibility=(AppVisibility.APP,)))
    def hidden() -> str:
        return "hidden"

    with pytest.raises(ConfigurationError, match=r"hidden.*MCP Apps exist only on 2026-07-28"):
        _ = explicit.endpoint


def test_a_template_cannot_be_an_app() -> None:
    builder = EndpointBuilder("apps", version="1")

    @builder.resource("ui://app/{page}", name="pages", app=AppResource())
    def pages(page: str) -> str:
        return page

    with pytest.raises(ConfigurationError, match="one exact ui:// resource, not a template"):
        _ = builder.endpoint


def test_the_class_decorators_take_apps() -> None:
    @mcpkit.endpoint(path="/mcp", name="apps", version="1", revisions={Revision.V2026_07_28})
    class Apps:
        @mcpkit.tool(app=AppTool(VIEW))
        def show(self) -> str:
            return "shown"

        @mcpkit.resource(VIEW, name="view", app=AppResource())
        def view(self) -> str:
            return "<p>view</p>"

    endpoint: Endpoint = Apps.__mcp_endpoint__  # type: ignore[attr-defined]
    assert endpoint.tools[0].app == AppTool(VIEW)
    assert endpoint.resources[0].app == AppResource()


# --- reading -----------------------------------------------------------------------------------


def test_read_contents_at_the_app_uri_get_the_type_and_declaration() -> None:
    app = AppResource(prefers_border=True)
    other = TextResourceContents(uri="ui://app/other", text="x", mime_type="text/plain")
    result = CompleteResult.with_resource_output(
        ResourceOutput(
            contents=(
                TextResourceContents(uri=VIEW, text="<p>a</p>", meta={"keep": 1}),
                BlobResourceContents(uri=VIEW, blob=b"<p>b</p>", mime_type=APP_MIME_TYPE),
                other,
            )
        )
    ).replace(meta={"result": True})
    labelled = app_contents(result, VIEW, app)
    assert labelled.meta == {"result": True}
    payload = labelled.payload
    assert isinstance(payload, ResourceOutput)
    text, blob, kept = payload.contents
    assert kept is other
    assert text.to_json() == {
        "uri": VIEW, "mimeType": APP_MIME_TYPE, "text": "<p>a</p>",
        "_meta": {"keep": 1, "ui": {"prefersBorder": True}},
    }  # fmt: skip
    assert isinstance(blob, BlobResourceContents) and blob.blob == b"<p>b</p>"
    assert blob.meta == {"ui": {"prefersBorder": True}}


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (TextResourceContents(uri=VIEW, text="x", mime_type="text/html"), "must be text/html;"),
        (TextResourceContents(uri=VIEW, text="x", meta={"ui": {}}), "their own _meta.ui"),
    ],
)
def test_contents_labelled_otherwise_by_the_handler_are_refused(
    item: TextResourceContents, message: str
) -> None:
    result = CompleteResult.with_resource_output(ResourceOutput(contents=(item,)))
    with pytest.raises(InvalidValueError, match=message):
        app_contents(result, VIEW, AppResource())


def test_app_html_is_found_inline_or_embedded() -> None:
    html = TextResourceContents(uri=VIEW, text="x", mime_type=APP_MIME_TYPE)
    blob = BlobResourceContents(uri=VIEW, blob=b"x", mime_type=APP_MIME_TYPE)
    plain = TextResourceContents(uri=VIEW, text="x", mime_type="text/html")
    assert holds_app_html([html]) and holds_app_html([plain, blob])
    assert holds_app_html([mcpkit.TextContent(text="x"), mcpkit.EmbeddedResource(resource=html)])
    assert not holds_app_html([plain, mcpkit.EmbeddedResource(resource=plain)])
    assert not holds_app_html([mcpkit.TextContent(text="text/html;profile=mcp-app")])
    assert not holds_app_html([])


# --- client capability -------------------------------------------------------------------------


def _declaring(settings: object) -> JsonObject:
    return JsonObject({"extensions": {APPS_EXTENSION: settings}})


@pytest.mark.parametrize(
    "types",
    [
        ["text/html;profile=mcp-app"],
        ["text/plain", "TEXT/HTML; Profile=mcp-app"],
    ],
)
def test_a_client_declaring_the_app_type_supports_apps(types: list[str]) -> None:
    assert client_supports_apps(_declaring({"mimeTypes": types}))


@pytest.mark.parametrize(
    "capabilities",
    [
        {},
        {"extensions": []},
        {"extensions": {}},
        _declaring([]),
        _declaring({}),
        _declaring({"mimeTypes": "text/html;profile=mcp-app"}),
        _declaring({"mimeTypes": ["text/html"]}),
        _declaring({"mimeTypes": ["text/html;profile=mcp-app;charset=utf-8"]}),
        _declaring({"mimeTypes": ["text/html;profile=other"]}),
        _declaring({"mimeTypes": ["text/plain;profile=mcp-app"]}),
        _declaring({"mimeTypes": ["image/html;profile=mcp-app"]}),
        _declaring({"mimeTypes": ["text/html;profile=mcp-app", "not a type"]}),
        _declaring({"mimeTypes": ["text/html;profile=mcp-app", 3]}),
    ],
)
def test_a_malformed_or_partial_declaration_is_no_declaration(
    capabilities: dict[str, object],
) -> None:
    assert not client_supports_apps(capabilities)

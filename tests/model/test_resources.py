"""Resources (RV-03, PE-07, CT-03..05, CT-10..12, CB-16):
descriptors, exact and template registrations, custom list pages and the custom list handler,
and their wire forms checked against the official schemas.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Mapping
from decimal import Decimal
from typing import Any

import pytest

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonObject, encode
from mcpkit.model import (
    Annotations,
    CompleteResult,
    Icon,
    InvocationFeatures,
    RequestContext,
    ResourceDescriptor,
    ResourceKind,
    ResourceListPage,
    ResourceListRegistration,
    ResourceOutput,
    ResourceRegistration,
    Revision,
    Role,
    TextResourceContents,
    UriTemplate,
)
from mcpkit.model._resources import (
    MAX_RESOURCE_URI_CHARS,
    ResourceHandler,
    ResourceListHandler,
    TemplateHandler,
)

from ..spec_schemas import SCHEMAS, schema_errors

SECRET = "SECRET-7f3a"
MODERN = frozenset({Revision.V2026_07_28})
SURROGATES = ["\ud800", "\udfff", "a\udc00b"]
ICON = Icon(src="https://example.com/rust-file-icon.png", mime_type="image/png", sizes=("48x48",))
ANNOTATED = Annotations(audience=(Role.USER,), priority=0.8, last_modified="2025-01-12T15:00:58Z")
README = TextResourceContents(uri="file:///readme", text="# hi")


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def wire(value: Any) -> Any:
    return json.loads(encode(value if isinstance(value, JsonObject) else value.to_json()))


def read(ctx: RequestContext, features: InvocationFeatures) -> ResourceOutput:
    return ResourceOutput(contents=(README,))


async def read_async(ctx: RequestContext, features: InvocationFeatures) -> CompleteResult:
    return CompleteResult.with_resource_output(ResourceOutput(contents=(README,)))


def read_item(
    ctx: RequestContext, variables: Mapping[str, str], features: InvocationFeatures
) -> ResourceOutput:
    return ResourceOutput(contents=(TextResourceContents(uri="x:y", text=variables["sku"]),))


def list_page(
    ctx: RequestContext, cursor: str | None, features: InvocationFeatures
) -> ResourceListPage:
    return ResourceListPage((ResourceDescriptor("file:///a", "a"),))


def _exact(**overrides: Any) -> ResourceRegistration:
    options: dict[str, Any] = {
        "uri": "file:///project/README.md",
        "name": "README.md",
        "revisions": MODERN,
        "handler": read,
    }
    return ResourceRegistration.exact(**(options | overrides))


def _template(**overrides: Any) -> ResourceRegistration:
    options: dict[str, Any] = {
        "uri_template": "inventory://items/{sku}",
        "name": "item",
        "revisions": MODERN,
        "handler": read_item,
    }
    return ResourceRegistration.template(**(options | overrides))


def configuration_error(build: Any) -> str:
    with pytest.raises(ConfigurationError) as caught:
        build()
    return str(caught.value)


def invalid_value(build: Any) -> str:
    with pytest.raises(InvalidValueError) as caught:
        build()
    return str(caught.value)


# --- ResourceDescriptor ---------------------------------------------------------------------------


def test_a_descriptor_holds_what_it_was_given() -> None:
    descriptor = ResourceDescriptor(
        "file:///a.bin",
        "a",
        title="A",
        description="The A",
        mime_type="application/octet-stream",
        size=0,
        icons=_any([ICON]),
        annotations=ANNOTATED,
    )
    assert (descriptor.uri, descriptor.name, descriptor.title) == ("file:///a.bin", "a", "A")
    assert (descriptor.description, descriptor.mime_type) == ("The A", "application/octet-stream")
    assert (descriptor.size, descriptor.icons, descriptor.annotations) == (0, (ICON,), ANNOTATED)


def test_descriptor_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        ResourceDescriptor("file:///a", "a", "A")  # type: ignore[call-arg]


def test_a_descriptor_keeps_its_uri_unnormalised() -> None:
    assert (
        ResourceDescriptor("HTTP://Example.COM/a/../b%7e", "b").uri
        == "HTTP://Example.COM/a/../b%7e"
    )


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: ResourceDescriptor("relative/a", "a"),
            "ResourceDescriptor.uri: must be an absolute",
        ),
        (lambda: ResourceDescriptor("file:///a b", "a"), "ResourceDescriptor.uri: a URI cannot"),
        (lambda: ResourceDescriptor(_any(None), "a"), "ResourceDescriptor.uri: a JSON string"),
        (lambda: ResourceDescriptor("a:b", ""), "ResourceDescriptor.name: must not be empty"),
        (lambda: ResourceDescriptor("a:b", _any(1)), "ResourceDescriptor.name: a JSON string"),
        (
            lambda: ResourceDescriptor("a:b", "a", mime_type="text"),
            "ResourceDescriptor.mime_type: ",
        ),
        (lambda: ResourceDescriptor("a:b", "a", size=-1), "ResourceDescriptor.size: must be a"),
        (lambda: ResourceDescriptor("a:b", "a", size=_any(True)), "ResourceDescriptor.size: must"),
        (lambda: ResourceDescriptor("a:b", "a", size=_any(1.0)), "ResourceDescriptor.size: must"),
        (
            lambda: ResourceDescriptor("a:b", "a", icons=_any([ICON.src])),
            "ResourceDescriptor.icons: every icon must be an Icon",
        ),
        (
            lambda: ResourceDescriptor("a:b", "a", annotations=_any({})),
            "ResourceDescriptor.annotations: must be an Annotations",
        ),
    ],
)
def test_bad_descriptors_are_invalid_values(build: Any, message: str) -> None:
    assert invalid_value(build).startswith(message)


@pytest.mark.parametrize("field", ["name", "title", "description"])
@pytest.mark.parametrize("text", SURROGATES)
def test_cb16_descriptor_text_refuses_unpaired_surrogates(field: str, text: str) -> None:
    options: dict[str, Any] = {"uri": "a:b", "name": "n", field: SECRET + text}
    message = invalid_value(lambda: ResourceDescriptor(**options))
    assert message == f"ResourceDescriptor.{field}: text contains an unpaired surrogate"


@pytest.mark.parametrize("text", ["\x00", "\U0001f4c1 Files", "e\u0301", " "])
def test_descriptor_text_is_kept_exactly(text: str) -> None:
    descriptor = ResourceDescriptor("a:b", text, title=text, description=text)
    assert (descriptor.name, descriptor.title, descriptor.description) == (text, text, text)


def test_a_descriptor_is_immutable_and_compared_by_value() -> None:
    descriptor = ResourceDescriptor("a:b", "n")
    with pytest.raises(dataclasses.FrozenInstanceError):
        descriptor.name = "m"  # type: ignore[misc]
    assert descriptor == ResourceDescriptor("a:b", "n")


def test_descriptor_wire_form_members_in_schema_order() -> None:
    assert wire(ResourceDescriptor("a:b", "n")) == {"uri": "a:b", "name": "n"}
    full = ResourceDescriptor(
        "a:b", "n", title="", description="d", mime_type="text/plain", size=3,
        icons=(ICON,), annotations=ANNOTATED,
    )  # fmt: skip
    assert list(wire(full)) == [
        "uri", "name", "title", "description", "mimeType", "size", "icons", "annotations",
    ]  # fmt: skip
    assert wire(full)["annotations"]["priority"] == 0.8


# --- exact registrations --------------------------------------------------------------------------


def test_an_exact_registration_holds_what_it_was_given() -> None:
    resource = _exact(title="Docs", mime_type="text/markdown", size=12, icons=[ICON])
    assert resource.kind is ResourceKind.EXACT
    assert resource.uri == "file:///project/README.md"
    assert resource.template is None
    assert (resource.name, resource.revisions) == ("README.md", MODERN)
    assert resource.handler is read and resource.is_async is False
    assert (resource.title, resource.description, resource.mime_type) == (
        "Docs", None, "text/markdown",
    )  # fmt: skip
    assert (resource.size, resource.icons, resource.annotations) == (12, (ICON,), None)
    assert resource.descriptor == ResourceDescriptor(
        "file:///project/README.md", "README.md", title="Docs", mime_type="text/markdown",
        size=12, icons=(ICON,),
    )  # fmt: skip
    assert dict(resource.completions) == {} and resource.async_completions == frozenset()


def test_an_exact_handler_takes_ctx_and_features_and_may_be_async() -> None:
    handlers: list[ResourceHandler] = [read, read_async]
    assert [_exact(handler=handler).is_async for handler in handlers] == [False, True]


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("README.md", "uri: must be an absolute URI that starts with a scheme (RFC 3986)"),
        ("file:///a b", "uri: a URI cannot contain spaces or control characters"),
        ("file:///a\ud800", "uri: text contains an unpaired surrogate"),
        ("inventory://items/{sku}", "uri contains '{' or '}', which no URI may: register a "
         "template with ResourceRegistration.template"),
        ("x:}", "uri contains '{' or '}'"),
        ("file:///caf\u00e9", "uri must be ASCII; percent-encode non-ASCII characters"),
    ],
)  # fmt: skip
def test_exact_uris_are_absolute_ascii_and_brace_free(uri: str, problem: str) -> None:
    message = configuration_error(lambda: _exact(uri=uri))
    assert message.startswith("resource ") and problem in message


def test_exact_uris_are_bounded() -> None:
    longest = "x:" + "a" * (MAX_RESOURCE_URI_CHARS - 2)
    assert _exact(uri=longest).uri == longest
    message = configuration_error(lambda: _exact(uri=longest + "a"))
    assert message.startswith("resource 'x:aaaa")
    assert message.endswith(
        f"(revisions 2026-07-28): uri is over {MAX_RESOURCE_URI_CHARS} characters"
    )
    assert len(message) < 200


def test_an_exact_uri_is_kept_as_declared() -> None:
    assert _exact(uri="FILE:///A/./b%2f").uri == "FILE:///A/./b%2f"


def test_an_exact_uri_must_be_a_str() -> None:
    assert configuration_error(lambda: _exact(uri=1)) == "a resource uri must be a str"


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"revisions": set()}, "revisions must not be empty"),
        ({"revisions": ["2026-07-28"]}, "every revision must be a Revision member"),
        ({"revisions": None}, "revisions must be a set of Revision members"),
    ],
)
def test_rv03_an_exact_resource_selects_a_non_empty_revision_set(
    options: dict[str, Any], problem: str
) -> None:
    message = configuration_error(lambda: _exact(**options))
    assert message.startswith(f"resource 'file:///project/README.md': {problem}")


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"handler": None}, "the handler must be callable"),
        (
            {"handler": read_item},
            "the handler must accept two positional arguments (ctx, features)",
        ),
        ({"name": ""}, "name: must not be empty"),
        ({"name": None}, "name: a JSON string must be a str"),
        ({"title": "\udc00"}, "title: text contains an unpaired surrogate"),
        ({"description": SECRET + "\ud800"}, "description: text contains an unpaired surrogate"),
        ({"mime_type": "text/"}, "mime_type: "),
        ({"size": -1}, "size: must be a non-negative int"),
        ({"icons": ICON}, "icons: must be a tuple or a list"),
        ({"annotations": {"priority": 1}}, "annotations: must be an Annotations"),
    ],
)
def test_exact_resource_options_are_configuration_errors(
    options: dict[str, Any], problem: str
) -> None:
    message = configuration_error(lambda: _exact(**options))
    prefix = "resource 'file:///project/README.md' (revisions 2026-07-28): "
    assert message.startswith(prefix + problem)
    assert SECRET not in message


def test_an_exact_definition_is_its_descriptor() -> None:
    resource = _exact(annotations=ANNOTATED)
    assert resource.descriptor is not None
    assert resource.definition() == resource.descriptor.to_json()
    assert resource.definition() is resource.definition()


# --- template registrations -----------------------------------------------------------------------


def test_a_template_registration_holds_what_it_was_given() -> None:
    resource = _template(description="One item", mime_type="application/json", icons=(ICON,))
    assert resource.kind is ResourceKind.TEMPLATE
    assert resource.uri is None and resource.descriptor is None
    assert resource.template == UriTemplate.parse("inventory://items/{sku}")
    assert resource.template is not None and resource.template.variables == ("sku",)
    assert (resource.name, resource.revisions, resource.handler) == ("item", MODERN, read_item)
    assert (resource.description, resource.mime_type) == ("One item", "application/json")
    assert (resource.title, resource.size, resource.icons) == (None, None, (ICON,))


def test_ct12_the_template_routes_uris_to_exact_decoded_variables() -> None:
    resource = _template(uri_template="file:///{path}")
    assert resource.template is not None
    assert resource.template.match("file:///src%2Fmain.rs") == {"path": "src/main.rs"}
    assert resource.template.match("file:///src/main.rs") is None


def test_template_names_the_factory_on_the_class_and_the_template_on_an_instance() -> None:
    factory = ResourceRegistration.template
    assert factory.__name__ == "template"
    assert factory.__qualname__ == "ResourceRegistration.template"
    assert "RFC 6570 level 1" in (factory.__doc__ or "")
    assert isinstance(_template().template, UriTemplate)


def test_a_template_handler_takes_ctx_variables_and_features() -> None:
    async def read_async_item(
        ctx: RequestContext, variables: Mapping[str, str], features: InvocationFeatures
    ) -> ResourceOutput:
        return ResourceOutput(contents=(README,))

    handlers: list[TemplateHandler] = [read_item, read_async_item]
    assert [_template(handler=handler).is_async for handler in handlers] == [False, True]
    message = configuration_error(lambda: _template(handler=read))
    assert message == (
        "resource template 'inventory://items/{sku}' (revisions 2026-07-28): the handler must "
        "accept three positional arguments (ctx, variables, features)"
    )


async def _generator(
    ctx: object, variables: object, features: object
) -> AsyncIterator[ResourceOutput]:
    yield ResourceOutput(contents=(README,))


def test_a_generator_template_handler_is_refused() -> None:
    message = configuration_error(lambda: _template(handler=_generator))
    assert message.endswith("the handler is a generator function; it must return its result")


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("inventory://items/{+sku}", "uses operator '+'"),
        ("inventory://items/{sku*}", "uses an explode modifier"),
        ("inventory://items/{sku:3}", "uses a prefix modifier"),
        ("inventory://items/sku", "has no variables; register it as an exact resource URI"),
        ("inventory://items/{a}{b}", "two variables with no literal between them"),
        ("inventory://caf\u00e9/{a}", "must be ASCII"),
    ],
)
def test_templates_are_rfc_6570_level_1(template: str, problem: str) -> None:
    message = configuration_error(lambda: _template(uri_template=template))
    assert message.startswith(f"resource template {template!r}") and problem in message


def test_a_template_must_be_a_str() -> None:
    message = configuration_error(lambda: _template(uri_template=None))
    assert message == "resource template must be a str, not NoneType"


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"revisions": frozenset()}, "revisions must not be empty"),
        ({"name": ""}, "name: must not be empty"),
        ({"title": "\ud800"}, "title: text contains an unpaired surrogate"),
        ({"mime_type": "application"}, "mime_type: "),
        ({"icons": [None]}, "icons: every icon must be an Icon"),
        ({"annotations": ANNOTATED.to_json()}, "annotations: must be an Annotations"),
    ],
)
def test_template_options_are_configuration_errors(options: dict[str, Any], problem: str) -> None:
    message = configuration_error(lambda: _template(**options))
    assert message.startswith("resource template 'inventory://items/{sku}'")
    assert problem in message


def test_a_template_has_no_size() -> None:
    with pytest.raises(TypeError):
        _template(size=3)


def test_template_definition_members_in_schema_order() -> None:
    minimal = _template()
    assert wire(minimal.definition()) == {"uriTemplate": "inventory://items/{sku}", "name": "item"}
    full = _template(
        title="T", description="D", mime_type="text/plain", icons=[ICON], annotations=ANNOTATED
    )
    assert list(wire(full.definition())) == [
        "uriTemplate", "name", "title", "description", "mimeType", "icons", "annotations",
    ]  # fmt: skip


# --- immutability, identity and repr --------------------------------------------------------------


def test_a_resource_registration_is_built_only_by_its_factories() -> None:
    with pytest.raises(TypeError, match=r"^ResourceRegistration is built by ResourceRegistration"):
        ResourceRegistration()


@pytest.mark.parametrize("build", [_exact, _template])
def test_a_resource_registration_is_immutable(build: Any) -> None:
    resource = build()
    with pytest.raises(AttributeError, match="ResourceRegistration is immutable"):
        resource.name = "other"
    with pytest.raises(AttributeError, match="ResourceRegistration is immutable"):
        del resource.uri
    with pytest.raises(AttributeError, match="ResourceRegistration is immutable"):
        resource.template = None


def test_resource_registrations_compare_by_identity() -> None:
    a, b = _exact(), _exact()
    assert a == a and a != b


def test_resource_registration_reprs() -> None:
    revisions = {Revision.V2026_07_28, Revision.V2025_11_25}
    assert repr(_exact(revisions=revisions)) == (
        "<ResourceRegistration exact file:///project/README.md [2025-11-25, 2026-07-28]>"
    )
    assert repr(_template()) == (
        "<ResourceRegistration template inventory://items/{sku} [2026-07-28]>"
    )


# --- custom list pages (CT-10) --------------------------------------------------------------------


def test_ct10_a_page_keeps_the_handlers_order() -> None:
    descriptors = [ResourceDescriptor(f"file:///{name}", name) for name in ("c", "a", "b")]
    page = ResourceListPage(_any(descriptors), "next")
    assert page.resources == tuple(descriptors)
    assert [entry["name"] for entry in wire(page)["resources"]] == ["c", "a", "b"]
    assert page.next_cursor == "next"


def test_an_empty_cursor_is_a_cursor() -> None:
    assert wire(ResourceListPage((), "")) == {"resources": [], "nextCursor": ""}
    assert wire(ResourceListPage(())) == {"resources": []}


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ResourceListPage(_any(None)), "ResourceListPage.resources: must be a tuple"),
        (
            lambda: ResourceListPage(_any([{"uri": "a:b", "name": "n"}])),
            "ResourceListPage.resources: every item must be a ResourceDescriptor",
        ),
        (lambda: ResourceListPage((), _any(1)), "ResourceListPage.next_cursor: a JSON string"),
        (
            lambda: ResourceListPage((), SECRET + "\ud800"),
            "ResourceListPage.next_cursor: text contains an unpaired surrogate",
        ),
    ],
)
def test_bad_pages_are_invalid_values(build: Any, message: str) -> None:
    refused = invalid_value(build)
    assert refused.startswith(message) and SECRET not in refused


def test_a_page_is_immutable_and_its_repr_shows_no_cursor() -> None:
    page = ResourceListPage((ResourceDescriptor("a:b", "n"),), SECRET)
    with pytest.raises(dataclasses.FrozenInstanceError):
        page.next_cursor = None  # type: ignore[misc]
    assert repr(page) == "ResourceListPage(<1 resources>, next_cursor=<11 chars>)"
    assert repr(ResourceListPage(())) == "ResourceListPage(<0 resources>, next_cursor=None)"


# --- PE-07: the custom list handler ---------------------------------------------------------------


def test_pe07_a_list_handler_has_its_own_revisions() -> None:
    handlers: list[ResourceListHandler] = [list_page]
    registration = ResourceListRegistration(revisions=[Revision.V2026_07_28], handler=handlers[0])
    assert registration.revisions == MODERN
    assert isinstance(registration.revisions, frozenset)
    assert registration.handler is list_page and registration.is_async is False
    assert repr(registration) == "<ResourceListRegistration [2026-07-28]>"


def test_pe07_an_async_list_handler_is_awaited() -> None:
    async def pages(
        ctx: RequestContext, cursor: str | None, features: InvocationFeatures
    ) -> ResourceListPage:
        return ResourceListPage(())

    assert ResourceListRegistration(revisions=MODERN, handler=pages).is_async is True


@pytest.mark.parametrize(
    ("revisions", "problem"),
    [
        (set(), "revisions must not be empty"),
        ({"2026-07-28"}, "every revision must be a Revision member"),
        ("2026-07-28", "revisions must be a set of Revision members"),
    ],
)
def test_rv03_pe07_a_list_handler_declares_a_non_empty_revision_set(
    revisions: object, problem: str
) -> None:
    message = configuration_error(
        lambda: ResourceListRegistration(revisions=_any(revisions), handler=list_page)
    )
    assert message.startswith(f"resource list handler: {problem}")


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        (None, "the handler must be callable"),
        (read, "the handler must accept three positional arguments (ctx, cursor, features)"),
    ],
)
def test_pe07_the_list_handler_shape_is_checked(handler: object, problem: str) -> None:
    message = configuration_error(
        lambda: ResourceListRegistration(revisions=MODERN, handler=_any(handler))
    )
    assert message == f"resource list handler (revisions 2026-07-28): {problem}"


def test_pe07_a_list_registration_is_keyword_only_and_immutable() -> None:
    with pytest.raises(TypeError):
        ResourceListRegistration(MODERN, list_page)  # type: ignore[call-arg]
    registration = ResourceListRegistration(revisions=MODERN, handler=list_page)
    with pytest.raises(AttributeError, match="ResourceListRegistration is immutable"):
        registration.revisions = frozenset()
    assert registration != ResourceListRegistration(revisions=MODERN, handler=list_page)


# --- wire form against the official schemas -------------------------------------------------------


def _descriptors() -> list[ResourceDescriptor]:
    return [
        ResourceDescriptor("a:b", "n"),
        ResourceDescriptor("file:///x", "\U0001f680", title="", description="", size=0),
        ResourceDescriptor(
            "https://example.com/a", "a", title="A", description="d", mime_type="text/plain",
            size=2**40, icons=(ICON, Icon(src="data:image/png;base64,AA==", theme="light")),
            annotations=Annotations(audience=(), priority=Decimal("0.25")),
        ),
    ]  # fmt: skip


def _templates() -> list[ResourceRegistration]:
    return [
        _template(),
        _template(
            uri_template="file:///{path}", name="Project Files", title="\U0001f4c1 Project Files",
            description="Files", mime_type="application/octet-stream", icons=[ICON],
            annotations=ANNOTATED,
        ),
    ]  # fmt: skip


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_wire_forms_match_the_official_schema(revision: str) -> None:
    """The full wire forms are valid for the two revisions that have icons."""
    for descriptor in _descriptors():
        assert schema_errors(revision, "Resource", wire(descriptor)) == []
        exact = _exact(uri=descriptor.uri, name=descriptor.name, icons=descriptor.icons)
        assert schema_errors(revision, "Resource", wire(exact.definition())) == []
    for template in _templates():
        assert schema_errors(revision, "ResourceTemplate", wire(template.definition())) == []


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_pages_match_the_official_list_result(revision: str) -> None:
    """2026-07-28 adds ``resultType`` and cache hints, which the protocol layer writes."""
    extra: dict[str, Any] = {}
    if revision == "2026-07-28":
        extra = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    for page in [ResourceListPage(()), ResourceListPage(tuple(_descriptors()), "")]:
        assert schema_errors(revision, "ListResourcesResult", {**wire(page), **extra}) == []


def test_wire_forms_without_icons_match_the_june_schema() -> None:
    """2025-06-18 has no icons: without them every sample is valid June data, with them it is
    not, which is why the protocol layer must project it."""
    samples = [("Resource", wire(descriptor)) for descriptor in _descriptors()]
    samples += [("ResourceTemplate", wire(template.definition())) for template in _templates()]
    for definition, instance in samples:
        icons = instance.pop("icons", None)
        assert schema_errors("2025-06-18", definition, instance) == []
        if icons:
            assert schema_errors("2025-06-18", definition, {**instance, "icons": icons}) != []


def _example(definition: str) -> Any:
    directory = SCHEMAS / "examples-2026-07-28" / definition
    if not directory.is_dir():
        pytest.fail(f"official examples not found at {directory}")
    (path,) = sorted(directory.glob("*.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def _icon(member: dict[str, Any]) -> Icon:
    return Icon(src=member["src"], mime_type=member["mimeType"], sizes=tuple(member["sizes"]))


def test_the_official_resource_examples_are_reproduced_exactly() -> None:
    example = _example("Resource")
    annotations = example["annotations"]
    built = ResourceDescriptor(
        example["uri"],
        example["name"],
        title=example["title"],
        mime_type=example["mimeType"],
        annotations=Annotations(
            audience=(Role.USER,),
            priority=annotations["priority"],
            last_modified=annotations["lastModified"],
        ),
    )
    assert wire(built) == example
    listed = _example("ListResourcesResult")
    (entry,) = listed["resources"]
    (icon,) = entry["icons"]
    page = ResourceListPage(
        (
            ResourceDescriptor(
                entry["uri"], entry["name"], title=entry["title"],
                description=entry["description"], mime_type=entry["mimeType"],
                icons=(_icon(icon),),
            ),
        ),
        listed["nextCursor"],
    )  # fmt: skip
    assert {**wire(page), "resultType": "complete", "ttlMs": 600000, "cacheScope": "private"} == (
        listed
    )


def test_the_official_template_example_is_reproduced_exactly() -> None:
    (example,) = _example("ListResourceTemplatesResult")["resourceTemplates"]
    (icon,) = example["icons"]
    template = _template(
        uri_template=example["uriTemplate"],
        name=example["name"],
        title=example["title"],
        description=example["description"],
        mime_type=example["mimeType"],
        icons=[_icon(icon)],
    )
    assert wire(template.definition()) == example

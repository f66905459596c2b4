"""The Profile 1 compiler: the closed keyword set, $ref rules, limits and x-mcp-header placement.

Every refusal is a ``SchemaError`` at registration (P1-03, P1-10), with the keyword or the JSON
Pointer in the message for the developer.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.errors import SchemaError
from mcpkit.json import JsonObject, from_python
from mcpkit.limits import Limits
from mcpkit.schema import KEYWORDS, HeaderDeclaration, ToolSchema, compile_schema

OBJ: dict[str, Any] = {"type": "object"}


def obj(**members: Any) -> dict[str, Any]:
    return {"type": "object", **members}


def refused(document: Any, *, match: str, **options: Any) -> None:
    with pytest.raises(SchemaError, match=match):
        compile_schema(document, **options)


# One valid use of each recognised keyword (P1-09).
KEYWORD_USES: dict[str, dict[str, Any]] = {
    "$schema": obj(**{"$schema": "https://json-schema.org/draft/2020-12/schema"}),
    "$defs": obj(**{"$defs": {"a": {"type": "string"}}}),
    "$anchor": obj(properties={"a": {"$anchor": "here"}}),
    "$ref": obj(properties={"a": {"$ref": "#"}}),
    "$comment": obj(**{"$comment": "for maintainers"}),
    "properties": obj(properties={"a": True}),
    "additionalProperties": obj(additionalProperties=False),
    "items": obj(properties={"a": {"items": {"type": "integer"}}}),
    "allOf": obj(allOf=[{"required": ["a"]}]),
    "anyOf": obj(anyOf=[True, False]),
    "if": obj(**{"if": {"required": ["a"]}}),
    "then": obj(**{"if": True, "then": True}),
    "else": obj(**{"if": True, "else": False}),
    "type": obj(properties={"a": {"type": ["string", "null"]}}),
    "enum": obj(properties={"a": {"enum": [1, "x", None, [1], {"k": 2}]}}),
    "const": obj(properties={"a": {"const": {"k": [1, 2]}}}),
    "required": obj(required=["a", "b"]),
    "minimum": obj(properties={"a": {"minimum": -1.5}}),
    "maximum": obj(properties={"a": {"maximum": 10}}),
    "minLength": obj(properties={"a": {"minLength": 1}}),
    "maxLength": obj(properties={"a": {"maxLength": 2.0}}),
    "pattern": obj(properties={"a": {"pattern": "^[a-z]+$"}}),
    "title": obj(title="Search"),
    "description": obj(description="Searches"),
    "default": obj(default={}),
    "examples": obj(examples=[{}]),
    "deprecated": obj(deprecated=False),
    "readOnly": obj(readOnly=False),
    "writeOnly": obj(writeOnly=True),
    "format": obj(properties={"a": {"format": "date-time"}}),
    "x-mcp-header": obj(properties={"a": {"type": "string", "x-mcp-header": "Tenant"}}),
}

EXCLUDED = [
    "$id", "$vocabulary", "$dynamicAnchor", "$dynamicRef", "$recursiveRef", "$recursiveAnchor",
    "definitions", "dependencies", "oneOf", "not", "dependentSchemas", "dependentRequired",
    "prefixItems", "contains", "minContains", "maxContains", "patternProperties",
    "propertyNames", "minItems", "maxItems", "uniqueItems",
    "minProperties", "maxProperties", "multipleOf", "exclusiveMinimum", "exclusiveMaximum",
    "unevaluatedItems", "unevaluatedProperties", "contentEncoding", "contentMediaType",
    "contentSchema", "additionalItems", "Type", "x-other", "",
]  # fmt: skip


def test_keyword_set_is_exactly_the_seed_list_P1_09() -> None:
    """The seed lists 28 keywords (the checklist's "29" miscounts the same list), and the
    string extension adds minLength, maxLength and pattern (docs/design/schema.md)."""
    assert len(KEYWORDS) == 31
    assert set(KEYWORD_USES) == KEYWORDS


@pytest.mark.parametrize("keyword", sorted(KEYWORD_USES))
def test_each_recognised_keyword_compiles_P1_09(keyword: str) -> None:
    schema = compile_schema(KEYWORD_USES[keyword])
    assert isinstance(schema, ToolSchema)


@pytest.mark.parametrize("keyword", EXCLUDED)
@pytest.mark.parametrize("where", ["root", "property", "defs", "items", "anyOf"])
def test_every_other_keyword_fails_closed_P1_10_P1_11(keyword: str, where: str) -> None:
    inner: dict[str, Any] = {keyword: 1}
    document = {
        "root": obj(**inner),
        "property": obj(properties={"a": inner}),
        "defs": obj(**{"$defs": {"a": inner}}),
        "items": obj(properties={"a": {"items": inner}}),
        "anyOf": obj(anyOf=[True, inner]),
    }[where]
    refused(document, match="is not in Profile 1")


def test_keyword_names_used_as_property_names_are_names_not_keywords() -> None:
    schema = compile_schema(obj(properties={"pattern": {"type": "string"}, "oneOf": True}))
    assert schema.is_valid(from_python({"pattern": "x", "oneOf": 1}))


def test_data_keywords_are_not_walked_as_schemas() -> None:
    compile_schema(obj(default={"oneOf": 1}, examples=[{"not": 2}], const={"pattern": 3}))


@pytest.mark.parametrize(
    "document",
    [True, False, {}, {"type": "string"}, {"type": ["object"]}, {"type": ["object", "null"]}, []],
    ids=repr,
)
def test_tool_input_root_must_be_an_object_schema_P1_02(document: Any) -> None:
    refused(document, match="object")


def test_other_roots_compile_when_not_a_tool_input() -> None:
    assert compile_schema(True, object_root=False).is_valid(5)
    assert not compile_schema(False, object_root=False).is_valid(5)
    assert compile_schema({"type": "string"}, object_root=False).is_valid("x")


@pytest.mark.parametrize(
    ("document", "match"),
    [
        (obj(**{"$schema": "http://json-schema.org/draft-07/schema#"}), r"\$schema"),
        (
            obj(properties={"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}),
            "only allowed at the root",
        ),
        (obj(type="object", properties=[]), "properties"),
        (obj(properties={"a": 5}), "object or a boolean"),
        (obj(required="a"), "required"),
        (obj(required=["a", "a"]), "repeats"),
        (obj(required=[1]), "required"),
        (obj(properties={"a": {"type": "float"}}), "type"),
        (obj(properties={"a": {"type": []}}), "type"),
        (obj(properties={"a": {"type": ["string", "string"]}}), "repeats"),
        (obj(properties={"a": {"type": 5}}), "type"),
        (obj(properties={"a": {"enum": 5}}), "enum"),
        (obj(properties={"a": {"minimum": "1"}}), "minimum"),
        (obj(properties={"a": {"maximum": True}}), "maximum"),
        (obj(allOf=[]), "allOf"),
        (obj(anyOf={}), "anyOf"),
        (obj(title=5), "title"),
        (obj(description=None), "description"),
        (obj(properties={"a": {"format": 1}}), "format"),
        (obj(**{"$comment": []}), "comment"),
        (obj(deprecated="yes"), "deprecated"),
        (obj(readOnly=1), "readOnly"),
        (obj(examples={}), "examples"),
        (obj(**{"$defs": []}), "defs"),
        (obj(properties={"a": {"$anchor": "1bad"}}), "anchor"),
        (obj(properties={"a": {"$anchor": "x"}, "b": {"$anchor": "x"}}), "twice"),
        (obj(properties={"a": {"$ref": 5}}), "ref"),
    ],
)
def test_keyword_values_are_type_checked_P1_10(document: Any, match: str) -> None:
    refused(document, match=match)


@pytest.mark.parametrize(
    "ref",
    [
        "#",
        "#/$defs/a",
        "#/$defs/a%20b",
        "#/properties/x~1y",
        "#/properties/t~0",
        "#anchored",
        "#/$defs/a/properties/inner",
        "#/anyOf/1",
    ],
)
def test_same_document_references_resolve_P1_12(ref: str) -> None:
    document = obj(
        properties={
            "x/y": {"type": "string"},
            "t~": True,
            "use": {"type": "array", "items": {"$ref": ref}},
        },
        anyOf=[True, {"$anchor": "anchored"}],
        **{"$defs": {"a": {"properties": {"inner": True}}, "a b": True}},
    )
    compile_schema(document)


@pytest.mark.parametrize(
    ("ref", "match"),
    [
        ("other.json#/a", "leaves the document"),
        ("https://example.com/schema", "leaves the document"),
        ("/$defs/a", "leaves the document"),
        ("#/$defs/missing", "does not point to a schema"),
        ("#/properties", "does not point to a schema"),
        ("#/required/0", "does not point to a schema"),
        ("#/$defs/a/enum/0", "does not point to a schema"),
        ("#/$defs/a~2", "escape"),
        ("#/$defs/%FF", "percent"),
        ("#nowhere", "no \\$anchor"),
    ],
)
def test_other_references_fail_closed_and_nothing_is_fetched_P1_07_P1_18(
    ref: str, match: str
) -> None:
    document = obj(
        required=["a"],
        properties={"use": {"$ref": ref}},
        **{"$defs": {"a": {"enum": [{"type": "string"}]}}},
    )
    refused(document, match=match)


@pytest.mark.parametrize(
    "document",
    [
        obj(**{"$ref": "#"}),
        obj(allOf=[{"$ref": "#"}]),
        obj(properties={"a": {"$ref": "#/properties/a"}}),
        obj(
            properties={"a": {"$ref": "#/$defs/b"}},
            **{"$defs": {"b": {"anyOf": [{"$ref": "#/properties/a"}]}}},
        ),
        obj(**{"if": {"$ref": "#"}}),
        obj(**{"if": True, "then": {"$ref": "#"}}),
        obj(**{"if": True, "else": {"allOf": [{"$ref": "#"}]}}),
    ],
    ids=["root", "allOf", "self", "mutual", "if", "then", "else"],
)
def test_recursion_without_descending_into_the_value_is_refused(document: Any) -> None:
    refused(document, match="refers back to itself")


def test_recursion_through_properties_and_items_is_allowed() -> None:
    tree = obj(
        properties={"children": {"type": "array", "items": {"$ref": "#"}}},
        additionalProperties={"$ref": "#/$defs/leaf"},
        **{"$defs": {"leaf": {"type": "object", "additionalProperties": {"$ref": "#"}}}},
    )
    schema = compile_schema(tree)
    assert schema.is_valid(from_python({"children": [{"children": []}], "x": {"y": {}}}))
    assert not schema.is_valid(from_python({"children": [{"children": 5}]}))


def _chain(nodes: int) -> dict[str, Any]:
    """An object root with exactly ``nodes`` schema nodes: the root and nodes - 1 properties."""
    return obj(properties={f"p{i}": True for i in range(nodes - 1)})


def test_node_limit_at_and_past_JL_05() -> None:
    assert compile_schema(_chain(4096)).node_count == 4096
    refused(_chain(4097), match="4096 nodes")
    assert compile_schema(_chain(10), limits=Limits(max_schema_nodes=10)).node_count == 10
    refused(_chain(11), limits=Limits(max_schema_nodes=10), match="10 nodes")


def _nested(depth: int) -> dict[str, Any]:
    """An object root whose deepest schema sits at ``depth`` levels (the root is level 1)."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth - 2):
        schema = {"type": "object", "properties": {"a": schema}}
    return obj(properties={"a": schema})


def test_depth_limit_at_and_past_JL_06() -> None:
    compile_schema(_nested(64))
    refused(_nested(65), match="deeper than 64")
    compile_schema(_nested(5), limits=Limits(max_schema_depth=5))
    refused(_nested(6), limits=Limits(max_schema_depth=5), match="deeper than 5")


def test_depth_counts_every_kind_of_nesting_JL_06() -> None:
    schema: Any = True
    for _ in range(70):
        schema = {"anyOf": [{"items": schema}]}
    refused(obj(properties={"a": schema}), match="deeper than 64")


def test_the_exact_document_is_published_P1_04() -> None:
    document = JsonObject({"type": "object", "properties": {"b": True, "a": {"minimum": 1.50}}})
    schema = compile_schema(document)
    assert schema.document is document
    assert compile_schema({"type": "object"}).document == {"type": "object"}


def test_tool_schema_is_an_immutable_view_P1_01() -> None:
    schema = compile_schema(OBJ)
    with pytest.raises(TypeError):
        ToolSchema()
    with pytest.raises(AttributeError):
        schema.document = JsonObject()
    assert "1 nodes" in repr(schema)


# --- x-mcp-header (MH-07..10)


def header(name: str, kind: str = "string") -> dict[str, Any]:
    return {"type": kind, "x-mcp-header": name}


def test_headers_on_property_chains_are_declared_MH_08() -> None:
    schema = compile_schema(
        obj(
            properties={
                "tenant": header("Tenant"),
                "region": obj(properties={"zone": header("Zone", "integer")}),
                "flag": header("Dry-Run", "boolean"),
            }
        )
    )
    assert schema.headers == (
        HeaderDeclaration("Dry-Run", ("flag",), "boolean"),
        HeaderDeclaration("Zone", ("region", "zone"), "integer"),
        HeaderDeclaration("Tenant", ("tenant",), "string"),
    )


@pytest.mark.parametrize(
    "document",
    [
        obj(**{"x-mcp-header": "Root"}),
        obj(properties={"a": {"type": "array", "items": header("A")}}),
        obj(**{"$defs": {"a": header("A")}}, properties={"a": {"$ref": "#/$defs/a"}}),
        obj(allOf=[obj(properties={"a": header("A")})]),
        obj(anyOf=[obj(properties={"a": header("A")})]),
        obj(**{"if": obj(properties={"a": header("A")})}),
        obj(additionalProperties=header("A")),
    ],
    ids=["root", "items", "defs", "allOf", "anyOf", "if", "additional"],
)
def test_headers_elsewhere_are_refused_MH_08(document: Any) -> None:
    refused(document, match="x-mcp-header")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "number", "x-mcp-header": "A"},
        {"type": "object", "x-mcp-header": "A"},
        {"type": ["string", "null"], "x-mcp-header": "A"},
        {"x-mcp-header": "A"},
        {"type": "string", "x-mcp-header": ""},
        {"type": "string", "x-mcp-header": "Two Words"},
        {"type": "string", "x-mcp-header": "Caf\u00e9"},
        {"type": "string", "x-mcp-header": "a:b"},
        {"type": "string", "x-mcp-header": 5},
    ],
    ids=repr,
)
def test_header_value_and_direct_type_are_checked_MH_07_MH_09(schema: dict[str, Any]) -> None:
    refused(obj(properties={"a": schema}), match="x-mcp-header")


def test_header_suffixes_are_unique_ignoring_case_MH_10() -> None:
    refused(obj(properties={"a": header("Tenant"), "b": header("TENANT")}), match="declared twice")
    token = "!#$%&'*+-.^_`|~09AZaz"
    assert compile_schema(obj(properties={"a": header(token)})).headers[0].suffix == token

"""Compile an authored Tool Schema Profile 1 document (docs/design/schema.md).

Profile 1 is closed: the recognised keywords are the whole language, and anything else
fails here, at registration, with a message for the developer that names the keyword and the
JSON Pointer of the schema that holds it.  Nothing is fetched: ``$ref`` only reaches the same
document, through a ``#`` JSON Pointer or a plain-name ``$anchor``.

The compiler walks the document once without recursion, building one ``Node`` per schema
location (object or boolean schema), bounded by ``max_schema_nodes`` and ``max_schema_depth``.
It then resolves references, refuses cycles that return to a schema without descending into
the instance (they could never terminate), and checks ``x-mcp-header`` placement.
Each ``pattern`` is compiled here, once, into a linear-time matcher (``_pattern``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, Literal
from urllib.parse import unquote

from mcpkit._grammar import TOKEN
from mcpkit.errors import SchemaError
from mcpkit.json import JsonArray, JsonObject, JsonValue, from_python
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.schema._evaluate import Outcome, diagnose, evaluate, outcome
from mcpkit.schema._explain import explain
from mcpkit.schema._nodes import Node, Pointer, scalar_key
from mcpkit.schema._pattern import PatternError, compile_pattern

__all__ = ["KEYWORDS", "HeaderDeclaration", "ToolSchema", "compile_schema"]

KEYWORDS: Final = frozenset(
    {
        "$schema", "$defs", "$anchor", "$ref", "$comment",
        "properties", "additionalProperties", "items",
        "allOf", "anyOf", "if", "then", "else",
        "type", "enum", "const", "required", "minimum", "maximum",
        "minLength", "maxLength", "pattern",
        "title", "description", "default", "examples", "deprecated",
        "readOnly", "writeOnly", "format", "x-mcp-header",
    }
)  # fmt: skip
DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
TYPE_NAMES: Final = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})
HEADER_TYPES: Final = frozenset({"string", "boolean", "integer"})
_ANCHOR: Final = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*\Z")
_STRING_KEYWORDS: Final = ("title", "description", "format", "$comment")
_BOOLEAN_KEYWORDS: Final = ("deprecated", "readOnly", "writeOnly")
_LENGTH_KEYWORDS: Final = (("minLength", "min_length"), ("maxLength", "max_length"))
# An integral Decimal bound with a larger exponent stays a Decimal (no string is that long,
# and converting 1E+999999999 to an int would expand it).
_MAX_LENGTH_EXPONENT: Final = 18
# Applicators whose subschemas see the same instance: a cycle through them never ends.
_SAME_INSTANCE: Final = ("allOf", "anyOf", "if", "then", "else")


def _where(pointer: Pointer) -> str:
    escaped = (token.replace("~", "~0").replace("/", "~1") for token in pointer)
    return "#" + "".join("/" + token for token in escaped)


@dataclass(frozen=True, slots=True)
class HeaderDeclaration:
    """A property mirrored into an ``Mcp-Param-{suffix}`` header."""

    suffix: str
    path: tuple[str, ...]
    type: Literal["string", "boolean", "integer"]


class ToolSchema:
    """An immutable, compiled Profile 1 schema: only :func:`compile_schema` builds one.

    ``document`` is the exact authored document, published as is.
    """

    __slots__ = ("_root", "document", "headers", "limits", "node_count")

    _root: Node
    document: JsonValue
    headers: tuple[HeaderDeclaration, ...]
    node_count: int
    limits: Limits

    def __init__(self, *_args: object, **_kwargs: object) -> None:
        raise TypeError("ToolSchema is built by mcpkit.schema.compile_schema")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("ToolSchema is immutable")

    def __repr__(self) -> str:
        return f"<ToolSchema {self.node_count} nodes, {len(self.headers)} mirrored headers>"

    def evaluate(self, instance: JsonValue, *, max_operations: int | None = None) -> Outcome:
        """Validate ``instance`` within the operation budget (``Limits`` by default)."""
        budget = self.limits.max_evaluation_operations if max_operations is None else max_operations
        return outcome(self._root, instance, budget)

    def is_valid(self, instance: JsonValue) -> bool:
        return self.evaluate(instance) is Outcome.VALID

    def explain(self, instance: JsonValue, *, max_operations: int | None = None) -> str:
        """Why ``instance`` does not pass, for the caller to correct it: the location and the
        constraint, in the schema's own terms (``limit: must be at most 50``), never a
        submitted value or a member name the schema does not declare."""
        budget = self.limits.max_evaluation_operations if max_operations is None else max_operations
        found, failure = diagnose(self._root, instance, budget)
        return explain(found, failure)

    def error_path(self, instance: JsonValue) -> tuple[str | int, ...] | None:
        """Where ``instance`` first fails, for logs and tests; never sent to a client."""
        outcome, path = evaluate(
            self._root, instance, self.limits.max_evaluation_operations, diagnostics=True
        )
        return path if outcome is Outcome.INVALID else None

    @classmethod
    def _build(
        cls,
        root: Node,
        document: JsonValue,
        headers: tuple[HeaderDeclaration, ...],
        node_count: int,
        limits: Limits,
    ) -> ToolSchema:
        schema = object.__new__(cls)
        for name, value in (
            ("_root", root),
            ("document", document),
            ("headers", headers),
            ("node_count", node_count),
            ("limits", limits),
        ):
            object.__setattr__(schema, name, value)
        return schema


_ATTRIBUTE: Final = {"additionalProperties": "additional", "if": "if_", "else": "else_"}


def _link(parent: Node, keyword: str, key: str | int, child: Node) -> None:
    """Attach a compiled subschema to the schema that holds it."""
    if keyword == "$defs":
        return  # reached only through $ref
    parent.simple = False
    if keyword == "properties":
        parent.properties[str(key)] = child
    elif keyword in ("allOf", "anyOf"):
        members = parent.all_of if keyword == "allOf" else parent.any_of
        index = int(key)
        if len(members) <= index:  # children arrive in any order: size the list once
            members.extend([child] * (index + 1 - len(members)))
        members[index] = child
    else:
        setattr(parent, _ATTRIBUTE.get(keyword, keyword), child)


def compile_schema(
    document: object, *, limits: Limits = DEFAULT_LIMITS, object_root: bool = True
) -> ToolSchema:
    """Compile an authored Profile 1 schema, or raise :class:`~mcpkit.errors.SchemaError`.

    With ``object_root`` (every tool input schema) the root must be an object schema whose
    ``type`` is ``"object"``.
    """
    value = document if isinstance(document, JsonObject | bool) else from_python(document)
    if object_root and not (isinstance(value, JsonObject) and value.get("type") == "object"):
        raise SchemaError('a tool input schema must be an object with "type": "object"')
    compiler = _Compiler(limits)
    root = compiler.walk(value)
    compiler.resolve()
    compiler.check_recursion()
    for node in compiler.nodes.values():
        node.settle()
    headers = compiler.headers()
    return ToolSchema._build(root, value, headers, len(compiler.nodes), limits)


class _Compiler:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.nodes: dict[Pointer, Node] = {}
        self.anchors: dict[str, Node] = {}
        self.header_nodes: list[tuple[Node, str, str]] = []

    def fail(self, pointer: Pointer, problem: str) -> SchemaError:
        return SchemaError(f"schema at {_where(pointer)}: {problem}")

    def walk(self, document: JsonValue) -> Node:
        """Build and link every node with an explicit stack; structural checks happen here."""
        # (schema, pointer, depth, parent, keyword in the parent, name or index in it)
        stack: list[tuple[JsonValue, Pointer, int, Node | None, str, str | int]] = [
            (document, (), 1, None, "", "")
        ]
        while stack:
            schema, pointer, depth, parent, keyword, key = stack.pop()
            if depth > self.limits.max_schema_depth:
                raise self.fail(pointer, f"nests deeper than {self.limits.max_schema_depth}")
            if len(self.nodes) >= self.limits.max_schema_nodes:
                raise SchemaError(f"schema has more than {self.limits.max_schema_nodes} nodes")
            if isinstance(schema, bool):
                node = Node(pointer, schema)
            elif isinstance(schema, JsonObject):
                node = Node(pointer, None)
                for name in schema:
                    if name not in KEYWORDS:
                        raise self.fail(pointer, f"keyword {name!r} is not in Profile 1")
                self._scalars(node, schema, pointer)
                for sub, sub_pointer, sub_keyword, sub_key in self._subschemas(schema, pointer):
                    stack.append((sub, sub_pointer, depth + 1, node, sub_keyword, sub_key))
            else:
                raise self.fail(pointer, "a schema must be an object or a boolean")
            node.finish()
            self.nodes[pointer] = node
            if parent is not None:
                _link(parent, keyword, key, node)
        return self.nodes[()]

    def _scalars(self, node: Node, schema: JsonObject, pointer: Pointer) -> None:
        get = schema.get
        if "$schema" in schema and (pointer or get("$schema") != DIALECT):
            raise self.fail(pointer, f"$schema is only allowed at the root, as {DIALECT!r}")
        for keyword in _STRING_KEYWORDS:
            if keyword in schema and not isinstance(schema[keyword], str):
                raise self.fail(pointer, f"{keyword} must be a string")
        for keyword in _BOOLEAN_KEYWORDS:
            if keyword in schema and not isinstance(schema[keyword], bool):
                raise self.fail(pointer, f"{keyword} must be a boolean")
        if "examples" in schema and not isinstance(schema["examples"], JsonArray):
            raise self.fail(pointer, "examples must be an array")
        if "type" in schema:
            node.types = self._types(schema["type"], pointer)
        if "enum" in schema:
            enum = schema["enum"]
            if not isinstance(enum, JsonArray):
                raise self.fail(pointer, "enum must be an array")
            node.enum = tuple(enum)
            keys = [scalar_key(option) for option in enum]
            if all(key is not None for key in keys):
                node.enum_keys = frozenset(keys)  # type: ignore[arg-type]
        if "const" in schema:
            node.const = schema["const"]
        for keyword in ("minimum", "maximum"):
            if keyword in schema:
                bound = schema[keyword]
                if isinstance(bound, bool) or not isinstance(bound, int | Decimal):
                    raise self.fail(pointer, f"{keyword} must be a number")
                setattr(node, keyword, bound)
        for keyword, attribute in _LENGTH_KEYWORDS:
            if keyword in schema:
                setattr(node, attribute, self._length(keyword, schema[keyword], pointer))
        if "pattern" in schema:
            source = schema["pattern"]
            if not isinstance(source, str):
                raise self.fail(pointer, "pattern must be a string")
            try:
                node.pattern = compile_pattern(
                    source,
                    max_chars=self.limits.max_pattern_chars,
                    max_states=self.limits.max_pattern_states,
                )
            except PatternError as error:
                raise self.fail(pointer, f"pattern: {error}") from None
        if "required" in schema:
            node.required = self._required(schema["required"], pointer)
        if "$anchor" in schema:
            anchor = schema["$anchor"]
            if not isinstance(anchor, str) or _ANCHOR.match(anchor) is None:
                raise self.fail(pointer, "$anchor must be a plain name")
            if anchor in self.anchors:
                raise self.fail(pointer, f"$anchor {anchor!r} is declared twice")
            self.anchors[anchor] = node
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str):
                raise self.fail(pointer, "$ref must be a string")
            node.ref_text = ref
            node.simple = False
        if "x-mcp-header" in schema:
            suffix = schema["x-mcp-header"]
            if not isinstance(suffix, str) or TOKEN.fullmatch(suffix) is None:
                raise self.fail(pointer, "x-mcp-header must be a non-empty RFC 9110 token")
            kind = schema.get("type")
            if not isinstance(kind, str) or kind not in HEADER_TYPES:
                raise self.fail(
                    pointer, 'x-mcp-header needs "type" of exactly string, boolean or integer'
                )
            self.header_nodes.append((node, suffix, kind))

    def _types(self, value: JsonValue, pointer: Pointer) -> frozenset[str]:
        names = JsonArray([value]) if isinstance(value, str) else value
        if not isinstance(names, JsonArray) or not names:
            raise self.fail(pointer, "type must be a type name or a non-empty array of them")
        if any(not isinstance(name, str) or name not in TYPE_NAMES for name in names):
            raise self.fail(pointer, "type names a type that does not exist")
        if len(set(names)) != len(names):
            raise self.fail(pointer, "type repeats a type name")
        return frozenset(names)  # type: ignore[arg-type]

    def _length(self, keyword: str, value: JsonValue, pointer: Pointer) -> int | Decimal:
        """A non-negative integer; an integral number such as ``2.0`` counts as one."""
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if (
            isinstance(value, Decimal)
            and value.is_finite()
            and value >= 0
            and value == value.to_integral_value()
        ):
            return int(value) if value.adjusted() <= _MAX_LENGTH_EXPONENT else value
        raise self.fail(pointer, f"{keyword} must be a non-negative integer")

    def _required(self, value: JsonValue, pointer: Pointer) -> tuple[str, ...]:
        if not isinstance(value, JsonArray) or any(not isinstance(n, str) for n in value):
            raise self.fail(pointer, "required must be an array of strings")
        if len(set(value)) != len(value):
            raise self.fail(pointer, "required repeats a name")
        return tuple(value)  # type: ignore[arg-type]

    def _subschemas(
        self, schema: JsonObject, pointer: Pointer
    ) -> Iterator[tuple[JsonValue, Pointer, str, str | int]]:
        for keyword in ("properties", "$defs"):
            if keyword in schema:
                members = schema[keyword]
                if not isinstance(members, JsonObject):
                    raise self.fail(pointer, f"{keyword} must be an object of schemas")
                for name, sub in members.items():
                    yield sub, (*pointer, keyword, name), keyword, name
        for keyword in ("allOf", "anyOf"):
            if keyword in schema:
                members = schema[keyword]
                if not isinstance(members, JsonArray) or not members:
                    raise self.fail(pointer, f"{keyword} must be a non-empty array of schemas")
                for index, sub in enumerate(members):
                    yield sub, (*pointer, keyword, str(index)), keyword, index
        for keyword in ("additionalProperties", "items", "if", "then", "else"):
            if keyword in schema:
                yield schema[keyword], (*pointer, keyword), keyword, ""

    def resolve(self) -> None:
        """Resolve every ``$ref`` (same document only)."""
        for node in self.nodes.values():
            if node.ref_text is not None:
                node.ref = self._target(node.ref_text, node.pointer)

    def _target(self, ref: str, pointer: Pointer) -> Node:
        if not ref.startswith("#"):
            raise self.fail(pointer, f"$ref {ref!r} leaves the document; only '#...' is allowed")
        try:
            fragment = unquote(ref[1:], errors="strict")
        except UnicodeDecodeError:
            raise self.fail(pointer, f"$ref {ref!r} is not valid percent-encoded UTF-8") from None
        if fragment == "" or fragment.startswith("/"):
            tokens = fragment.split("/")[1:] if fragment else []
            if any(re.search(r"~(?![01])", token) for token in tokens):
                raise self.fail(pointer, f"$ref {ref!r} has an invalid JSON Pointer escape")
            target = tuple(token.replace("~1", "/").replace("~0", "~") for token in tokens)
            if target not in self.nodes:
                raise self.fail(pointer, f"$ref {ref!r} does not point to a schema")
            return self.nodes[target]
        if fragment not in self.anchors:
            raise self.fail(pointer, f"$ref {ref!r} names no $anchor of this document")
        return self.anchors[fragment]

    def check_recursion(self) -> None:
        """Refuse a cycle that returns to a schema without descending into the instance."""
        state: dict[int, int] = {}  # 1 = on the current path, 2 = finished
        for start in self.nodes.values():
            if id(start) in state:
                continue
            stack: list[tuple[Node, Iterator[Node]]] = [(start, start.children())]
            state[id(start)] = 1
            while stack:
                node, children = stack[-1]
                child = next(children, None)
                if child is None:
                    state[id(node)] = 2
                    stack.pop()
                elif state.get(id(child)) == 1:
                    raise self.fail(
                        child.pointer, "refers back to itself without descending into the value"
                    )
                elif id(child) not in state:
                    state[id(child)] = 1
                    stack.append((child, child.children()))

    def headers(self) -> tuple[HeaderDeclaration, ...]:
        """Placement and uniqueness of ``x-mcp-header``."""
        declarations: list[HeaderDeclaration] = []
        seen: set[str] = set()
        for node, suffix, kind in self.header_nodes:
            pointer = node.pointer
            through_properties = len(pointer) % 2 == 0 and all(
                token == "properties" for token in pointer[0::2]
            )
            if not pointer or not through_properties:
                raise self.fail(
                    pointer, "x-mcp-header is only allowed on a property reached by properties"
                )
            if suffix.lower() in seen:
                raise self.fail(pointer, f"x-mcp-header {suffix!r} is declared twice")
            seen.add(suffix.lower())
            declarations.append(
                HeaderDeclaration(suffix, pointer[1::2], kind)  # type: ignore[arg-type]
            )
        return tuple(sorted(declarations, key=lambda d: d.path))

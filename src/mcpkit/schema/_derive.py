"""A TypeModel to a Profile 1 schema document, deterministically.

The same type always gives byte-identical JSON: properties in declaration order, ``required``
in declaration order, ``$defs`` sorted by name.  A named type used once, and not recursively,
is written inline; one used several times or recursively goes to ``$defs`` under its qualified
name (type arguments joined with ``-``, a ``-2``, ``-3`` suffix in discovery order when two
distinct types share a name).  References to the root object are ``{"$ref": "#"}``.  Only
explicit ``Arg`` metadata becomes ``title``/``description``: docstrings stay private.

Schemas are filled top-down from an explicit work stack, so deep types never meet the
interpreter's recursion limit; the compiler then enforces the schema depth and node limits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from mcpkit.errors import SchemaError
from mcpkit.json import JsonObject, JsonValue, from_python
from mcpkit.schema import _typeinfo as ti

__all__ = ["derive_document"]

Schema = dict[str, Any]
_LITERAL_TYPES = {str: "string", int: "integer", bool: "boolean"}
_HEADER_KINDS = frozenset({"str", "bool", "int", "datetime", "date", "uuid"})


def derive_document(
    model: ti.TypeModel,
    *,
    role: Literal["input", "output"],
    describe: Callable[[], str],
    object_root_required: bool = False,
) -> JsonObject:
    """The schema document of ``model``; ``describe()`` names the type in error messages.

    Inputs must have an object root; outputs may be any family member except a bare
    ``str``, and only an object when ``object_root_required`` (2025 revisions).
    """
    root = model.root
    is_object = isinstance(root, ti.MapInfo) or (
        isinstance(root, ti.RefInfo) and isinstance(model.named[root.index], ti.ObjectInfo)
    )
    if role == "input" and not is_object:
        raise SchemaError(
            f"{describe()} cannot be a tool input: use a frozen dataclass, a pydantic model, "
            "a TypedDict, dict[str, T] or a function's parameters"
        )
    if role == "output" and isinstance(root, ti.ScalarInfo) and root.kind == "str":
        raise SchemaError(f"{describe()}: a bare str output is ambiguous with text content")
    if object_root_required and not is_object:
        raise SchemaError(f"{describe()}: structured content must be an object on 2025 revisions")
    document = _Deriver(model, headers=role == "input").document()
    value = from_python(document)
    assert isinstance(value, JsonObject)
    return value


class _Deriver:
    def __init__(self, model: ti.TypeModel, *, headers: bool) -> None:
        self.model = model
        self.headers = headers
        root = model.root
        self.root_index = -1
        if isinstance(root, ti.RefInfo) and isinstance(model.named[root.index], ti.ObjectInfo):
            self.root_index = root.index
        self.defs: dict[int, str] = {}
        taken: set[str] = set()
        for index, info in enumerate(model.named):
            shared = model.refcounts[index] > 1 or index in model.recursive
            if index == self.root_index or not shared:
                continue
            name, suffix = info.label, 2
            while name in taken:
                name, suffix = f"{info.label}-{suffix}", suffix + 1
            taken.add(name)
            self.defs[index] = name
        self.stack: list[tuple[Schema, ti.TypeInfo, tuple[tuple[str, JsonValue], ...]]] = []

    def document(self) -> Schema:
        root: Schema = {}
        if self.root_index >= 0:
            info = self.model.named[self.root_index]
            assert isinstance(info, ti.ObjectInfo)
            self.object(root, info, False, root=True)
            _document(root, self.model.root)
        else:
            self.stack.append((root, self.model.root, ()))
        self.run()
        if self.defs:
            defs: Schema = {}
            for index, name in sorted(self.defs.items(), key=lambda item: item[1]):
                defs[name] = {}
                self.named(defs[name], index, False)
            root["$defs"] = defs
            self.run()
        return root

    def run(self) -> None:
        while self.stack:
            out, info, extras = self.stack.pop()
            self.fill(out, info)
            out.update(extras)

    def mergeable(self, info: ti.TypeInfo) -> bool:
        """Whether ``T | None`` can be written as ``"type": [t, "null"]`` (no enum, no $ref)."""
        if isinstance(info, ti.RefInfo):
            inline = info.index not in self.defs and info.index != self.root_index
            return inline and isinstance(self.model.named[info.index], ti.ObjectInfo)
        return not isinstance(info, ti.LiteralInfo | ti.NullableInfo)

    def fill(self, out: Schema, info: ti.TypeInfo) -> None:
        nullable = False
        while isinstance(info, ti.NullableInfo):
            nullable, info = True, info.inner
        if isinstance(info, ti.ObjectUnionInfo):  # its arms, and null as one more
            arms: list[Schema] = [{} for _ in info.arms]
            out["anyOf"] = [*arms, {"type": "null"}] if nullable else arms
            self.stack.extend((arm, ref, ()) for arm, ref in zip(arms, info.arms, strict=True))
            _document(out, info)
            return
        if nullable and not self.mergeable(info):
            arm: Schema = {}
            out["anyOf"] = [arm, {"type": "null"}]
            self.stack.append((arm, info, ()))
            return
        if isinstance(info, ti.RefInfo):
            if info.index == self.root_index:
                out["$ref"] = "#"
            elif info.index in self.defs:
                out["$ref"] = "#/$defs/" + self.defs[info.index]
            else:
                self.named(out, info.index, nullable)
        elif isinstance(info, ti.LiteralInfo):
            kinds = {_LITERAL_TYPES[type(value)] for value in info.values}
            if len(kinds) == 1:
                out["type"] = kinds.pop()
            out["enum"] = list(info.values)
        elif isinstance(info, ti.ArrayInfo):
            out["type"] = _type("array", nullable)
            self.stack.append((_new(out, "items"), info.item, ()))
        elif isinstance(info, ti.MapInfo):
            out["type"] = _type("object", nullable)
            self.stack.append((_new(out, "additionalProperties"), info.value, ()))
        elif isinstance(info, ti.ScalarUnionInfo):  # constraints apply to their own type only
            names = [ti.JSON_TYPES[member.kind] for member in info.arms]
            out["type"] = [*names, "null"] if nullable else names
            for member in info.arms:
                _constrain(out, member)
        else:
            out["type"] = _type(ti.JSON_TYPES[info.kind], nullable)
            _constrain(out, info)
        _document(out, info)

    def named(self, out: Schema, index: int, nullable: bool) -> None:
        info = self.model.named[index]
        if isinstance(info, ti.EnumInfo):
            out["type"] = info.json_type
            out["enum"] = list(info.values)
        else:
            self.object(out, info, nullable, root=False)

    def object(self, out: Schema, info: ti.ObjectInfo, nullable: bool, *, root: bool) -> None:
        out["type"] = _type("object", nullable)
        if info.fields:
            properties = _new(out, "properties")
            seen: set[str] = set()
            for field in info.fields:
                child = _new(properties, field.name)
                extras: tuple[tuple[str, JsonValue], ...] = ()
                if field.header is not None and self.headers:  # request metadata: inputs only
                    self.check_header(field, info, root, seen)
                    extras = (("x-mcp-header", field.header),)
                self.stack.append((child, field.type, extras))
            required = [field.name for field in info.fields if field.required]
            if required:
                out["required"] = required
        out["additionalProperties"] = False

    def check_header(
        self, field: ti.FieldInfo, owner: ti.ObjectInfo, root: bool, seen: set[str]
    ) -> None:
        """The ``x-mcp-header`` rules for derived schemas; the compiler checks the document
        again."""
        kind = {"dataclass": "field", "typeddict": "key", "parameters": "parameter"}[owner.kind]
        where = f"{kind} {field.attr!r} of {owner.label}"
        if not root:
            raise SchemaError(f"{where}: Arg(header=...) only applies to a tool's own arguments")
        info = field.type
        eligible = isinstance(info, ti.ScalarInfo) and info.kind in _HEADER_KINDS
        if isinstance(info, ti.LiteralInfo):
            eligible = len({type(value) for value in info.values}) == 1
        if isinstance(info, ti.RefInfo):
            eligible = info.index not in self.defs and isinstance(
                self.model.named[info.index], ti.EnumInfo
            )
        if not eligible:
            raise SchemaError(f"{where}: a mirrored header needs a str, bool or int argument")
        suffix = field.header.lower()  # type: ignore[union-attr]
        if suffix in seen:
            raise SchemaError(f"{where}: header {field.header!r} is declared twice")
        seen.add(suffix)


def _constrain(out: Schema, info: ti.ScalarInfo) -> None:
    for key, value in (
        ("minimum", info.minimum),
        ("maximum", info.maximum),
        ("minLength", info.min_length),
        ("maxLength", info.max_length),
        ("pattern", info.pattern),
        ("format", ti.FORMATS.get(info.kind)),
    ):
        if value is not None:
            out[key] = value


def _new(out: Schema, key: str) -> Schema:
    child: Schema = {}
    out[key] = child
    return child


def _type(name: str, nullable: bool) -> str | list[str]:
    return [name, "null"] if nullable else name


def _document(out: Schema, info: ti.TypeInfo) -> None:
    if info.title is not None:
        out["title"] = info.title
    if info.description is not None:
        out["description"] = info.description

"""Skills (extension ``io.modelcontextprotocol/skills``, 2026-07-28): bundles and registrations.

A ``SkillBundle`` is an immutable set of files with a root ``SKILL.md`` whose YAML front matter
names and describes the skill.  Every rule is checked when the bundle is built, and everything
a request needs is computed then too (digests, the representation of each file, the manifest),
so serving a skill is lookups.  A refused bundle is a ``ConfigurationError`` with a fixed
message: it says which rule failed and how to fix it, never which path or value failed it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final, NamedTuple, TypeAlias
from urllib.parse import quote

from mcpkit.errors import ConfigurationError
from mcpkit.json import JsonArray, JsonObject
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model._skill_yaml import parse_front_matter

__all__ = [
    "SKILLS_EXTENSION",
    "SkillAccess",
    "SkillAccessPolicy",
    "SkillBundle",
    "SkillFile",
    "SkillRegistration",
]

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
"""The extension's identifier, the key under the server's ``capabilities.extensions``."""

ROOT: Final = "SKILL.md"
DIRECTORY_MIME_TYPE: Final = "inode/directory"

# The representation of a file depends on its suffix only: these are strict UTF-8 text ...
_TEXT: Final = MappingProxyType(
    {
        "md": "text/markdown",
        "json": "application/json",
        "html": "text/html",
        "css": "text/css",
        "xml": "application/xml",
        "txt": "text/plain",
        "yaml": "application/yaml",
        "yml": "application/yaml",
        "toml": "application/toml",
        "csv": "text/csv",
        "tsv": "text/tab-separated-values",
        "py": "text/x-python",
        "js": "text/javascript",
        "ts": "text/x-typescript",
        "jsx": "text/javascript",
        "tsx": "text/x-typescript",
        "sh": "application/x-sh",
        "bash": "application/x-sh",
        "zsh": "application/x-sh",
        "sql": "application/sql",
    }
)
# ... these are base64 with a fixed type, and anything else is application/octet-stream.
_BINARY: Final = MappingProxyType(
    {
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "pdf": "application/pdf",
        "zip": "application/zip",
    }
)
_OCTETS: Final = "application/octet-stream"

_NAME: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_MAX_NAME: Final = 64
_MAX_DESCRIPTION: Final = 1024
_MAX_COMPATIBILITY: Final = 500
_RESERVED_METADATA: Final = "io.modelcontextprotocol/"
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f\\\\]")
_SEGMENT: Final = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+")
# what stays literal in a file URI's path (RFC 3986 pchar less ``%``, which is escaped)
_PCHAR: Final = "-._~!$&'()*+,;=:@"

_NOT_MAPPING: Final = "SkillBundle.from_files: files must be a mapping of paths (str) to bytes"
_TOO_MANY: Final = "a skill bundle has more files than Limits.max_skill_files; split the skill"
_TOO_LARGE: Final = "a skill bundle is larger than Limits.max_skill_bytes; split the skill"
_PATH: Final = (
    "a skill file path must be a relative, '/'-separated, NFC-normalised path without empty, "
    "'.' or '..' segments, backslashes or control characters"
)
_PATH_LENGTH: Final = "a skill file path is longer than Limits.max_skill_path_bytes"
_PREFIX: Final = "a skill file path is also the directory of another file; rename one of them"
_NO_ROOT: Final = "a skill bundle must have a SKILL.md file at its root"
_ROOT_SIZE: Final = "SKILL.md is larger than Limits.max_skill_document_bytes"
_UTF8: Final = "a skill file with a text suffix is not valid UTF-8; fix its encoding or rename it"
_OPENING: Final = "SKILL.md must begin with a '---' line that opens its YAML front matter"
_CLOSING: Final = "SKILL.md front matter has no closing '---' line"
_NAME_RULE: Final = (
    "Skills field 'name' must be 1-64 lowercase letters, digits and single hyphens, "
    "not starting or ending with a hyphen."
)
_DESCRIPTION_REQUIRED: Final = "Skills field 'description' is required: a non-empty string."
_DESCRIPTION_LONG: Final = f"Skills field 'description' exceeds {_MAX_DESCRIPTION} code points."
_COMPATIBILITY: Final = (
    f"Skills field 'compatibility' must be a string of at most {_MAX_COMPATIBILITY} code points."
)
_STRING_FIELD: Final = "Skills fields 'license' and 'allowed-tools' must be strings."
_METADATA: Final = (
    "Skills field 'metadata' must be a mapping whose keys do not start with the reserved "
    "prefix 'io.modelcontextprotocol/'."
)
_DIRECTORY: Final = (
    "SkillBundle.from_directory: the directory must exist and hold only regular files and "
    "directories (no symbolic links or special files)"
)
_URI: Final = (
    "SkillRegistration: uri must be skill://<skill-path>/SKILL.md, each <skill-path> segment "
    "an RFC 3986 reg-name, the last one equal to the skill's name"
)


def _refuse(reason: str) -> ConfigurationError:
    return ConfigurationError(reason)


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a bundle, with what serving it needs, computed once."""

    path: str
    data: bytes = field(repr=False)
    digest: str
    """``sha256:`` and the lowercase hex SHA-256 of ``data``."""
    mime_type: str
    text: str | None = field(repr=False)
    """The file as text for a text suffix (strict UTF-8, BOM kept), else ``None`` (base64)."""

    @property
    def size(self) -> int:
        return len(self.data)


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _check_path(path: object, limits: Limits) -> str:
    if not isinstance(path, str) or not path:
        raise _refuse(_PATH)
    try:
        encoded = path.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(_PATH) from None
    if len(encoded) > limits.max_skill_path_bytes:
        raise _refuse(_PATH_LENGTH)
    if (
        _CONTROL.search(path)
        or not unicodedata.is_normalized("NFC", path)
        or any(segment in ("", ".", "..") for segment in path.split("/"))
    ):
        raise _refuse(_PATH)
    return path


def _file(path: str, data: bytes) -> SkillFile:
    suffix = _suffix(path)
    text: str | None = None
    if suffix in _TEXT:
        try:
            text = data.decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            raise _refuse(_UTF8) from None
        mime = _TEXT[suffix]
    else:
        mime = _BINARY.get(suffix, _OCTETS)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    return SkillFile(path, bytes(data), digest, mime, text)


def _front_matter(document: str, limits: Limits) -> JsonObject:
    """The front matter of ``SKILL.md`` (its text, BOM kept), between the ``---`` lines."""
    if document.startswith("\ufeff"):
        document = document[1:]
    lines = document.split("\n")
    if lines[0].removesuffix("\r") != "---":
        raise _refuse(_OPENING)
    for index in range(1, len(lines)):
        if lines[index].removesuffix("\r").rstrip(" \t") == "---":
            inner = [line.removesuffix("\r") for line in lines[1:index]]
            return parse_front_matter(inner, limits)
    raise _refuse(_CLOSING)


def _check_front_matter(front: JsonObject) -> None:
    name = front.get("name")
    if not isinstance(name, str) or len(name) > _MAX_NAME or not _NAME.fullmatch(name):
        raise _refuse(_NAME_RULE)
    description = front.get("description")
    if not isinstance(description, str) or not description:
        raise _refuse(_DESCRIPTION_REQUIRED)
    if len(description) > _MAX_DESCRIPTION:
        raise _refuse(_DESCRIPTION_LONG)
    compatibility = front.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > _MAX_COMPATIBILITY
    ):
        raise _refuse(_COMPATIBILITY)
    for key in ("license", "allowed-tools"):
        if front.get(key) is not None and not isinstance(front[key], str):
            raise _refuse(_STRING_FIELD)
    metadata = front.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, JsonObject)
        or any(key.startswith(_RESERVED_METADATA) for key in metadata)
    ):
        raise _refuse(_METADATA)


class SkillBundle:
    """An immutable skill: its files (``SKILL.md`` first, then by path) and its front matter.

    Build one with :meth:`from_files` or :meth:`from_directory`; both check every rule and
    bound now (``Limits.max_skill_*``): paths are relative, ``/``-separated, NFC, distinct,
    and no file is another's directory; at most ``max_skill_files`` files and
    ``max_skill_bytes`` bytes; ``SKILL.md`` at the root, at most ``max_skill_document_bytes``,
    opening with YAML front matter in mcpkit's strict profile whose ``name`` and
    ``description`` follow the Agent Skills rules; files with a text suffix are strict UTF-8.
    Bytes, BOMs and line endings are kept as given.
    """

    __slots__ = ("files", "frontmatter")

    files: tuple[SkillFile, ...]
    frontmatter: JsonObject
    """The front matter as a JSON object, as ``skills/list`` sends it."""

    def __init__(self, *_args: object, **_kwargs: object) -> None:
        raise TypeError("SkillBundle is built by SkillBundle.from_files or from_directory")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("SkillBundle is immutable")

    def __repr__(self) -> str:
        return f"<SkillBundle {self.name!r}, {len(self.files)} files>"

    @property
    def name(self) -> str:
        return str(self.frontmatter["name"])  # checked a string when built

    @property
    def description(self) -> str:
        return str(self.frontmatter["description"])

    @classmethod
    def from_files(
        cls, files: Mapping[str, bytes], *, limits: Limits = DEFAULT_LIMITS
    ) -> SkillBundle:
        """The bundle of ``files`` (logical path to raw bytes)."""
        if not isinstance(files, Mapping):
            raise _refuse(_NOT_MAPPING)
        if len(files) > limits.max_skill_files:
            raise _refuse(_TOO_MANY)
        total = 0
        for path, data in files.items():
            _check_path(path, limits)
            if not isinstance(data, bytes):
                raise _refuse(_NOT_MAPPING)
            total += len(data)
            if total > limits.max_skill_bytes:
                raise _refuse(_TOO_LARGE)
        for path in files:
            # every proper directory prefix of the path ("a", "a/b" for "a/b/c")
            segments = path.split("/")
            if any("/".join(segments[:end]) in files for end in range(1, len(segments))):
                raise _refuse(_PREFIX)
        root = files.get(ROOT)
        if root is None:
            raise _refuse(_NO_ROOT)
        if len(root) > limits.max_skill_document_bytes:
            raise _refuse(_ROOT_SIZE)
        built = {path: _file(path, data) for path, data in files.items()}
        document = built[ROOT].text
        assert document is not None  # .md is a text suffix
        front = _front_matter(document, limits)
        _check_front_matter(front)
        ordered = (built[ROOT], *(built[path] for path in sorted(built) if path != ROOT))
        bundle = object.__new__(cls)
        object.__setattr__(bundle, "files", ordered)
        object.__setattr__(bundle, "frontmatter", front)
        return bundle

    @classmethod
    def from_directory(
        cls, directory: str | os.PathLike[str], *, limits: Limits = DEFAULT_LIMITS
    ) -> SkillBundle:
        """The bundle of every file under ``directory`` (paths relative to it).  Symbolic
        links and special files are refused, and the walk stops as soon as a count or size
        limit is passed, before reading more."""
        root = Path(directory)
        files: dict[str, bytes] = {}
        total = 0
        pending = [root]
        if not root.is_dir() or root.is_symlink():
            raise _refuse(_DIRECTORY)
        while pending:
            folder = pending.pop()
            for entry in sorted(folder.iterdir()):
                mode = entry.lstat().st_mode
                if stat.S_ISDIR(mode):
                    pending.append(entry)
                    continue
                if not stat.S_ISREG(mode):
                    raise _refuse(_DIRECTORY)
                if len(files) >= limits.max_skill_files:
                    raise _refuse(_TOO_MANY)
                total += entry.lstat().st_size
                if total > limits.max_skill_bytes:
                    raise _refuse(_TOO_LARGE)
                files[entry.relative_to(root).as_posix()] = entry.read_bytes()
        return cls.from_files(files, limits=limits)


class SkillAccess(NamedTuple):
    """What a skill access policy is asked: may ``identity`` (what admission established) see
    ``skill``?  ``uri`` is what the request names: the skill's URI (``skills/list``,
    ``skills/get``) or one of its files (``resources/read``)."""

    skill: SkillRegistration
    identity: object
    uri: str


SkillAccessPolicy: TypeAlias = Callable[[SkillAccess], bool]
"""Decides each list entry, ``skills/get`` and file read; only ``True`` grants (anything else,
or an exception, denies), and a denied skill looks exactly like an unknown one."""


def _check_uri(uri: object, name: str) -> str:
    if not isinstance(uri, str) or not uri.startswith("skill://") or not uri.endswith("/" + ROOT):
        raise _refuse(_URI)
    segments = uri[len("skill://") : -len(ROOT) - 1].split("/")
    if segments[-1] != name or not all(_SEGMENT.fullmatch(segment) for segment in segments):
        raise _refuse(_URI)
    return uri


@dataclass(frozen=True, slots=True, eq=False)
class SkillRegistration:
    """A skill served at ``uri`` (default ``skill://<name>/SKILL.md``), on 2026-07-28 only.

    Its files are at the URIs below the skill's directory (the URI without ``SKILL.md``),
    each path segment percent-encoded where it is not a URI character.  The manifest
    ``skills/list`` and ``skills/get`` send is built now.  Compared by identity.
    """

    bundle: SkillBundle
    uri: str = ""
    files: Mapping[str, SkillFile] = field(init=False, repr=False)
    """The bundle's files by URI, ``SKILL.md`` first."""
    manifest: JsonObject = field(init=False, repr=False)
    """The skill entry: ``uri``, ``frontmatter`` and ``resources`` (URI, digest and size of
    each file)."""
    resource: JsonObject = field(init=False, repr=False)
    """The ``SKILL.md`` entry of ``resources/list``."""
    directories: Mapping[str, JsonArray] = field(init=False, repr=False)
    """Each directory's URI (the skill's own, without ``/SKILL.md``, and every subdirectory)
    and its direct children for ``resources/directory/read``: files with their MIME type,
    subdirectories as ``inode/directory``."""

    def __post_init__(self) -> None:
        if not isinstance(self.bundle, SkillBundle):
            raise ConfigurationError("SkillRegistration: bundle must be a SkillBundle")
        uri = _check_uri(self.uri or f"skill://{self.bundle.name}/{ROOT}", self.bundle.name)
        base = uri[: -len(ROOT)]
        files = {
            base + "/".join(quote(part, safe=_PCHAR) for part in item.path.split("/")): item
            for item in self.bundle.files
        }
        entries = [
            JsonObject({"uri": item_uri, "digest": item.digest, "size": item.size})
            for item_uri, item in files.items()
        ]
        manifest = JsonObject(
            {"uri": uri, "frontmatter": self.bundle.frontmatter, "resources": JsonArray(entries)}
        )
        resource = JsonObject(
            {
                "uri": uri,
                "name": self.bundle.name,
                "description": self.bundle.description,
                "mimeType": self.bundle.files[0].mime_type,
            }
        )
        object.__setattr__(self, "uri", uri)
        object.__setattr__(self, "files", MappingProxyType(files))
        object.__setattr__(self, "manifest", manifest)
        object.__setattr__(self, "resource", resource)
        object.__setattr__(self, "directories", _directories(base.removesuffix("/"), files))


def _directories(root: str, files: Mapping[str, SkillFile]) -> Mapping[str, JsonArray]:
    children: dict[str, dict[str, JsonObject]] = {root: {}}
    for item in files.values():
        names = item.path.split("/")
        parent = root
        for depth, name in enumerate(names):
            child = parent + "/" + quote(name, safe=_PCHAR)
            if depth == len(names) - 1:
                entry = {"uri": child, "name": name, "mimeType": item.mime_type}
            else:
                children.setdefault(child, {})
                entry = {"uri": child, "name": name, "mimeType": DIRECTORY_MIME_TYPE}
            children[parent].setdefault(child, JsonObject(entry))
            parent = child
    return MappingProxyType(
        {uri: JsonArray(list(entries.values())) for uri, entries in children.items()}
    )

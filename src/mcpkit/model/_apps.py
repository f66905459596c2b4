"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension): a tool names an HTML interface held
in a ``ui://`` resource, which the host renders in a sandboxed frame.

Two declarations, both validated when they are built and both 2026-07-28 only:

* :class:`AppTool` on a tool: the wire ``_meta.ui`` of its ``Tool`` definition
  (``resourceUri``, ``visibility``);
* :class:`AppResource` on an exact ``ui://`` resource: the wire ``_meta.ui`` of the contents a
  ``resources/read`` returns (``csp``, ``permissions``, ``domain``, ``prefersBorder``), whose
  MIME type is ``text/html;profile=mcp-app``.

The CSP lists are checked to be origins because hosts write them into a Content-Security-Policy
header: a path would be silently ignored by some browsers, and a space, ``;`` or quote would
inject another directive.  None of this metadata authorises anything: the host enforces it, and
every ``resources/read`` of a ``ui://`` resource is admitted like any other read.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonObject
from mcpkit.model._checks import absolute_uri
from mcpkit.model._content import BlobResourceContents, EmbeddedResource, TextResourceContents
from mcpkit.model._handlers import Owner
from mcpkit.model._media import parse_media_type
from mcpkit.model._outputs import ResourceOutput
from mcpkit.model._revision import Revision

if TYPE_CHECKING:  # _results imports the package, which imports this module
    from mcpkit.model._results import CompleteResult

__all__ = [
    "APPS_EXTENSION",
    "APP_MIME_TYPE",
    "AppCsp",
    "AppPermission",
    "AppResource",
    "AppTool",
    "AppVisibility",
    "client_supports_apps",
]

APPS_EXTENSION: Final = "io.modelcontextprotocol/ui"
"""The extension identifier a host declares under ``capabilities.extensions``."""
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
"""The MIME type of an App's HTML, exactly as the extension spells it."""
APPS_CAPABILITY: Final = JsonObject({APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}})
"""The server's ``capabilities.extensions`` member on a revision where an App tool is served
(the settings shape the ext-apps SDKs use on both sides)."""
MAX_APP_ORIGINS: Final = 64
"""Origins per CSP list: a policy is a header, and hosts log it for review."""
_MAX_HOST_CHARS: Final = 253  # a DNS name's ceiling (RFC 1035)
_UI_SCHEME: Final = "ui://"
_LABEL: Final = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_NAME: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
# A wildcard only as the whole first label, over at least two labels: *.example.com, never *.com
_WILDCARD: Final = re.compile(rf"\*\.{_LABEL}(?:\.{_LABEL})+")
_ORIGIN: Final = re.compile(r"(https?|wss?)://(\[[0-9A-Fa-f:.]+\]|[^/:\[\]]+)(?::([0-9]{1,5}))?")
_ORIGIN_RULE: Final = (
    "must be an origin, scheme://host[:port] with scheme http, https, ws or wss and nothing "
    "after the host or port (no path, query or credentials); a wildcard may only be the whole "
    "first label, as in https://*.example.com"
)


class AppVisibility(enum.Enum):
    """Who may call an App's tool (the wire ``_meta.ui.visibility`` members)."""

    MODEL = "model"
    """The agent sees and calls the tool."""
    APP = "app"
    """The App calls the tool through its host, from this server only."""


class AppPermission(enum.Enum):
    """A browser capability an App asks for; the host may grant it (Permission Policy)."""

    CAMERA = "camera"
    MICROPHONE = "microphone"
    GEOLOCATION = "geolocation"
    CLIPBOARD_WRITE = "clipboardWrite"


def _fail(where: str, rule: str) -> ConfigurationError:
    return ConfigurationError(f"{where}: {rule}")


def _ui_uri(where: str, uri: object) -> str:
    """A ``ui://`` URI: absolute, ASCII, brace-free, kept exactly."""
    if not isinstance(uri, str):
        raise _fail(where, "must be a str")
    uri = str.__str__(uri)
    if not uri.startswith(_UI_SCHEME) or len(uri) == len(_UI_SCHEME):
        raise _fail(where, "must be a ui:// URI naming the App's resource, as in ui://app/view")
    if not uri.isascii() or "{" in uri or "}" in uri:
        raise _fail(where, "must be ASCII without '{' or '}' (percent-encode)")
    try:
        return absolute_uri(uri)
    except InvalidValueError as error:
        raise _fail(where, error.rule) from None


def _members(where: str, value: object, kind: type[enum.Enum]) -> tuple[enum.Enum, ...]:
    """A list or tuple of distinct ``kind`` members, order kept."""
    if not isinstance(value, list | tuple):
        raise _fail(where, f"must be a list or tuple of {kind.__name__}")
    if not all(isinstance(item, kind) for item in value):
        raise _fail(where, f"every item must be a {kind.__name__} member")
    if len(set(value)) != len(value):
        raise _fail(where, "must not repeat a member")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class AppTool:
    """A tool's App: the ``ui://`` resource that renders its results and who may call it.

    ``visibility`` defaults to both (the extension's default); ``(AppVisibility.APP,)`` keeps
    the tool from the agent's tool list, for calls an interface alone makes, and such a tool
    may leave ``resource_uri`` out.  Refusals are ``ConfigurationError("AppTool.field:
    rule")``.
    """

    resource_uri: str | None = None
    visibility: tuple[AppVisibility, ...] = (AppVisibility.MODEL, AppVisibility.APP)

    def __post_init__(self) -> None:
        visibility = _members("AppTool.visibility", self.visibility, AppVisibility)
        if not visibility:
            raise _fail("AppTool.visibility", "must name at least one of MODEL and APP")
        object.__setattr__(self, "visibility", visibility)
        if self.resource_uri is None:
            if AppVisibility.MODEL in visibility:
                raise _fail(
                    "AppTool.resource_uri",
                    "is required unless visibility=(AppVisibility.APP,) (a tool only an App "
                    "calls needs no interface of its own)",
                )
            return
        object.__setattr__(self, "resource_uri", _ui_uri("AppTool.resource_uri", self.resource_uri))

    def to_json(self) -> JsonObject:
        """The wire ``_meta.ui`` of the tool's definition."""
        members: dict[str, object] = {"visibility": [v.value for v in self.visibility]}
        if self.resource_uri is not None:
            members = {"resourceUri": self.resource_uri, **members}
        return JsonObject(members)


def _origin(where: str, value: object) -> str:
    if not isinstance(value, str):
        raise _fail(where, "must be a str")
    value = str.__str__(value)
    match = _ORIGIN.fullmatch(value) if value.isascii() else None
    if match is None or not _host(match.group(2), wildcard=True):
        raise _fail(where, _ORIGIN_RULE)
    port = match.group(3)
    if port is not None and not 0 < int(port) < 65536:
        raise _fail(where, "the port must be 1 to 65535")
    return value


def _host(host: str, *, wildcard: bool) -> bool:
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        return True
    if len(host) > _MAX_HOST_CHARS:
        return False
    return _HOST_NAME.fullmatch(host) is not None or (
        wildcard and _WILDCARD.fullmatch(host) is not None
    )


def _origins(where: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise _fail(where, "must be a list or tuple of origins")
    if len(value) > MAX_APP_ORIGINS:
        raise _fail(where, f"must hold at most {MAX_APP_ORIGINS} origins")
    origins = tuple(_origin(f"{where}[{index}]", item) for index, item in enumerate(value))
    if len(set(origins)) != len(origins):
        raise _fail(where, "must not repeat an origin")
    return origins


@dataclass(frozen=True, slots=True, kw_only=True)
class AppCsp:
    """The origins an App's HTML may reach; the host builds its Content-Security-Policy from
    them and may restrict further.  An empty list means none (the host's restrictive default).

    ``connect_domains`` (fetch, XHR, WebSocket: ``connect-src``), ``resource_domains``
    (scripts, styles, images, fonts, media), ``frame_domains`` (nested frames: ``frame-src``),
    ``base_uri_domains`` (``base-uri``).  Each entry is an origin ``scheme://host[:port]``.
    """

    connect_domains: tuple[str, ...] = ()
    resource_domains: tuple[str, ...] = ()
    frame_domains: tuple[str, ...] = ()
    base_uri_domains: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for field in ("connect_domains", "resource_domains", "frame_domains", "base_uri_domains"):
            origins = _origins(f"AppCsp.{field}", getattr(self, field))
            object.__setattr__(self, field, origins)

    def to_json(self) -> JsonObject:
        """The wire ``csp`` object: only the non-empty lists."""
        lists = {
            "connectDomains": self.connect_domains,
            "resourceDomains": self.resource_domains,
            "frameDomains": self.frame_domains,
            "baseUriDomains": self.base_uri_domains,
        }
        return JsonObject({name: list(origins) for name, origins in lists.items() if origins})


def _domain(value: object) -> str | None:
    """A host name (``abc.example.com``) or an https origin: hosts differ, the spec leaves the
    form to them, and both are safe to hand to one."""
    if value is None:
        return None
    where = "AppResource.domain"
    if not isinstance(value, str):
        raise _fail(where, "must be a str or None")
    value = str.__str__(value)
    host = value.removeprefix("https://")
    if not value.isascii() or not _host(host, wildcard=False):
        raise _fail(where, "must be a host name such as app.example.com, or https://<host name>")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class AppResource:
    """How a ``ui://`` resource's HTML is to be framed: its CSP origins, the browser
    permissions it asks for, an optional dedicated sandbox ``domain`` (host-specific) and
    whether the host should draw a border (``None`` leaves it to the host).

    The declaration authorises nothing: the HTML must hold no credentials or personal data
    (those belong in authorised tool results).  Refusals are
    ``ConfigurationError("AppResource.field: rule")``.
    """

    csp: AppCsp | None = None
    permissions: tuple[AppPermission, ...] = ()
    domain: str | None = None
    prefers_border: bool | None = None

    def __post_init__(self) -> None:
        if self.csp is not None and not isinstance(self.csp, AppCsp):
            raise _fail("AppResource.csp", "must be an AppCsp or None")
        permissions = _members("AppResource.permissions", self.permissions, AppPermission)
        object.__setattr__(self, "permissions", permissions)
        object.__setattr__(self, "domain", _domain(self.domain))
        if self.prefers_border is not None and not isinstance(self.prefers_border, bool):
            raise _fail("AppResource.prefers_border", "must be a bool or None")

    def to_json(self) -> JsonObject:
        """The wire ``_meta.ui`` of the resource's contents (absent members left out)."""
        members: dict[str, object] = {}
        if self.csp is not None:
            members["csp"] = self.csp.to_json()
        if self.permissions:
            members["permissions"] = {permission.value: {} for permission in self.permissions}
        if self.domain is not None:
            members["domain"] = self.domain
        if self.prefers_border is not None:
            members["prefersBorder"] = self.prefers_border
        return JsonObject(members)


# --- registration rules ----------------------------------------------------------------------

_MODERN_ONLY: Final = (
    "MCP Apps exist only on 2026-07-28: select only Revision.V2026_07_28 (a decorated "
    "operation that inherits an endpoint's default revisions gets just that)"
)


def check_tool_app(owner: Owner, revisions: frozenset[Revision], app: object) -> AppTool | None:
    """A tool's ``app`` option: an ``AppTool`` on a 2026-07-28-only tool, or ``None``."""
    if app is None:
        return None
    if not isinstance(app, AppTool):
        raise owner.fail("app must be an AppTool or None")
    if any(revision.has_handshake for revision in revisions):
        raise owner.fail(f"app: {_MODERN_ONLY}")
    return app


def check_resource_app(
    owner: Owner, revisions: frozenset[Revision], uri: str, app: object, mime_type: str | None
) -> tuple[AppResource | None, str | None]:
    """An exact resource's ``app`` option, and its MIME type (the App type when left out)."""
    if app is None:
        return None, mime_type
    if not isinstance(app, AppResource):
        raise owner.fail("app must be an AppResource or None")
    if any(revision.has_handshake for revision in revisions):
        raise owner.fail(f"app: {_MODERN_ONLY}")
    if not uri.startswith(_UI_SCHEME):
        raise owner.fail("an App's resource must have a ui:// URI, as in ui://app/view")
    if mime_type is not None and mime_type != APP_MIME_TYPE:
        raise owner.fail(f"an App's mime_type is {APP_MIME_TYPE!r}: leave it out")
    return app, APP_MIME_TYPE


# --- reading ---------------------------------------------------------------------------------


def app_contents(result: CompleteResult, uri: str, app: AppResource) -> CompleteResult:
    """``result`` with the App's MIME type and ``_meta.ui`` on each of its contents at ``uri``.

    Raises ``InvalidValueError`` when a handler labelled them otherwise itself: a different
    MIME type, or its own ``ui`` member (the declaration alone says how a frame is built).
    """
    payload = result.payload
    assert isinstance(payload, ResourceOutput)  # the server recognised a resource result
    ui = app.to_json()
    contents: list[TextResourceContents | BlobResourceContents] = []
    for item in payload.contents:
        if item.uri != uri:
            contents.append(item)
            continue
        if item.mime_type not in (None, APP_MIME_TYPE):
            raise InvalidValueError(f"the App's contents must be {APP_MIME_TYPE}")
        meta = dict(item.meta or {})
        if "ui" in meta:
            raise InvalidValueError("the App's contents carry their own _meta.ui")
        meta["ui"] = ui
        if isinstance(item, TextResourceContents):
            contents.append(TextResourceContents(uri=uri, text=item.text,
                                                 mime_type=APP_MIME_TYPE, meta=meta))  # fmt: skip
        else:
            contents.append(BlobResourceContents(uri=uri, blob=item.blob,
                                                 mime_type=APP_MIME_TYPE, meta=meta))  # fmt: skip
    return result.replace(payload=ResourceOutput(contents=tuple(contents)))


def holds_app_html(items: Iterable[object]) -> bool:
    """Whether resource contents or content blocks carry an App's HTML (its MIME type), inline
    or embedded: what a 2025 revision, which has no Apps, must never be sent."""
    for item in items:
        if isinstance(item, EmbeddedResource):
            item = item.resource
        if isinstance(item, TextResourceContents | BlobResourceContents) and (
            item.mime_type == APP_MIME_TYPE
        ):
            return True
    return False


# --- client support --------------------------------------------------------------------------


def client_supports_apps(capabilities: Mapping[str, object]) -> bool:
    """Whether the client declared the Apps extension with the HTML App type: an object at
    ``extensions["io.modelcontextprotocol/ui"]`` whose ``mimeTypes`` is an array of valid
    media types naming ``text/html;profile=mcp-app``.  A malformed declaration is no
    declaration.

    A handler uses it to choose its fallback: the ``_meta.ui`` of tools is published to every
    client, as a client without the extension ignores it (a text-only host still gets the
    tool's content).
    """
    extensions = capabilities.get("extensions")
    settings = extensions.get(APPS_EXTENSION) if isinstance(extensions, Mapping) else None
    types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    if not isinstance(types, Sequence) or isinstance(types, str):
        return False
    found = False
    for text in types:
        try:
            media = parse_media_type(text)
        except InvalidValueError:
            return False
        parameters = {name.lower(): value for name, value in media.parameters}
        found = found or (
            media.type.lower() == "text"
            and media.subtype.lower() == "html"
            and parameters == {"profile": "mcp-app"}
        )
    return found

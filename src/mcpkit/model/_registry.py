"""The endpoint registry: every endpoint a server serves, in a fixed order.

A registry is immutable and ordered: the order is the one the application gave,
so start-up, logs and tests see the same sequence on every run.  Routing is an exact raw-path
lookup: a request path is never decoded, normalised or redirected, so ``/a/mcp`` and
``/a/mcp/`` or ``/a/%6Dcp`` are different (and the latter two can never be declared).
Each endpoint keeps its own catalog and capabilities, so the same operation name on two paths
never leaks between them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Final

from mcpkit.errors import ConfigurationError
from mcpkit.model._endpoint import Endpoint

__all__ = ["ENDPOINT_ATTRIBUTE", "EndpointRegistry"]

ENDPOINT_ATTRIBUTE: Final = "__mcp_endpoint__"
"""Where ``@endpoint`` leaves a class's built ``Endpoint``: the descriptor ``from_classes``
loads."""


class EndpointRegistry:
    """An immutable, ordered, non-empty collection of endpoints with distinct paths.

    Build one with :meth:`from_classes` or :meth:`from_endpoints` and extend it
    with :meth:`with_endpoint`.  ``endpoints`` is the tuple in order
    and :meth:`endpoint_for_path` routes a raw request path.
    """

    __slots__ = ("_by_path", "endpoints")

    endpoints: tuple[Endpoint, ...]
    _by_path: Mapping[str, Endpoint]

    def __init__(self, *_args: object, **_kwargs: object) -> None:
        raise TypeError("EndpointRegistry is built by EndpointRegistry.from_endpoints")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("EndpointRegistry is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("EndpointRegistry is immutable")

    def __repr__(self) -> str:
        count = len(self.endpoints)
        return f"<EndpointRegistry {count} endpoint{'' if count == 1 else 's'}>"

    def __len__(self) -> int:
        return len(self.endpoints)

    def __iter__(self) -> Iterator[Endpoint]:
        return iter(self.endpoints)

    @classmethod
    def from_endpoints(cls, endpoints: Sequence[Endpoint]) -> EndpointRegistry:
        """A registry of ``endpoints`` in the order given.

        ``endpoints`` is a list or tuple (a set has no order to keep); it must hold at least
        one ``Endpoint`` and no two may declare the same exact path.
        """
        if not isinstance(endpoints, list | tuple):
            raise ConfigurationError(
                "EndpointRegistry.from_endpoints: endpoints must be a list or tuple of Endpoint, "
                "in the order to serve them"
            )
        if not endpoints:
            raise ConfigurationError(
                "EndpointRegistry.from_endpoints: a registry needs at least one endpoint"
            )
        by_path: dict[str, Endpoint] = {}
        for index, endpoint in enumerate(endpoints):
            if not isinstance(endpoint, Endpoint):
                raise ConfigurationError(
                    f"EndpointRegistry.from_endpoints: endpoints[{index}] must be an Endpoint, "
                    f"not {type(endpoint).__name__}"
                )
            first = by_path.get(endpoint.path)
            if first is not None:
                raise ConfigurationError(
                    f"EndpointRegistry: {endpoint!r} and {first!r} declare the same path; "
                    "paths must be unique within a registry"
                )
            by_path[endpoint.path] = endpoint
        registry = object.__new__(cls)
        object.__setattr__(registry, "endpoints", tuple(endpoints))
        object.__setattr__(registry, "_by_path", MappingProxyType(by_path))
        return registry

    @classmethod
    def from_classes(cls, *classes: type) -> EndpointRegistry:
        """A registry of the endpoints ``@endpoint`` built for ``classes``, in the order given
        (the explicit allowlist).

        Only the descriptor on the class itself is read (no scanning, no reflection over
        methods); a class without one, a subclass of an endpoint class included, is refused
        rather than served as an empty catalog.
        """
        endpoints: list[Endpoint] = []
        for index, endpoint_class in enumerate(classes):
            if not isinstance(endpoint_class, type):
                raise ConfigurationError(
                    f"EndpointRegistry.from_classes: classes[{index}] must be a class, not "
                    f"{type(endpoint_class).__name__}"
                )
            endpoint = endpoint_class.__dict__.get(ENDPOINT_ATTRIBUTE)
            if not isinstance(endpoint, Endpoint):
                raise ConfigurationError(
                    f"EndpointRegistry.from_classes: {endpoint_class.__module__}."
                    f"{endpoint_class.__qualname__} has no endpoint descriptor; decorate the "
                    "class itself with @mcpkit.endpoint(...)"
                )
            endpoints.append(endpoint)
        return cls.from_endpoints(endpoints)

    def with_endpoint(self, endpoint: Endpoint) -> EndpointRegistry:
        """A new registry with ``endpoint`` appended; this one is unchanged."""
        return EndpointRegistry.from_endpoints((*self.endpoints, endpoint))

    def endpoint_for_path(self, raw_path: str) -> Endpoint | None:
        """The endpoint declared at exactly ``raw_path``, else ``None``: no decoding,
        no case folding, no trailing-slash or dot-segment tolerance."""
        return self._by_path.get(raw_path)

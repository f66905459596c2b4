"""What a server serves now: its endpoints, each with its runtime, swappable while it runs.

An ``Endpoint`` never changes; a catalog changes by swapping a new endpoint in at the same
path.  ``Deployment.swap`` builds the new runtimes (catalog pages included) in the caller's
thread, off every request's path, then replaces each path's runtime with one dictionary
assignment: a request already routed finishes on the runtime it started with, the next one
gets the new runtime, and a request never sees half of each.  Cursors the old catalog issued
name its content, so the new catalog refuses them (-32602) rather than misreading them.
Then every session and listener of the endpoint whose lists actually differ on its revision
is told (``Audience.catalog_changed``).

Engines built from one server (``Server.configured``) share its deployment, so a swap on
either reaches every one of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Final

from mcpkit.errors import ConfigurationError
from mcpkit.model import Endpoint, EndpointRegistry, Revision
from mcpkit.protocol import ListKind
from mcpkit.server._audience import Audience
from mcpkit.server._broadcast import ChangeKind
from mcpkit.server._call import Runtime

__all__ = ["Deployment"]

_KINDS: Final = {
    ListKind.TOOLS: ChangeKind.TOOLS,
    ListKind.PROMPTS: ChangeKind.PROMPTS,
    ListKind.RESOURCES: ChangeKind.RESOURCES,
    ListKind.RESOURCE_TEMPLATES: ChangeKind.RESOURCES,
}


class Deployment:
    """The served endpoints by path, their runtimes (``routes``, read by every request) and
    the audience a swap tells."""

    def __init__(
        self,
        registry: EndpointRegistry,
        build: Callable[[Endpoint], Runtime],
        audience: Audience,
    ) -> None:
        self._build = build
        self._lock = threading.Lock()  # one swap at a time
        self.audience = audience
        self.registry = registry
        self.routes: dict[str, Runtime] = {endpoint.path: build(endpoint) for endpoint in registry}
        """Each endpoint's runtime under its exact path; a swap assigns into this one dict,
        which every engine of the server holds."""

    def swap(self, endpoints: Sequence[Endpoint]) -> None:
        """Serve ``endpoints`` (at distinct paths, as a registry's are) instead of the ones at
        their paths (see the module docstring).  Each must be at a path served now, with the
        same revisions, session revisions and ``listen``: a swap changes what an endpoint
        offers, not how it is reached.  Nothing changes when any of them is refused
        (``ConfigurationError``)."""
        with self._lock:
            for endpoint in endpoints:
                current = self.routes.get(endpoint.path)
                if current is None:
                    raise ConfigurationError(
                        "swap: no endpoint is served at that path; a swap replaces endpoints, "
                        "to serve a new path build a new Server"
                    )
                _same_reach(current.endpoint, endpoint)
            built = [(self.routes[endpoint.path], self._build(endpoint)) for endpoint in endpoints]
            for _, runtime in built:
                self.routes[runtime.endpoint.path] = runtime
            swapped = {runtime.endpoint.path: runtime.endpoint for _, runtime in built}
            self.registry = EndpointRegistry.from_endpoints(
                [swapped.get(endpoint.path, endpoint) for endpoint in self.registry]
            )
        for old, new in built:
            changed = _changed(old, new)
            if changed:
                self.audience.catalog_changed(new.endpoint.path, changed)


def _same_reach(old: Endpoint, new: Endpoint) -> None:
    if new.revisions != old.revisions or new.session_revisions != old.session_revisions:
        raise ConfigurationError(
            "swap: the new endpoint must serve the same revisions and session_revisions as the "
            "one it replaces (clients negotiated them); restart the server to change them"
        )
    if new.listen != old.listen:
        raise ConfigurationError(
            "swap: the new endpoint must keep the listen setting of the one it replaces"
        )


def _changed(old: Runtime, new: Runtime) -> dict[Revision, frozenset[ChangeKind]]:
    """Per revision, the kinds of list whose entries differ between the two runtimes."""
    changed: dict[Revision, frozenset[ChangeKind]] = {}
    for revision in new.endpoint.revisions:
        kinds = frozenset(
            change
            for kind, change in _KINDS.items()
            if old.catalog.fingerprint(revision, kind) != new.catalog.fingerprint(revision, kind)
        )
        if kinds:
            changed[revision] = kinds
    return changed

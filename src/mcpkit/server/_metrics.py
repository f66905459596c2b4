"""Prometheus metrics, written by hand: a small registry with no dependency.

Opt-in (``Server(metrics=True)``): with metrics off nothing is counted, and the request path
pays one attribute test.  With them on, each HTTP message that reaches the pipeline is counted
once it is answered, by three labels whose values come from fixed sets only:

* ``method``: a name of the method table (``METHODS``), a client notification the server
  knows, ``response`` for a client's answer to a server request, or ``other`` (an unknown
  method, or a body that was not a JSON-RPC message);
* ``revision``: the revision's wire string, or ``none`` when the message failed before one
  was chosen;
* ``outcome``: ``OUTCOMES``, from the HTTP status the answer was given (a JSON-RPC error in a
  200 answer, as the 2025 revisions write them, is an ``error``).

No label ever carries what a client sent (a tool name, a URI, an id, a token, an address), so
the series are a fixed, finite set.  Gauges (slots in use, the queue, sessions, listen
streams, running tasks) are read when the exposition is written.  The exposition is the
Prometheus text format 0.0.4.

Everything here runs on the event loop, so the counts are plain ints without a lock.

Under ``mcpkit serve --workers N`` each process counts its own messages, and a scrape of any
of them must report all of them: a ``Snapshot`` is one process's counts and gauges, small
(the label sets are fixed) and encoded as JSON for the other processes to read, and
``Metrics.shared`` (set by the serving layer, ``None`` in one process) hands the scrape the
other processes' snapshots to sum with its own.  The request path never touches any of it.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

from mcpkit.errors import ConfigurationError
from mcpkit.model import Revision
from mcpkit.protocol import Envelope, MessageKind
from mcpkit.server._listen import Listener
from mcpkit.server._operations import METHODS
from mcpkit.server._rate_limit import RateLimitTarget
from mcpkit.server._stream import Responder

__all__ = [
    "BUCKETS",
    "CONTENT_TYPE",
    "HEALTH_PATHS",
    "OUTCOMES",
    "SNAPSHOT_LIMIT",
    "MeteredResponder",
    "Metrics",
    "MetricsShare",
    "Snapshot",
    "method_label",
    "metrics_path",
    "outcome_index",
]

CONTENT_TYPE: Final = b"text/plain; version=0.0.4; charset=utf-8"
DEFAULT_PATH: Final = "/metrics"
HEALTH_PATHS: Final = ("/healthz", "/readyz")
"""The liveness and readiness routes of ``Server(health=True)``: fixed paths."""

BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""The latency histogram's upper bounds in seconds; ``+Inf`` follows."""
_BOUNDS: Final = (*(repr(bound) for bound in BUCKETS), "+Inf")

OUTCOMES: Final = (
    "ok",
    "error",
    "unauthorized",
    "rate_limited",
    "overloaded",
    "timeout",
    "cancelled",
)
"""``ok``: a result, an accepted notification or response, an opened listen stream;
``unauthorized``: 401 or 403; ``rate_limited``: 429; ``overloaded``: 503 (a full queue, a
stopping server); ``timeout``: 504; ``cancelled``: no answer (the client left, or cancelled
the request); ``error``: any other answer (a JSON-RPC error)."""

_OK: Final = 0
_ERROR_OUTCOME: Final = 1
_CANCELLED: Final = 6
_BY_STATUS: Final = {401: 2, 403: 2, 429: 3, 503: 4, 504: 5}
"""The index in ``OUTCOMES`` of a status that has an outcome of its own."""
_CLIENT_NOTIFICATIONS: Final = (
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/roots/list_changed",
)
_NAMED: Final[Mapping[str | None, str]] = {
    name: name for name in (*(method.name for method in METHODS), *_CLIENT_NOTIFICATIONS)
}
"""The methods whose name is their label (every other one is ``other``)."""
METHOD_LABELS: Final = frozenset({*_NAMED.values(), "response", "other"})
"""Every value the ``method`` label can take."""
REVISION_LABELS: Final = frozenset({revision.wire for revision in Revision} | {"none"})
"""Every value the ``revision`` label can take."""
_RESULT: Final = b',"result":'
_ERROR: Final = b',"error":'
_SESSION_HEADER: Final = b"mcp-session-id"
_PATH: Final = re.compile(r"/[A-Za-z0-9._~!$&'()*+,;=:@/-]*", re.ASCII)

_REQUESTS: Final = "mcpkit_requests_total"
_DURATION: Final = "mcpkit_request_duration_seconds"
_DENIALS: Final = "mcpkit_rate_limit_denials_total"

GAUGES: Final = {
    "mcpkit_handler_slots_busy": "Handler slots in use, work abandoned but not yet exited "
    "included.",
    "mcpkit_queued_requests": "Requests waiting for a handler slot.",
    "mcpkit_sessions": "Open 2025 sessions (with the built-in session store).",
    "mcpkit_listen_streams": "Open subscriptions/listen streams.",
    "mcpkit_tasks_running": "Tasks whose work runs in this process.",
}
"""The gauges, by name, with their help text: read when the exposition is written."""

SNAPSHOT_LIMIT: Final = 1 << 20
"""The most bytes an encoded ``Snapshot`` may have: every (method, revision) series at once
takes a few tens of KiB, so this bounds what a reader accepts with room to spare."""
_TARGETS: Final = tuple(target.value for target in RateLimitTarget)
_MAX_SERIES: Final = len(METHOD_LABELS) * len(REVISION_LABELS)


def metrics_path(value: object) -> str | None:
    """The path ``Server(metrics=...)`` serves the exposition at: ``/metrics`` for ``True``,
    the path given, or ``None`` (off) for ``False``."""
    if value is False or value is None:
        return None
    if value is True:
        return DEFAULT_PATH
    if not isinstance(value, str) or _PATH.fullmatch(value) is None:
        raise ConfigurationError(
            "metrics must be True, False or a path such as '/metrics' (ASCII, no query)"
        )
    if value.startswith("/.well-known/"):
        raise ConfigurationError("metrics: a path under /.well-known/ is not the server's to use")
    return value


def method_label(envelope: Envelope | None) -> str:
    """The ``method`` label of a message (``METHOD_LABELS``): its method when the server
    knows it, ``response`` for a client's answer, else ``other`` (an unknown method, or a body
    that was not a JSON-RPC message: ``None``).  Never a name only the client chose."""
    if envelope is None:
        return "other"
    if envelope.kind is MessageKind.RESPONSE:
        return "response"
    return _NAMED.get(envelope.method, "other")


def outcome_index(responder: MeteredResponder) -> int:
    """The index in ``OUTCOMES`` of what ``responder`` wrote (0 is ``ok``)."""
    status = responder.status
    if status is None:
        return _CANCELLED
    if 200 <= status < 300:
        return _ERROR_OUTCOME if responder.failed else _OK
    return _BY_STATUS.get(status, _ERROR_OUTCOME)


class _Series:
    """The counts of one (method, revision): by outcome, and by latency bucket."""

    __slots__ = ("buckets", "outcomes", "total")

    def __init__(self) -> None:
        self.outcomes = [0] * len(OUTCOMES)
        self.buckets = [0] * (len(BUCKETS) + 1)  # per bucket, not cumulative; the last is +Inf
        self.total = 0.0

    def copy(self) -> _Series:
        series = _Series()
        series.outcomes = list(self.outcomes)
        series.buckets = list(self.buckets)
        series.total = self.total
        return series

    def add(self, other: _Series) -> None:
        for index, count in enumerate(other.outcomes):
            self.outcomes[index] += count
        for index, count in enumerate(other.buckets):
            self.buckets[index] += count
        self.total += other.total


class Snapshot:
    """One process's counts and gauges, to be summed with other processes' (``--workers``):
    ``series`` by (method, revision), ``denials`` by target value (every target), ``gauges``
    by name (the ones the process reports)."""

    __slots__ = ("denials", "gauges", "series")

    def __init__(
        self,
        series: dict[tuple[str, str], _Series],
        denials: dict[str, int],
        gauges: dict[str, int],
    ) -> None:
        self.series = series
        self.denials = denials
        self.gauges = gauges

    def encode(self) -> bytes:
        """The snapshot as compact JSON, for ``decode`` in another process."""
        document = {
            "series": [
                [method, revision, counts.outcomes, counts.buckets, counts.total]
                for (method, revision), counts in sorted(self.series.items())
            ],
            "denials": self.denials,
            "gauges": self.gauges,
        }
        return json.dumps(document, separators=(",", ":")).encode("ascii")

    @classmethod
    def decode(cls, data: bytes) -> Snapshot:
        """The snapshot ``encode`` wrote; ``ValueError`` for anything else.  Only the fixed
        label values, targets and gauge names are accepted, so what one process reads from
        another can never add a series."""
        if len(data) > SNAPSHOT_LIMIT:
            raise ValueError("metrics snapshot: too large")
        try:
            document = json.loads(data, parse_constant=_no_constant)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ValueError("metrics snapshot: not JSON") from None
        if not isinstance(document, dict) or document.keys() != {"series", "denials", "gauges"}:
            raise ValueError("metrics snapshot: not a snapshot")
        items, denials, gauges = document["series"], document["denials"], document["gauges"]
        if not isinstance(items, list) or len(items) > _MAX_SERIES:
            raise ValueError("metrics snapshot: bad series")
        series: dict[tuple[str, str], _Series] = {}
        for item in items:
            key, counts = _decoded_series(item)
            if key in series:
                raise ValueError("metrics snapshot: a series twice")
            series[key] = counts
        if not isinstance(denials, dict) or denials.keys() != set(_TARGETS):
            raise ValueError("metrics snapshot: bad denials")
        if not isinstance(gauges, dict) or not gauges.keys() <= GAUGES.keys():
            raise ValueError("metrics snapshot: bad gauges")
        return cls(
            series,
            {target: _count(denials[target]) for target in _TARGETS},
            {name: _count(value) for name, value in gauges.items()},
        )


def _no_constant(name: str) -> object:
    raise ValueError("metrics snapshot: not a number")


def _count(value: object) -> int:
    if type(value) is not int or value < 0:
        raise ValueError("metrics snapshot: not a count")
    return value


def _decoded_series(item: object) -> tuple[tuple[str, str], _Series]:
    if not isinstance(item, list) or len(item) != 5:
        raise ValueError("metrics snapshot: bad series")
    method, revision, outcomes, buckets, total = item
    if method not in METHOD_LABELS or revision not in REVISION_LABELS:
        raise ValueError("metrics snapshot: unknown labels")
    counts = _Series()
    if not isinstance(outcomes, list) or len(outcomes) != len(counts.outcomes):
        raise ValueError("metrics snapshot: bad outcomes")
    if not isinstance(buckets, list) or len(buckets) != len(counts.buckets):
        raise ValueError("metrics snapshot: bad buckets")
    if type(total) not in (int, float) or not (math.isfinite(total) and total >= 0):
        raise ValueError("metrics snapshot: bad sum")
    counts.outcomes = [_count(value) for value in outcomes]
    counts.buckets = [_count(value) for value in buckets]
    counts.total = float(total)
    return (method, revision), counts


class MetricsShare(Protocol):
    """Where a process's metrics meet the other processes' (``mcpkit serve --workers``)."""

    def exchange(self, own: Snapshot) -> list[Snapshot]:
        """Publish ``own`` (so that no count reported now can be lost later), and return the
        other processes' latest snapshots."""
        ...


def _merged(snapshots: Sequence[Snapshot]) -> Snapshot:
    """The sum of ``snapshots``: counts by series and target, gauges by name."""
    series: dict[tuple[str, str], _Series] = {}
    denials = dict.fromkeys(_TARGETS, 0)
    gauges: dict[str, int] = {}
    for snapshot in snapshots:
        for key, counts in snapshot.series.items():
            found = series.get(key)
            if found is None:
                series[key] = counts.copy()
            else:
                found.add(counts)
        for target, count in snapshot.denials.items():
            denials[target] += count
        for name, value in snapshot.gauges.items():
            gauges[name] = gauges.get(name, 0) + value
    return Snapshot(series, denials, gauges)


class Metrics:
    """One server's counters and histograms (see the module docstring)."""

    __slots__ = ("_denials", "_series", "shared")

    def __init__(self) -> None:
        self._series: dict[tuple[str, str], _Series] = {}
        self._denials = dict.fromkeys(RateLimitTarget, 0)
        self.shared: MetricsShare | None = None
        """The other processes of ``mcpkit serve --workers``, whose counts the exposition
        adds to this one's; ``None`` for a server of its own."""

    def observe(
        self, responder: MeteredResponder, revision: Revision | None, seconds: float
    ) -> None:
        """Count one answered message (what ``responder`` wrote for it) and its latency."""
        method = method_label(responder.envelope)
        outcome = outcome_index(responder)
        key = (method, "none" if revision is None else revision.wire)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = _Series()
        series.outcomes[outcome] += 1
        series.buckets[bisect.bisect_left(BUCKETS, seconds)] += 1
        series.total += seconds

    def denied(self, target: RateLimitTarget) -> None:
        """Count one rate-limit denial."""
        self._denials[target] += 1

    def snapshot(self, gauges: Mapping[str, int | None]) -> Snapshot:
        """The counts now, with ``gauges`` (``None`` values left out).  It shares this
        object's series: encode it or sum it before the next count."""
        return Snapshot(
            self._series,
            {target.value: count for target, count in self._denials.items()},
            {name: value for name, value in gauges.items() if value is not None},
        )

    def restore(self, snapshot: Snapshot) -> None:
        """Count on from ``snapshot``: a worker that replaces one that died takes over its
        counts, so that the totals of all workers never go backwards."""
        self._series = {key: counts.copy() for key, counts in snapshot.series.items()}
        self._denials = {target: snapshot.denials[target.value] for target in RateLimitTarget}

    def exposition(self, gauges: Mapping[str, int | None]) -> bytes:
        """The text exposition (format 0.0.4) of everything counted, with ``gauges`` (a name
        of ``GAUGES`` to its value; ``None`` leaves the gauge out): this process's alone, or
        summed with the other processes' snapshots when it has a ``shared``."""
        total = self.snapshot(gauges)
        if self.shared is not None:
            total = _merged([total, *self.shared.exchange(total)])
        lines: list[str] = []
        series = sorted(total.series.items())
        _family(
            lines, _REQUESTS, "counter", "MCP messages answered, by method, revision and outcome."
        )
        for (method, revision), counts in series:
            for result, count in zip(OUTCOMES, counts.outcomes, strict=True):
                if count:
                    labels = _labels(
                        ("method", method), ("revision", revision), ("outcome", result)
                    )
                    lines.append(f"{_REQUESTS}{labels} {count}")
        _family(
            lines,
            _DURATION,
            "histogram",
            "Seconds from a message's arrival to its answer (a listen stream: its whole life).",
        )
        for (method, revision), counts in series:
            base = (("method", method), ("revision", revision))
            running = 0
            for bound, count in zip(_BOUNDS, counts.buckets, strict=True):
                running += count
                lines.append(f"{_DURATION}_bucket{_labels(*base, ('le', bound))} {running}")
            lines.append(f"{_DURATION}_sum{_labels(*base)} {counts.total!r}")
            lines.append(f"{_DURATION}_count{_labels(*base)} {running}")
        _family(lines, _DENIALS, "counter", "Messages denied by a rate limiter, by target.")
        for target, count in total.denials.items():
            lines.append(f"{_DENIALS}{_labels(('target', target))} {count}")
        for name, help_text in GAUGES.items():
            value = total.gauges.get(name)
            if value is not None:
                _family(lines, name, "gauge", help_text)
                lines.append(f"{name} {value}")
        lines.append("")
        return "\n".join(lines).encode("utf-8")


def _family(lines: list[str], name: str, kind: str, help_text: str) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} {kind}")


def _labels(*pairs: tuple[str, str]) -> str:
    inner = ",".join(f'{name}="{_escaped(value)}"' for name, value in pairs)
    return "{" + inner + "}"


def _escaped(value: str) -> str:
    """A label value as the text format writes it (the values are fixed, but still)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class MeteredResponder(Responder):
    """A ``Responder`` that notes what it was given to write, for ``Metrics.observe``: the
    message, the status of its answer, and whether that answer is an error.  (No slots of its
    own: the class attributes are the defaults, so it needs no ``__init__``.)"""

    envelope: Envelope | None = None
    """The message (``opened``); ``None`` when the body was not one."""
    status: int | None = None
    """The status of the answer; ``None`` when none was written (the client left)."""
    failed = False
    """The answer is a JSON-RPC error (with a 2xx ``status``: the 2025 revisions' errors)."""
    session: str | None = None
    """The id of the session ``initialize`` opened (its ``Mcp-Session-Id`` answer header),
    for the traces (``_tracing``)."""

    def header(self, name: bytes, value: bytes) -> None:
        if name == _SESSION_HEADER:
            self.session = value.decode("latin-1")
        super().header(name, value)

    def opened(self, envelope: Envelope) -> None:
        self.envelope = envelope

    async def refuse(
        self, status: int, message: bytes | None, extra: Sequence[tuple[bytes, bytes]] = ()
    ) -> None:
        self.status = status
        self.failed = True  # a refusal is never a result
        await super().refuse(status, message, extra)

    async def accepted(self) -> None:
        self.status = 202
        await super().accepted()

    async def finish(self, status: int, message: bytes) -> None:
        self.status = status
        if status == 200:  # a result, or an error as the 2025 revisions write most of them
            # The member after the id: neither ``,"result":`` nor ``,"error":`` can occur inside
            # an encoded id (a quote in a string is escaped), so the first found is the message's.
            result = message.find(_RESULT)
            self.failed = result < 0 or message.find(_ERROR, 0, result) >= 0
        await super().finish(status, message)

    async def listen(self, listener: Listener) -> None:
        self.status = 200
        await super().listen(listener)

    async def abandon(self) -> None:
        self.status = None
        await super().abandon()

    def crashed(self) -> None:
        """The pipeline raised: whatever was written, the message failed."""
        self.status = 500

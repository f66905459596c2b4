"""``RedisBroadcaster``: change events fanned out to every node through Redis pub/sub.

Every node PUBLISHes its changes on one channel and SUBSCRIBEs to it, so each change reaches
every node's receivers (never one competing consumer), the publishing node's included: a node
hears its own changes back through Redis, never locally as well, so each receiver is told of
each change once.

Two daemon threads per broadcaster, started by the first ``attach``, talk to Redis with the
synchronous client; ``publish`` only encodes the change and appends it to a bounded queue,
so it never waits on the network (it is called on the event loop and in handler threads).
A full queue drops the change and counts it (``dropped``).  Changes are sent only while
this node's own subscription is live, so the node hears its own changes too; until then they
wait in the queue.  When Redis is unreachable both threads retry with capped exponential
backoff; the subscriber subscribes again once it is back.  A subscription whose health check
(a ``PING`` after 10 s without a message) is not answered within the socket timeout (5 s) is
given up as lost too: Redis hung, or the connection died without a word.  Pub/sub keeps
nothing for an absent subscriber: changes published while another node's subscription is
down never reach that node (a change is a hint, and listeners look afresh).  A publish that
failed mid-way is sent again, so in that rare case a change may arrive twice.

The wire form is a small JSON object of plain strings, versioned:
``{"v": 1, "kind": "notifications/resources/updated", "uri": "..."}`` (``path``, ``uri`` and
``task`` only when set).  A message that is not exactly that is ignored and counted
(``ignored``), never raised.

The ``redis`` client is an optional extra, imported only here and only when a broadcaster is
built.  The URL's password (in its user part or its query) never appears in a log or repr.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from mcpkit.errors import ConfigurationError, ParseError
from mcpkit.json import JsonObject, decode, encode
from mcpkit.server._broadcast import Change, ChangeKind, Receiver
from mcpkit.server._redis_client import require_redis

if TYPE_CHECKING:
    import redis

__all__ = ["RedisBroadcaster"]

log = logging.getLogger("mcpkit.server")

VERSION: Final = 1
"""The wire form's version (``"v"``); a message of another version is ignored."""
_REQUIRED: Final = frozenset({"v", "kind"})
_OPTIONAL: Final = ("path", "uri", "task")
_KINDS: Final = {kind.value: kind for kind in ChangeKind}

FIRST_DELAY: Final = 0.1
"""Seconds before the first retry once Redis is unreachable; doubled each failure..."""
MAX_DELAY: Final = 5.0
"""...up to this."""
_POLL: Final = 0.1
"""How long the subscriber waits for a message before it looks at ``close`` again."""
_CONNECT_TIMEOUT: Final = 2.0
_SOCKET_TIMEOUT: Final = 5.0
_HEALTH_CHECK: Final = 10.0

PUBLISHER_THREAD: Final = "mcpkit-redis-broadcast-publish"
SUBSCRIBER_THREAD: Final = "mcpkit-redis-broadcast-subscribe"


def encode_change(change: Change) -> bytes:
    """The wire form of ``change``."""
    message: dict[str, object] = {"v": VERSION, "kind": change.kind.value}
    for name in _OPTIONAL:
        value = getattr(change, name)
        if value is not None:
            message[name] = value
    return encode(message)


def decode_change(data: bytes) -> Change | None:
    """The change ``data`` carries, or ``None`` when it is not exactly a change of this
    version: not JSON, not an object, a missing or unknown member, a member of the wrong
    type, an unknown kind."""
    try:
        message = decode(data)
    except ParseError:
        return None
    if not isinstance(message, JsonObject) or not message.keys() >= _REQUIRED:
        return None
    version, kind = message["v"], message["kind"]
    if type(version) is not int or version != VERSION or not isinstance(kind, str):
        return None
    if kind not in _KINDS:  # after the str check: an object member is unhashable
        return None
    extra = {name: value for name, value in message.items() if name not in _REQUIRED}
    texts = {n: v for n, v in extra.items() if n in _OPTIONAL and isinstance(v, str)}
    if len(texts) != len(extra):  # an unknown member, or one that is not a string
        return None
    return Change(
        _KINDS[kind], path=texts.get("path"), uri=texts.get("uri"), task=texts.get("task")
    )


def redacted(url: str) -> str:
    """``url`` without its user part and query (where a password may be): scheme, host,
    port and path only."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


class RedisBroadcaster:
    """A broadcaster for a deployment of several nodes: every change published on any node
    reaches every receiver attached on every node, through Redis pub/sub on ``channel``.

    ``url`` is a redis-py connection URL (``redis://[[user]:password@]host:port/db``,
    ``rediss://`` for TLS, ``unix:///path``).  ``publish`` never waits: changes queue (at
    most ``max_pending``, then they are dropped and counted in ``dropped``) for a background
    thread that sends them while this node's subscription is live; another background
    thread receives every node's changes and calls the receivers.  Both start with the first
    ``attach`` and retry with backoff while Redis is unreachable; ``connected`` says whether
    the subscription is live.  ``close()`` (or leaving a ``with`` block) stops them.  Needs
    the ``redis`` extra (``pip install 'mcpkit[redis]'``).
    """

    def __init__(
        self, url: str, *, channel: str = "mcpkit:changes", max_pending: int = 10_000
    ) -> None:
        if not isinstance(url, str):
            raise TypeError("RedisBroadcaster: url must be a str")
        if not isinstance(channel, str) or not channel:
            raise ConfigurationError("RedisBroadcaster: channel must be a non-empty str")
        if type(max_pending) is not int or max_pending < 1:
            raise ConfigurationError("RedisBroadcaster: max_pending must be an int of at least 1")
        require_redis("RedisBroadcaster")
        self._where = redacted(url)
        self._publisher = _client(url)
        self._subscriber = _client(url)
        self._channel = channel
        self._max_pending = max_pending
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._receivers: tuple[Receiver, ...] = ()
        self._pending: collections.deque[bytes] = collections.deque()
        self._threads: tuple[threading.Thread, ...] = ()
        self._closed = False
        self._dropping = False  # inside a burst of drops (logged once, at its start)
        self._dropped = 0
        self._ignored = 0
        self._connected = False

    def __repr__(self) -> str:
        state = "live" if self._connected else "not connected"
        return f"<RedisBroadcaster {self._where} {self._channel!r} {state}>"

    def __enter__(self) -> RedisBroadcaster:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        """Whether the subscription to the channel is live."""
        return self._connected

    @property
    def dropped(self) -> int:
        """Changes never sent: published while the queue was full, or after ``close``, or
        still queued when ``close`` found Redis unreachable."""
        return self._dropped

    @property
    def ignored(self) -> int:
        """Messages on the channel that were not a change of this version."""
        return self._ignored

    @property
    def pending(self) -> int:
        """Changes queued, not yet sent."""
        return len(self._pending)

    # --- the Broadcaster protocol -----------------------------------------------------------

    def publish(self, change: Change) -> None:
        """Queue ``change`` for every node, this one's included; never waits."""
        data = encode_change(change)
        with self._lock:
            if self._closed:
                self._dropped += 1
                return
            if len(self._pending) < self._max_pending:
                self._pending.append(data)
                self._dropping = False
                self._ready.notify()
                return
            self._dropped += 1
            first = not self._dropping
            self._dropping = True
        if first:
            log.warning(
                "RedisBroadcaster: %d changes queued for Redis at %s; dropping changes",
                self._max_pending,
                self._where,
            )

    def attach(self, receiver: Receiver) -> None:
        with self._lock:
            if self._closed:
                raise ConfigurationError("RedisBroadcaster: closed; attach to a new one")
            if receiver not in self._receivers:
                self._receivers = (*self._receivers, receiver)
            if not self._threads:
                self._threads = (
                    threading.Thread(target=self._publishing, name=PUBLISHER_THREAD, daemon=True),
                    threading.Thread(target=self._subscribing, name=SUBSCRIBER_THREAD, daemon=True),
                )
                for thread in self._threads:
                    thread.start()

    def detach(self, receiver: Receiver) -> None:
        with self._lock:
            self._receivers = tuple(r for r in self._receivers if r != receiver)

    def close(self, timeout: float = 5.0) -> None:
        """Stop both threads (changes still queued are sent first while Redis answers),
        waiting at most ``timeout`` seconds for them.  Later changes are dropped, and a
        later ``attach`` is refused: a closed broadcaster is not started again."""
        self._stopping.set()  # first: a publisher woken by the close sees it
        with self._lock:
            self._closed = True
            self._ready.notify_all()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            if thread is not threading.current_thread():  # closed by a receiver: no self-join
                thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            if not self._threads:  # never attached: what was published was never sent
                self._dropped += len(self._pending)
                self._pending.clear()
        self._publisher.close()
        self._subscriber.close()

    # --- the threads --------------------------------------------------------------------

    def _publishing(self) -> None:
        delay = FIRST_DELAY
        failing = False
        while True:
            with self._lock:
                # only while this node's own subscription is live, so it hears its own
                # changes too (pub/sub keeps nothing for a subscriber not yet there)
                while not self._closed and not (self._pending and self._connected):
                    self._ready.wait()
                if not self._pending:
                    return  # closed, nothing left
                data = self._pending[0]
            try:
                self._publisher.publish(self._channel, data)
            except Exception as error:
                if self._stopping.is_set():
                    break
                if not failing:
                    failing = True
                    log.warning(
                        "RedisBroadcaster: publishing to Redis at %s failed (%s); retrying",
                        self._where,
                        type(error).__name__,
                    )
                self._stopping.wait(delay)
                delay = min(delay * 2, MAX_DELAY)
                continue
            with self._lock:
                self._pending.popleft()
            if failing:
                failing = False
                log.info("RedisBroadcaster: publishing to Redis at %s again", self._where)
            delay = FIRST_DELAY
        with self._lock:  # closing while Redis does not answer: what is left is dropped
            self._dropped += len(self._pending)
            self._pending.clear()

    def _subscribing(self) -> None:
        delay = FIRST_DELAY
        lost = False
        while not self._stopping.is_set():
            pubsub = self._subscriber.pubsub()  # type: ignore[no-untyped-call]
            try:
                pubsub.subscribe(self._channel)
                while not self._stopping.is_set():
                    message = pubsub.get_message(timeout=_POLL)
                    if message is None:
                        _check_answering(pubsub)
                        continue
                    if message["type"] == "message":
                        self._deliver(message["data"])
                        continue
                    # the subscription's confirmation: live, and the publisher may send
                    with self._lock:
                        self._connected = True
                        self._ready.notify_all()
                    delay = FIRST_DELAY
                    if lost:
                        lost = False
                        log.info("RedisBroadcaster: subscribed to Redis at %s again", self._where)
            except Exception as error:
                self._connected = False
                if not lost:
                    lost = True
                    log.warning(
                        "RedisBroadcaster: no subscription at Redis at %s (%s); retrying",
                        self._where,
                        type(error).__name__,
                    )
                self._stopping.wait(delay)
                delay = min(delay * 2, MAX_DELAY)
            finally:
                pubsub.close()
        self._connected = False

    def _deliver(self, data: bytes) -> None:
        change = decode_change(data)
        if change is None:
            with self._lock:
                self._ignored += 1
            return
        for receiver in self._receivers:  # a tuple replaced whole: no lock to read it
            try:
                receiver(change)
            except Exception:
                log.exception("RedisBroadcaster: a receiver failed")


def _check_answering(pubsub: Any) -> None:
    """Raise ``TimeoutError`` once the subscription's health check (a ``PING``, sent when
    nothing was read for ``_HEALTH_CHECK``) has gone unanswered for ``_SOCKET_TIMEOUT``: a hung
    Redis, or a connection that died without a word, would otherwise leave the subscription
    waiting, ``connected``, for as long as the kernel keeps the connection."""
    if time.monotonic() > pubsub.connection.next_health_check + _SOCKET_TIMEOUT:
        raise TimeoutError("Redis does not answer the subscription's health check")


def _client(url: str) -> redis.Redis:
    """A client for ``url`` that tries once (the broadcaster's threads retry, with backoff);
    a malformed URL is a ``ConfigurationError`` that does not repeat it."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    options: dict[str, Any] = {
        "socket_connect_timeout": _CONNECT_TIMEOUT,
        "socket_timeout": _SOCKET_TIMEOUT,
        "health_check_interval": _HEALTH_CHECK,
        "retry": Retry(NoBackoff(), 0),
    }
    try:
        return redis.Redis.from_url(url, **options)
    except (ValueError, TypeError):
        raise ConfigurationError(
            "RedisBroadcaster: url must be a redis://, rediss:// or unix:// URL"
        ) from None

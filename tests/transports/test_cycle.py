"""The guarded connection's request/response cycle and its outbox, driven through the protocol
on a fake transport: what reaches the client for each way an ASGI app can answer, fail or be
left, and that every byte of a connection keeps its order."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from mcpkit import Limits
from mcpkit.transports._connections import BAD_REQUEST, GuardedProtocol, guarded_protocol
from mcpkit.transports._cycle import _DEFAULTS, INTERNAL_ERROR, _Defaults
from mcpkit.transports._outbox import HOLD_BYTES, Outbox, outbox_for

from .fakes import FakeTransport

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Script = Callable[[dict[str, Any], Receive, Send], Awaitable[Any]]


def connect(app: Script, *, access_log: bool = False) -> tuple[GuardedProtocol, FakeTransport]:
    config = uvicorn.Config(app, lifespan="off", log_config=None, access_log=False)
    protocol = guarded_protocol(Limits())(config, ServerState(), {}, asyncio.get_running_loop())
    protocol.access_log = access_log
    transport = FakeTransport()
    protocol.connection_made(transport)
    return protocol, transport


def post(body: bytes = b"", *, extra: bytes = b"", version: bytes = b"1.1") -> bytes:
    return (
        b"POST /mcp HTTP/" + version + b"\r\nHost: x\r\n" + extra
        + b"Content-Length: %d\r\n\r\n" % len(body) + body
    )  # fmt: skip


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def served(app: Script, request: bytes, **options: Any) -> tuple[bytes, FakeTransport]:
    """What a connection wrote for ``request`` answered by ``app``, once all has settled."""

    async def scenario() -> tuple[bytes, FakeTransport]:
        protocol, transport = connect(app, **options)
        protocol.data_received(request)
        await settle()
        protocol.connection_lost(None)
        return bytes(transport.written), transport

    return asyncio.run(scenario())


def head_of(written: bytes) -> list[bytes]:
    return written.partition(b"\r\n\r\n")[0].split(b"\r\n")


async def start(send: Send, status: int = 200, headers: Any = ()) -> None:
    await send({"type": "http.response.start", "status": status, "headers": list(headers)})


async def body(send: Send, data: bytes = b"", more: bool = False) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": more})


# --- responses ----------------------------------------------------------------------------------


def test_a_response_of_declared_length_is_written_whole_in_one_write() -> None:
    async def app(scope: Any, receive: Receive, send: Send) -> None:
        await start(send, headers=[(b"content-type", b"text/plain"), (b"content-length", b"5")])
        await body(send, b"he", more=True)  # held: the head waits for it
        await body(send, b"llo")

    written, transport = served(app, post())
    lines = head_of(written)
    assert lines == [b"HTTP/1.1 200 OK", b"content-type: text/plain", b"content-length: 5"]
    assert written.endswith(b"\r\n\r\nhello") and transport.writes == 1


def test_a_streamed_response_gets_its_head_at_once_then_chunks() -> None:
    gate = asyncio.Event

    async def scenario() -> None:
        opened = gate()

        async def app(scope: Any, receive: Receive, send: Send) -> None:
            await start(send, headers=[(b"content-type", b"text/event-stream")])
            await opened.wait()
            await body(send, b"abc", more=True)
            await body(send, b"", more=True)  # nothing to frame
            await body(send, b"")

        protocol, transport = connect(app)
        protocol.data_received(post())
        await settle()
        assert b"transfer-encoding: chunked" in head_of(bytes(transport.written))
        assert transport.written.endswith(b"\r\n\r\n")  # the head alone, before any event
        opened.set()
        await settle()
        assert transport.written.endswith(b"\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        assert protocol.cycle.response_complete
        protocol.connection_lost(None)

    asyncio.run(scenario())


def test_header_names_are_lower_cased_and_the_framing_fields_read() -> None:
    async def app(scope: Any, receive: Receive, send: Send) -> None:
        fields = [
            (b"Content-Length", b"2"),
            (b"X-Mixed", b"Value"),
            (b"content-length", b"99"),  # a second one is not the framing
        ]
        await start(send, headers=fields)
        await body(send, b"ok")

    written, _ = served(app, post())
    assert head_of(written)[1:] == [b"content-length: 2", b"x-mixed: Value", b"content-length: 99"]
    assert written.endswith(b"\r\n\r\nok")


@pytest.mark.parametrize(
    "field",
    [
        (b"x-bad", b"a\r\nset-cookie: b"),  # a field smuggled into a value
        (b"bad name", b"x"),
        (b"x-nul", b"a\x00b"),
        (b"", b"x"),
    ],
)
def test_a_field_not_allowed_is_answered_500_and_never_written(field: tuple[bytes, bytes]) -> None:
    async def app(scope: Any, receive: Receive, send: Send) -> None:
        await start(send, headers=[(b"content-length", b"2"), field])
        await body(send, b"ok")

    written, transport = served(app, post())
    assert written == INTERNAL_ERROR and transport.closing


def test_transfer_encoding_chunked_from_the_app_wins_over_a_later_length() -> None:
    async def app(scope: Any, receive: Receive, send: Send) -> None:
        await start(send, headers=[(b"transfer-encoding", b"Chunked"), (b"content-length", b"3")])
        await body(send, b"abc")

    written, _ = served(app, post())
    assert written.endswith(b"\r\n\r\n3\r\nabc\r\n0\r\n\r\n")


def test_other_framing_fields_from_the_app_change_nothing() -> None:
    async def app(scope: Any, receive: Receive, send: Send) -> None:
        fields = [(b"transfer-encoding", b"gzip"), (b"connection", b"keep-alive")]
        await start(send, headers=[*fields, (b"content-length", b"2")])
        await body(send, b"ok")

    async def scenario() -> None:
        protocol, transport = connect(app)
        protocol.data_received(post())
        await settle()
        assert transport.written.endswith(b"\r\n\r\nok") and not transport.closing
        protocol.connection_lost(None)

    asyncio.run(scenario())


def test_connection_close_from_the_app_closes_once_the_response_is_out() -> None:
    async def app(scope: Any, receive: Receive, send: Send) -> None:
        fields = [(b"content-length", b"2"), (b"Connection", b"keep-alive, Close")]
        await start(send, headers=fields)
        await body(send, b"ok")

    written, transport = served(app, post())
    assert head_of(written).count(b"connection: keep-alive, Close") == 1
    assert b"connection: close" not in head_of(written)  # said once, by the app
    assert written.endswith(b"ok") and transport.closing


def test_an_http_1_0_request_is_answered_with_connection_close() -> None:
    async def app(scope: Any, receive: Receive, send: Send) -> None:
        assert scope["http_version"] == "1.0"
        await start(send, headers=[(b"content-length", b"2")])
        await body(send, b"ok")

    written, transport = served(app, post(version=b"1.0"))
    assert head_of(written)[-1] == b"connection: close" and transport.closing


def test_no_content_and_head_responses_have_no_body() -> None:
    async def no_content(scope: Any, receive: Receive, send: Send) -> None:
        await start(send, 204)
        await body(send)

    written, _ = served(no_content, post())
    assert written.startswith(b"HTTP/1.1 204 No Content") and written.endswith(b"\r\n\r\n")
    assert b"transfer-encoding" not in written

    async def head(scope: Any, receive: Receive, send: Send) -> None:
        assert scope["method"] == "HEAD"
        await start(send, headers=[(b"content-length", b"5")])
        await body(send, b"hello")  # dropped: a HEAD response has none

    written, _ = served(head, b"HEAD /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
    assert head_of(written)[-1] == b"content-length: 5" and written.endswith(b"\r\n\r\n")


def test_a_body_longer_than_declared_is_a_500_and_a_shorter_one_a_close() -> None:
    async def longer(scope: Any, receive: Receive, send: Send) -> None:
        await start(send, headers=[(b"content-length", b"2")])
        await body(send, b"three")

    written, transport = served(longer, post())
    assert written == INTERNAL_ERROR and transport.closing

    async def shorter(scope: Any, receive: Receive, send: Send) -> None:
        await start(send, headers=[(b"content-length", b"5")])
        await body(send, b"two")

    written, transport = served(shorter, post())
    assert written.endswith(b"\r\n\r\ntwo") and transport.closing  # no more can be said


# --- an app that fails or strays ----------------------------------------------------------------


async def _raises_first(scope: Any, receive: Receive, send: Send) -> None:
    raise ValueError("before anything")


async def _returns_nothing(scope: Any, receive: Receive, send: Send) -> None:
    return None


async def _starts_only(scope: Any, receive: Receive, send: Send) -> None:
    await start(send, headers=[(b"content-length", b"2")])


async def _raises_after_start(scope: Any, receive: Receive, send: Send) -> None:
    await start(send, headers=[(b"content-length", b"2")])
    raise ValueError("after the start")


@pytest.mark.parametrize(
    "app", [_raises_first, _returns_nothing, _starts_only, _raises_after_start]
)
def test_an_app_that_fails_before_any_byte_is_out_gets_a_500(
    app: Script, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, "uvicorn.error"):
        written, transport = served(app, post())
    assert written == INTERNAL_ERROR and transport.closing
    assert caplog.records  # the server's log says why


async def _raises_mid_stream(scope: Any, receive: Receive, send: Send) -> None:
    await start(send)
    await body(send, b"part", more=True)
    raise ValueError("mid-stream")


async def _returns_a_value(scope: Any, receive: Receive, send: Send) -> int:
    await start(send, headers=[(b"content-length", b"2")])
    await body(send, b"ok")
    return 1


async def _leaves_a_stream_open(scope: Any, receive: Receive, send: Send) -> None:
    await start(send)
    await body(send, b"part", more=True)


@pytest.mark.parametrize("app", [_raises_mid_stream, _returns_a_value, _leaves_a_stream_open])
def test_an_app_that_fails_once_bytes_are_out_gets_its_connection_closed(
    app: Script, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, "uvicorn.error"):
        written, transport = served(app, post())
    assert not written.startswith(b"HTTP/1.1 500") and transport.closing
    assert caplog.records


def test_messages_out_of_order_are_refused_to_the_app() -> None:
    errors: list[str] = []

    async def app(scope: Any, receive: Receive, send: Send) -> None:
        for wrong in ({"type": "http.response.body", "body": b""}, {"type": "nonsense"}):
            try:
                await send(wrong)
            except RuntimeError as error:
                errors.append(str(error))
        await start(send, headers=[(b"content-length", b"0")])
        try:
            await start(send)
        except RuntimeError as error:
            errors.append(str(error))
        await body(send)
        try:
            await body(send)
        except RuntimeError as error:
            errors.append(str(error))

    written, _ = served(app, post())
    assert written.startswith(b"HTTP/1.1 200 OK") and len(errors) == 4
    assert "before 'http.response.start'" in errors[0]
    assert "where 'http.response.body' belongs" in errors[2]
    assert "after its response was complete" in errors[3]


def test_the_access_log_names_the_request_when_enabled(caplog: pytest.LogCaptureFixture) -> None:
    async def app(scope: Any, receive: Receive, send: Send) -> None:
        await start(send, headers=[(b"content-length", b"0")])
        await body(send)

    async def scenario() -> None:
        protocol, _ = connect(app, access_log=True)
        access = logging.getLogger("uvicorn.access")  # uvicorn's config stops it propagating
        access.addHandler(caplog.handler)
        try:
            protocol.data_received(post())
        finally:
            access.removeHandler(caplog.handler)
        protocol.connection_lost(None)

    with caplog.at_level(logging.INFO, "uvicorn.access"):
        asyncio.run(scenario())
    assert any('"POST /mcp HTTP/1.1" 200' in record.getMessage() for record in caplog.records)


def test_the_servers_default_fields_are_checked_when_they_change() -> None:
    defaults = _Defaults()
    assert defaults.block([(b"Date", b"today")]) == b"date: today\r\n"
    with pytest.raises(RuntimeError, match="default headers"):
        defaults.block([(b"x-bad", b"a\r\nb")])
    assert _DEFAULTS.block([]) == b""


# --- the request --------------------------------------------------------------------------------


def test_a_body_in_parts_wakes_its_reader_and_parts_not_read_yet_are_joined() -> None:
    async def scenario() -> None:
        received: list[dict[str, Any]] = []
        gate = asyncio.Event()

        async def app(scope: Any, receive: Receive, send: Send) -> None:
            received.append(await receive())
            await gate.wait()
            received.append(await receive())
            await start(send, headers=[(b"content-length", b"0")])
            await body(send)

        protocol, transport = connect(app)
        protocol.data_received(post(b"x" * 9)[:-9])  # the app starts and waits for the body
        await settle()
        assert received == []
        protocol.data_received(b"abc")
        await settle()
        assert received == [{"type": "http.request", "body": b"abc", "more_body": True}]
        for part in (b"de", b"f", b"ghi"):  # three parts before the app reads again
            protocol.data_received(part)
        gate.set()
        await settle()
        assert received[1] == {"type": "http.request", "body": b"defghi", "more_body": False}
        assert transport.written.startswith(b"HTTP/1.1 200 OK")
        protocol.connection_lost(None)

    asyncio.run(scenario())


def test_reading_pauses_past_the_high_water_mark_until_the_app_reads() -> None:
    async def scenario() -> None:
        gate = asyncio.Event()
        sizes: list[int] = []

        async def app(scope: Any, receive: Receive, send: Send) -> None:
            await gate.wait()
            while True:
                message = await receive()
                sizes.append(len(message["body"]))
                if not message["more_body"]:
                    break
            await start(send, headers=[(b"content-length", b"0")])
            await body(send)

        protocol, transport = connect(app)
        size = 70_000
        protocol.data_received(post(b"x" * size)[: -size + 65_000])
        protocol.data_received(b"x" * 2_000)  # past 64 KiB kept: reading pauses
        assert transport.paused == 1
        gate.set()
        await settle()
        assert transport.paused == 0  # the app read it all
        protocol.data_received(b"x" * (size - 67_000))
        await settle()
        assert sum(sizes) == size and transport.written.startswith(b"HTTP/1.1 200")
        protocol.connection_lost(None)

    asyncio.run(scenario())


def test_readers_waiting_together_all_wake_and_a_cancelled_one_leaves() -> None:
    async def scenario() -> None:
        never = asyncio.Event()

        async def app(scope: Any, receive: Receive, send: Send) -> None:
            await never.wait()  # the test reads in its place

        protocol, _ = connect(app)
        protocol.data_received(post(b"abc")[:-3])
        await settle()
        cycle = protocol.cycle
        first = asyncio.ensure_future(cycle.receive())
        second = asyncio.ensure_future(cycle.receive())
        third = asyncio.ensure_future(cycle.receive())
        fourth = asyncio.ensure_future(cycle.receive())
        await settle()
        third.cancel()
        await settle()
        assert cycle._waiters is not None and len(cycle._waiters) == 3  # the third has left
        fourth.cancel()  # and the fourth leaves only as the others are woken
        protocol.data_received(b"abc")
        messages = [await first, await second]
        assert {m["type"] for m in messages} == {"http.request"}
        await settle()
        assert third.cancelled() and fourth.cancelled() and cycle._waiters is None
        cycle.set()  # nobody waits: nothing to wake
        protocol.connection_lost(None)

    asyncio.run(scenario())


def test_a_client_gone_is_a_disconnect_to_read_and_silence_to_write() -> None:
    async def scenario() -> None:
        outcome: list[Any] = []

        async def app(scope: Any, receive: Receive, send: Send) -> None:
            outcome.append(await receive())
            outcome.append(await receive())  # waits: the client goes away
            await start(send, headers=[(b"content-length", b"0")])  # dropped
            outcome.append("sent")

        protocol, transport = connect(app)
        protocol.data_received(post(b"x"))
        await settle()
        protocol.connection_lost(None)
        await settle()
        assert outcome[1] == {"type": "http.disconnect"} and outcome[2] == "sent"
        assert transport.written == b""

    asyncio.run(scenario())


def test_a_paused_writer_waits_for_the_transport_to_drain() -> None:
    async def scenario() -> None:
        stages: list[str] = []

        async def app(scope: Any, receive: Receive, send: Send) -> None:
            await start(send)
            protocol.pause_writing()
            stages.append("paused")
            await body(send, b"x", more=True)
            stages.append("written")
            await body(send)

        protocol, transport = connect(app)
        protocol.data_received(post())
        await settle()
        assert stages == ["paused"]
        protocol.resume_writing()
        await settle()
        assert stages == ["paused", "written"] and transport.written.endswith(b"0\r\n\r\n")
        protocol.connection_lost(None)

    asyncio.run(scenario())


def test_100_continue_is_not_written_to_a_closing_connection() -> None:
    async def scenario() -> None:
        async def app(scope: Any, receive: Receive, send: Send) -> None:
            transport.closing = True
            await receive()

        protocol, transport = connect(app)
        protocol.data_received(post(b"x", extra=b"Expect: 100-Continue\r\n"))
        await settle()
        assert b"100 Continue" not in transport.written
        protocol.connection_lost(None)

    asyncio.run(scenario())


def test_the_scope_has_the_decoded_path_and_fields_of_a_bare_head() -> None:
    scopes: list[Any] = []

    async def app(scope: Any, receive: Receive, send: Send) -> None:
        scopes.append(scope)
        await start(send, headers=[(b"content-length", b"0")])
        await body(send)

    served(app, b"GET /a%20b?q=1 HTTP/1.0\r\n\r\n")
    scope = scopes[0]
    assert scope["path"] == "/a b" and scope["raw_path"] == b"/a%20b"
    assert scope["query_string"] == b"q=1" and scope["headers"] == []
    assert scope["method"] == "GET" and scope["http_version"] == "1.0"


def test_a_body_arriving_after_the_response_is_dropped() -> None:
    async def scenario() -> None:
        async def app(scope: Any, receive: Receive, send: Send) -> None:
            await start(send, headers=[(b"content-length", b"2")])
            await body(send, b"no")  # answered before reading the body

        protocol, transport = connect(app)
        protocol.data_received(post(b"abcdef")[:-6])
        await settle()
        protocol.data_received(b"abcdef")
        assert protocol.cycle._first == b"" and protocol.cycle.more_body  # never kept
        await settle()
        assert transport.written.endswith(b"\r\n\r\nno") and not transport.closing
        protocol.connection_lost(None)

    asyncio.run(scenario())


# --- the outbox ---------------------------------------------------------------------------------


def test_the_answers_of_one_turn_go_out_together_in_order() -> None:
    async def scenario() -> None:
        async def app(scope: Any, receive: Receive, send: Send) -> None:
            await start(send, headers=[(b"content-length", b"2")])
            await body(send, b"ok")

        connections = [connect(app) for _ in range(3)]
        for protocol, _ in connections:
            protocol.data_received(post())
        assert all(transport.written == b"" for _, transport in connections)
        await asyncio.sleep(0)
        assert all(transport.writes == 1 for _, transport in connections)
        first, transport = connections[0]
        first.data_received(post() + post())  # pipelined: both answers, in order, one turn
        await settle()
        assert transport.written.count(b"HTTP/1.1 200 OK") == 3
        for protocol, _ in connections:
            protocol.connection_lost(None)

    asyncio.run(scenario())


def test_a_refusal_or_close_writes_what_is_held_first() -> None:
    async def scenario() -> None:
        async def app(scope: Any, receive: Receive, send: Send) -> None:
            await start(send, headers=[(b"content-length", b"2")])
            await body(send, b"ok")

        protocol, transport = connect(app)
        protocol.data_received(post())  # answered, held until the turn ends
        protocol.data_received(b"NOT HTTP\r\n\r\n")  # a bad head in the same turn
        assert transport.written.startswith(b"HTTP/1.1 200 OK")
        assert transport.written.endswith(b"\r\n\r\nok" + BAD_REQUEST) and transport.closing
        protocol.connection_lost(None)

        protocol, transport = connect(app)
        protocol.data_received(post())
        protocol.shutdown()  # uvicorn's graceful stop: the answer goes out before the close
        assert transport.written.endswith(b"\r\n\r\nok") and transport.closing
        protocol.connection_lost(None)

    asyncio.run(scenario())


def test_the_outbox_writes_at_once_past_its_hold_and_survives_a_failed_write() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        outbox = Outbox(loop)
        good, broken = FakeTransport(), FakeTransport()

        def fail(data: Any) -> None:
            raise OSError("gone")

        broken.write = fail  # type: ignore[method-assign]
        outbox.write(good, b"a")
        outbox.write(broken, b"b")
        outbox.write(good, b"c")
        assert good.written == b""
        await asyncio.sleep(0)
        assert good.written == b"ac"  # the broken one did not stop the rest
        outbox.write(good, b"x" * HOLD_BYTES)  # at the hold: still held
        assert good.written == b"ac"
        outbox.write(good, b"y")  # past the hold: written at once
        assert good.written.endswith(b"y")
        await asyncio.sleep(0)
        assert outbox_for(loop) is outbox_for(loop)

    asyncio.run(scenario())

"""A tiny authorization server on 127.0.0.1 for the verifier tests: it serves a JWKS at
``/jwks`` and an RFC 7662 introspection endpoint at ``/introspect``, counts and records the
requests, and can be told to misbehave on either path."""

from __future__ import annotations

import json
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final, Literal

Mode = Literal[
    "ok",  # 200, the JSON document
    "hang",  # never answers (until the server stops)
    "hang_body",  # sends the head, then never the body
    "garbage",  # 200, bytes that are not JSON
    "html",  # 200, an HTML page
    "status500",  # 500 with a JSON body
    "redirect",  # 302 to the same document
    "oversize",  # 200, a valid JSON object larger than ``oversize_bytes``
    "array",  # 200, a JSON array
    "close",  # closes the connection without answering
]

HANG_SECONDS: Final = 10.0


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class AuthServer:
    """What the server answers; change the fields at any time (the handler reads them per
    request)."""

    jwks: object = field(default_factory=lambda: {"keys": []})
    introspection: object = field(default_factory=lambda: {"active": True})
    modes: dict[str, Mode] = field(default_factory=dict)
    oversize_bytes: int = 0
    hits: Counter[str] = field(default_factory=Counter)
    requests: list[Recorded] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def jwks_uri(self) -> str:
        return self.url("/jwks")

    @property
    def introspection_endpoint(self) -> str:
        return self.url("/introspect")

    def serve(self, path: str, mode: Mode) -> None:
        self.modes[path] = mode


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection: no pooled socket outlives a loop

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._answer(b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        self._answer(self.rfile.read(length))

    def _answer(self, body: bytes) -> None:
        state = self.server.state
        path = self.path
        with state.lock:
            state.hits[path] += 1
            state.requests.append(
                Recorded(self.command, path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
        document = state.jwks if path == "/jwks" else state.introspection
        mode = state.modes.get(path, "ok")
        if mode == "hang":
            state.release.wait(HANG_SECONDS)
            return
        if mode == "close":
            self.close_connection = True
            return
        status, kind, payload = 200, "application/json", json.dumps(document).encode()
        if mode == "garbage":
            payload = b"\x00\xffnot json at all{"
        elif mode == "html":
            kind, payload = "text/html", b"<!doctype html><html><body>Sign in</body></html>"
        elif mode == "status500":
            status = 500
        elif mode == "redirect":
            status = 302
        elif mode == "oversize":
            padding = "x" * state.oversize_bytes
            payload = json.dumps({"keys": [], "padding": padding}).encode()
        elif mode == "array":
            payload = json.dumps([document]).encode()
        self.send_response(status)
        self.send_header("content-type", kind)
        if mode == "redirect":
            self.send_header("location", path)
        if mode == "hang_body":
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.flush()
            state.release.wait(HANG_SECONDS)
            return
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: AuthServer

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (timed out) closed its end: nothing to report


@contextmanager
def running() -> Iterator[AuthServer]:
    """An ``AuthServer`` listening on 127.0.0.1, stopped (and its hung answers released) at
    the end."""
    server = _Server(("127.0.0.1", 0), _Handler)
    state = AuthServer(port=server.server_address[1])
    server.state = state
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def closed_port() -> int:
    """A loopback port nothing listens on (connecting is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port

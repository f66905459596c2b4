"""A transport for driving a protocol without sockets: it records what is written and how
often, and how reading was paused; ``buffered`` is what it reports as not yet sent."""

from __future__ import annotations

import asyncio
from typing import Any


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.writes = 0  # calls of write()
        self.closing = False
        self.aborted = False
        self.buffered = 0
        self.paused = 0  # pause_reading() calls not yet resumed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50_000)}.get(
            name, default
        )

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data
        self.writes += 1

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = self.aborted = True

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def pause_reading(self) -> None:
        self.paused += 1

    def resume_reading(self) -> None:
        self.paused -= 1

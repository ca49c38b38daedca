"""Moving bytes between a script's child process and us: stdout capped, stderr's tail kept.

`ChildProtocol` collects a child's output on the event loop; `kill_group` ends what is left of
the child's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Literal

__all__ = [
    "EXIT_GRACE_S",
    "STDERR_TAIL_BYTES",
    "Capped",
    "ChildProtocol",
    "Ending",
    "Tail",
    "kill_group",
]

STDERR_TAIL_BYTES = 2048
EXIT_GRACE_S = 0.2
"""How long a script's pipes may stay open after it exited (held by a child of its own)."""

Ending = Literal["exited", "timeout", "overflow"]
"""How the child's run ended: on its own, at the deadline, or past the output cap."""


class Capped:
    """Collects stdout up to a cap; `add` says False once the cap is passed."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.size = 0
        self.overflow = False
        self._chunks: list[bytes] = []

    def add(self, chunk: bytes) -> bool:
        self.size += len(chunk)
        if self.size > self.cap:
            self.overflow = True
        elif not self.overflow:
            self._chunks.append(chunk)
        return not self.overflow

    def data(self) -> bytes:
        return b"".join(self._chunks)


class Tail:
    """Keeps the last `STDERR_TAIL_BYTES` of stderr."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def add(self, chunk: bytes) -> bool:
        self._buf += chunk
        if len(self._buf) > 16 * STDERR_TAIL_BYTES:
            del self._buf[:-STDERR_TAIL_BYTES]
        return True

    def data(self) -> bytes:
        return bytes(self._buf[-STDERR_TAIL_BYTES:])


class ChildProtocol(asyncio.SubprocessProtocol):
    """Collects a child's output on the event loop (the async path)."""

    def __init__(self, cap: int, loop: asyncio.AbstractEventLoop) -> None:
        self.stdout = Capped(cap)
        self.stderr = Tail()
        self.exited: asyncio.Future[None] = loop.create_future()
        self._overflowed: asyncio.Future[None] = loop.create_future()
        self._drained: asyncio.Future[None] = loop.create_future()
        self._open = {1, 2}

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        sink = self.stdout if fd == 1 else self.stderr
        if not sink.add(data) and not self._overflowed.done():
            self._overflowed.set_result(None)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._open.discard(fd)
        if not self._open and not self._drained.done():
            self._drained.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    async def wait_end(self) -> Ending:
        """Wait for the child's exit (and its pipes, with grace) or for an overflow."""
        await asyncio.wait({self.exited, self._overflowed}, return_when=asyncio.FIRST_COMPLETED)
        if not self._overflowed.done():
            await asyncio.wait(
                {self._drained, self._overflowed},
                timeout=EXIT_GRACE_S,
                return_when=asyncio.FIRST_COMPLETED,
            )
        return "overflow" if self._overflowed.done() else "exited"


def kill_group(pgid: int) -> None:
    """Send SIGKILL to every process left in the group (none left is fine)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)

"""Moving bytes between a script's child process and us: stdin fed, stdout capped, stderr's tail.

`Pump` does it with one selector for the sync path, `ChildProtocol` on the event loop for the
async one; `kill_group` ends what is left of the child's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import signal
import subprocess
import time
from typing import Literal

__all__ = [
    "EXIT_GRACE_S",
    "STDERR_TAIL_BYTES",
    "Capped",
    "ChildProtocol",
    "Ending",
    "Pump",
    "Tail",
    "close_pipes",
    "kill_group",
]

STDERR_TAIL_BYTES = 2048
EXIT_GRACE_S = 0.2
"""How long a script's pipes may stay open after it exited (held by a child of its own)."""
_CHUNK = 65536

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


class Pump:
    """Feeds stdin and drains stdout and stderr of a child with one selector (the sync path)."""

    def __init__(self, proc: subprocess.Popen[bytes], data: bytes, cap: int) -> None:
        assert proc.stdin is not None
        assert proc.stdout is not None
        assert proc.stderr is not None
        self.proc = proc
        self.stdout = Capped(cap)
        self.stderr = Tail()
        self.exited_at: float | None = None
        self._data = memoryview(data)
        self._sel = selectors.DefaultSelector()
        self._pidfd = pidfd_open(proc.pid)
        self._sinks: dict[int, Capped | Tail] = {
            proc.stdout.fileno(): self.stdout,
            proc.stderr.fileno(): self.stderr,
        }
        for fd in self._sinks:
            self._sel.register(fd, selectors.EVENT_READ)
        if self._pidfd is not None:
            self._sel.register(self._pidfd, selectors.EVENT_READ)
        os.set_blocking(proc.stdin.fileno(), False)
        self._write()  # small params fit the pipe at once: no select round for them
        if self._data:
            self._sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)

    def run(self, deadline: float) -> Ending:
        """Pump until the child exited and closed its pipes, the deadline passed, or overflow."""
        while self._sel.get_map() and not self.stdout.overflow:
            limit = deadline
            if self.exited_at is not None:
                limit = min(deadline, self.exited_at + EXIT_GRACE_S)
            remaining = limit - time.monotonic()
            if remaining <= 0:
                break
            for key, _ in self._sel.select(min(remaining, 60.0)):  # epoll rejects infinity
                self._on_ready(key.fd)
        if self.stdout.overflow:
            return "overflow"
        if self.exited_at is not None:
            return "exited"
        if self._pidfd is not None:  # the loop ended on the deadline with the child running
            return "timeout"
        try:  # no pidfd on this system: the pipes are closed, wait for the exit itself
            self.proc.wait(max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            return "timeout"
        return "exited"

    def _on_ready(self, fd: int) -> None:
        if fd == self._pidfd:
            self._sel.unregister(fd)
            self.exited_at = time.monotonic()
        elif fd in self._sinks:
            chunk = os.read(fd, _CHUNK)
            if chunk:
                self._sinks[fd].add(chunk)  # an overflow ends the loop in `run`
            else:
                self._sel.unregister(fd)
        else:
            self._write()

    def _write(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            written = os.write(stdin.fileno(), self._data[:_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the child closed stdin or exited without reading: nothing to feed
            written = len(self._data)
        self._data = self._data[written:]
        if not self._data:
            with contextlib.suppress(KeyError):
                self._sel.unregister(stdin.fileno())
            with contextlib.suppress(OSError):
                stdin.close()

    def close(self) -> None:
        """Release the selector and the pidfd."""
        self._sel.close()
        if self._pidfd is not None:
            os.close(self._pidfd)


def close_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Close our ends of the child's pipes."""
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def pidfd_open(pid: int) -> int | None:
    """Return a descriptor that becomes readable when `pid` exits (Linux ≥ 5.3), else None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


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

"""MCP over stdin/stdout: the wire on private descriptors, and nothing else on stdout.

`claimed_stdio()` moves the wire away from the standard descriptors for as long as a server
runs: fd 0 and fd 1 are duplicated onto private descriptors (close-on-exec, so no child
inherits them), then fd 1 points at stderr and fd 0 at the null device. A tool's `print()`
(from any thread: `sys.stdout` is stderr meanwhile), an `os.write(1, …)` and a child's output
all land on stderr; a child that reads stdin reads EOF. Claim before loading a registry, so
that a module that prints on import cannot corrupt the stream either.

`stdio_streams` reads and writes JSON-RPC lines on those descriptors with asyncio pipe transports
(the SDK's `stdio_server` hops to a worker thread for every line read and twice for every line
written). A line longer than `MAX_MESSAGE_BYTES`, or an object with an id that is not a valid
JSON-RPC request, is answered -32600 by that id; a line without a readable id (not JSON, a bad
notification) is dropped with a warning on stderr. The session goes on either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import re
import stat
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_MESSAGE_BYTES", "LineReader", "LineWriter", "Wire", "claimed_stdio", "run_stdio",
    "stdio_streams",
]

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""Longest JSON-RPC line read (16 MiB, as for HTTP request bodies): longer ones are refused."""
_HIGH_WATER_BYTES = 1 << 20
"""Past this much unwritten output, a sender waits for the client to read."""
_ID_SCAN_BYTES = 4096
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')
_INVALID_REQUEST = -32600
log = logging.getLogger("toolcaller.serve")
"""Where the server says what it refused or dropped (stderr, through `logging`)."""


@dataclass(frozen=True, slots=True)
class Wire:
    """The private descriptors the protocol travels on while stdio is claimed."""

    read_fd: int
    write_fd: int


@contextlib.contextmanager
def claimed_stdio() -> Iterator[Wire]:
    """Keep the wire on private descriptors; fd 1 → stderr, fd 0 → /dev/null meanwhile."""
    sys.stdout.flush()
    wire = Wire(fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3), fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3))
    null = os.open(os.devnull, os.O_RDONLY)
    saved_stdout = sys.stdout
    try:
        os.dup2(2, 1)
        os.dup2(null, 0)
        sys.stdout = sys.stderr  # prints from any thread; the old object would buffer
        yield wire
    finally:
        sys.stdout = saved_stdout
        os.close(null)
        for fd, private in ((0, wire.read_fd), (1, wire.write_fd)):
            with contextlib.suppress(OSError):
                os.set_blocking(private, True)  # the pipe transports made it non-blocking
                os.dup2(private, fd)
            os.close(private)


@contextlib.asynccontextmanager
async def stdio_streams(wire: Wire, *, max_message_bytes: int = MAX_MESSAGE_BYTES
                        ) -> AsyncIterator[tuple[LineReader, LineWriter]]:
    """Open the SDK's read and write streams on a claimed wire (asyncio pipe transports).

    Each transport gets a duplicate descriptor, so closing it leaves the wire to the claim.
    A regular file (`toolcaller serve < requests.jsonl`) is fed through a pipe by a thread.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=max_message_bytes, loop=loop)
    source = os.fdopen(_pipe_end(wire.read_fd, reading=True), "rb", 0)
    sink = os.fdopen(_pipe_end(wire.write_fd, reading=False), "wb", 0)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), source)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), sink)
    writer = LineWriter(asyncio.StreamWriter(transport, protocol, None, loop))
    try:
        yield LineReader(reader, writer, max_message_bytes), writer
    finally:
        read_transport.close()
        await writer.aclose()


def _pipe_end(fd: int, *, reading: bool) -> int:
    """A close-on-exec duplicate of `fd`, or a pipe fed from (or into) it if it is a file."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    source, target = (fd, write_end) if reading else (read_end, fd)
    threading.Thread(target=_copy, args=(source, target, reading), daemon=True,
                     name="toolcaller-serve-file").start()
    return read_end if reading else write_end


def _copy(source: int, target: int, close_target: bool) -> None:
    with contextlib.suppress(OSError):
        while chunk := os.read(source, 1 << 16):
            os.write(target, chunk)
    os.close(target if close_target else source)


class LineReader:
    """The read stream: `SessionMessage`s, or the exception a bad line raised; EOF ends it."""

    def __init__(self, reader: asyncio.StreamReader, writer: LineWriter,
                 max_message_bytes: int) -> None:
        self._reader = reader
        self._writer = writer  # answers a message too large to read
        self.max_message_bytes = max_message_bytes

    async def receive(self) -> Any:
        """Return the next message, or the exception its line raised (`anyio.EndOfStream`)."""
        import anyio
        import mcp.types as types
        from mcp.shared.message import SessionMessage

        while True:
            line = await self._read_line()
            if line is None:
                raise anyio.EndOfStream
            if isinstance(line, _TooLong):
                await self._refuse(line)
                continue
            if not line.strip():
                continue
            try:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValueError as exc:  # pydantic's ValidationError: not a JSON-RPC message
                await self._invalid(line)
                return exc
            return SessionMessage(message)

    async def _invalid(self, line: bytes) -> None:
        """Answer a request that is not valid JSON-RPC by its id (-32600); drop anything else.

        Without an id there is nobody to answer: a line that is not JSON, a notification.
        """
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            data = {}
        request_id = data.get("id")
        if not isinstance(request_id, int | str) or isinstance(request_id, bool) or (
                "result" in data or "error" in data):
            log.warning("dropped a line that is not JSON-RPC: %.200r", line)
            return
        log.warning("refused an invalid request: %.200r", line)
        await self._answer(request_id, "invalid request: not a JSON-RPC 2.0 request object "
                                       "(jsonrpc '2.0', an id, a method, params an object)")

    async def _read_line(self) -> bytes | _TooLong | None:
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # EOF: a last line without its newline
            return exc.partial or None
        except asyncio.LimitOverrunError as exc:
            head = await self._reader.readexactly(exc.consumed)
            return _TooLong(head[:_ID_SCAN_BYTES], len(head) + await self._skip_line())

    async def _skip_line(self) -> int:
        skipped = 0
        while True:
            try:
                return skipped + len(await self._reader.readuntil(b"\n"))
            except asyncio.LimitOverrunError as exc:
                skipped += len(await self._reader.readexactly(exc.consumed))
            except asyncio.IncompleteReadError as exc:
                return skipped + len(exc.partial)

    async def _refuse(self, line: _TooLong) -> None:
        log.warning("refused a message of %d bytes (the limit is %d)", line.size,
                    self.max_message_bytes)
        found = _ID.search(line.head)
        if found is None:
            return  # no id to answer: like any unreadable line
        await self._answer(json.loads(found.group(1)), f"message too large: {line.size} bytes, "
                                                       f"the limit is {self.max_message_bytes}")

    async def _answer(self, request_id: Any, message: str) -> None:
        error = {"jsonrpc": "2.0", "id": request_id,
                 "error": {"code": _INVALID_REQUEST, "message": message}}
        with contextlib.suppress(Exception):  # the client may be gone already
            await self._writer.write_line(json.dumps(error).encode())

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> LineReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Nothing to release: the transport closes with `stdio_streams`."""


class LineWriter:
    """The write stream: one message per line; `anyio.BrokenResourceError` once the peer left.

    Lines sent during one turn of the loop go out in one write: under a burst of concurrent
    calls that saves a system call (and a wake-up of the client) per message.
    """

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._broken = False
        self._pending: list[bytes] = []

    async def send(self, item: Any) -> None:
        """Write one `SessionMessage` as one line."""
        await self.write_line(item.message.model_dump_json(by_alias=True,
                                                           exclude_unset=True).encode())

    async def write_line(self, data: bytes) -> None:
        """Queue one line of JSON for this turn's write; wait while the pipe is full."""
        import anyio

        if self._broken or self._writer.is_closing():
            raise anyio.BrokenResourceError
        self._pending.append(data)
        if len(self._pending) == 1:
            asyncio.get_running_loop().call_soon(self._flush)
        if self._writer.transport.get_write_buffer_size() > _HIGH_WATER_BYTES:
            try:
                await self._writer.drain()
            except OSError as exc:  # the client went away (EPIPE, a reset)
                self._broken = True
                raise anyio.BrokenResourceError from exc

    def _flush(self) -> None:
        lines, self._pending = self._pending, []
        if not lines or self._broken or self._writer.is_closing():
            return
        try:
            self._writer.write(b"\n".join(lines) + b"\n")
        except OSError:
            self._broken = True

    async def __aenter__(self) -> LineWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Flush and close the pipe (a peer that left cannot take the rest: no error)."""
        if self._writer.is_closing():
            return
        self._flush()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()


@dataclass(frozen=True, slots=True)
class _TooLong:
    head: bytes
    size: int


async def run_stdio(server: Any, wire: Wire) -> None:
    """Serve the SDK `server` on a claimed wire until the client closes its end."""
    async with stdio_streams(wire) as (read, write):
        await server.run(read, write, server.create_initialization_options())

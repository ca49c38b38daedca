"""Importable fault tools: each one misbehaves in one way (reference them as "module:fn").

The same functions serve every sync mode: a worker thread, and process isolation
(`"tests.reliability.tools_faulty:fn"`, imported again in the child). The async twins start
with `a`. A tool that "hangs forever" in a thread waits on `RELEASE`, which the tests set at
teardown so that the pool's threads end (a thread cannot be killed); in a child process it is
killed, so there it really waits forever.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import threading
import time
from typing import Any

RELEASE = threading.Event()
"""Set to let every thread-mode `hang` return (test teardown)."""

MB = 1024 * 1024


class CustomBaseError(BaseException):
    """A BaseException that is neither Exception, SystemExit nor KeyboardInterrupt."""


class Unserialisable:
    """An object that JSON (and pydantic) cannot convert."""

    __slots__ = ()


# -- sync ---------------------------------------------------------------------------------


def add(a: float, b: float) -> dict[str, float]:
    """Add two numbers (the call that must work after every fault)."""
    return {"sum": a + b}


def pid() -> dict[str, int]:
    """Return the id of the process that ran the tool."""
    return {"pid": os.getpid()}


def hang() -> None:
    """Block until `RELEASE` is set (forever in a child process)."""
    RELEASE.wait()


EVENTS: dict[str, threading.Event] = {}
_EVENTS_LOCK = threading.Lock()


def event(key: str) -> threading.Event:
    """The event `block_until(key)` waits for (created on first use)."""
    with _EVENTS_LOCK:
        return EVENTS.setdefault(key, threading.Event())


def block_until(key: str) -> dict[str, str]:
    """Block until `event(key)` is set (never, in a child process); count the runs."""
    RUNS.append(key)
    event(key).wait()
    return {"released": key}


RUNS: list[str] = []
"""Keys of the `block_until` calls that started running (in this process)."""


def sleep(seconds: float) -> dict[str, float]:
    """Sleep, then return: a timeout that ends soon after (its thread is reusable)."""
    time.sleep(seconds)
    return {"slept": seconds}


def exit_now(status: int = 3) -> None:
    """End the whole process at once, skipping every handler (`os._exit`)."""
    os._exit(status)


def kill_self(sig: str = "SIGKILL") -> None:
    """Send this process a signal (SIGKILL, SIGSEGV…)."""
    os.kill(os.getpid(), getattr(signal, sig))
    time.sleep(5)  # a signal is delivered asynchronously; never return normally


def raise_system_exit() -> None:
    """Raise SystemExit, as `sys.exit(2)` does."""
    sys.exit(2)


def raise_keyboard_interrupt() -> None:
    """Raise KeyboardInterrupt from the tool's own code."""
    raise KeyboardInterrupt("from the tool")


def raise_custom_base() -> None:
    """Raise a BaseException subclass of its own."""
    raise CustomBaseError("custom base exception")


def unserialisable() -> Any:
    """Return an object that cannot become JSON."""
    return {"value": Unserialisable()}


def self_referencing() -> Any:
    """Return a dict that contains itself."""
    loop: dict[str, Any] = {"name": "loop"}
    loop["self"] = loop
    return loop


def nan() -> Any:
    """Return NaN and infinities (not JSON)."""
    return {"nan": float("nan"), "inf": float("inf")}


def big(mb: int = 100) -> str:
    """Return a string of `mb` megabytes."""
    return "x" * (mb * MB)


def print_garbage() -> dict[str, bool]:
    """Write binary garbage to the process's stdout (fd 1), then return normally."""
    os.write(1, b"\xff\xfe\x00\x80garbage\x1b[2J" + bytes(range(256)))
    return {"ok": True}


def close_stdout() -> dict[str, bool]:
    """Close fd 1 and return normally (only sensible in a child process)."""
    os.close(1)
    return {"ok": True}


def flaky(rate: float = 0.1) -> dict[str, bool]:
    """Fail with probability `rate` (a transient failure: RuntimeError)."""
    if random.random() < rate:
        raise RuntimeError("transient failure")
    return {"ok": True}


def hog_and_hang(mb: int = 400) -> None:
    """Hold `mb` megabytes of written memory, then block (a killed child must free it)."""
    hog = b"x" * (mb * MB)
    RELEASE.wait()
    del hog


def pid_and_hang(path: str) -> None:
    """Write this process's id to `path`, then block until `RELEASE`."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(str(os.getpid()))
    RELEASE.wait()


def leak_secret(password: str) -> None:
    """Raise with the secret in the message, and in a local variable of the traceback."""
    connection_string = f"postgres://admin:{password}@db.internal/prod"
    raise RuntimeError(f"cannot connect with {connection_string}")


def echo_fail(**params: Any) -> None:
    """Raise with every param in the message (repr), nested ones included."""
    raise RuntimeError(f"bad input: {params!r}")


# -- async --------------------------------------------------------------------------------


async def aadd(a: float, b: float) -> dict[str, float]:
    """Async add."""
    return {"sum": a + b}


async def ahang() -> None:
    """Wait forever (until cancelled)."""
    await asyncio.Event().wait()


async def asleep(seconds: float) -> dict[str, float]:
    """Sleep asynchronously, then return."""
    await asyncio.sleep(seconds)
    return {"slept": seconds}


ASYNC_STARTS: list[float] = []
"""`acount_hang` appends the time each attempt started (to see whether retries go on)."""


async def acount_hang() -> None:
    """Record that an attempt started, then wait forever."""
    ASYNC_STARTS.append(time.monotonic())
    await asyncio.Event().wait()


async def ablock(seconds: float) -> dict[str, float]:
    """Block the event loop with time.sleep (a common mistake)."""
    time.sleep(seconds)  # noqa: ASYNC251 - the fault under test
    return {"blocked": seconds}


async def astubborn(seconds: float) -> dict[str, Any]:
    """Swallow every CancelledError and go on until `seconds` have passed."""
    end = time.monotonic() + seconds
    swallowed = 0
    while (left := end - time.monotonic()) > 0:
        try:
            await asyncio.sleep(left)
        except asyncio.CancelledError:
            swallowed += 1
    return {"swallowed": swallowed}


async def araise_system_exit() -> None:
    """Raise SystemExit from a coroutine."""
    sys.exit(2)


async def araise_keyboard_interrupt() -> None:
    """Raise KeyboardInterrupt from a coroutine."""
    raise KeyboardInterrupt("from the tool")


async def araise_custom_base() -> None:
    """Raise a custom BaseException from a coroutine."""
    raise CustomBaseError("custom base exception")


async def aunserialisable() -> Any:
    """Return an unserialisable object from a coroutine."""
    return {"value": Unserialisable()}


async def aself_referencing() -> Any:
    """Return a self-referencing dict from a coroutine."""
    return self_referencing()


async def anan() -> Any:
    """Return NaN from a coroutine."""
    return nan()


async def abig(mb: int = 100) -> str:
    """Return a big string from a coroutine."""
    return big(mb)


async def aleak_secret(password: str) -> None:
    """Async twin of `leak_secret`."""
    leak_secret(password)

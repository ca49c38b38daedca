"""The worker process of process isolation: runs one sync Python tool call at a time.

Started as `python -m toolcaller.adapters._worker` by `toolcaller.adapters.process`. It never
imports the caller's `__main__` (a plain script without a `__main__` guard is not run again),
unlike `multiprocessing`'s spawn and forkserver starts. Protocol on its stdin and stdout:
length-prefixed pickles (`multiprocessing.connection.Connection` framing). The first message
is the parent's `sys.path`; the worker answers `"ready"` once its imports are done. Then, per
request: `"loaded"` once the tool's function is imported (loading a module is a cold start,
like starting the worker: not the tool's time), then the reply. The tool's own prints on
stdout go to stderr, away from the protocol.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any


def main() -> None:  # pragma: no cover - runs in the child
    """Serve requests until the parent closes the pipe (or goes away)."""
    requests = Connection(os.dup(0), writable=False)
    replies = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # a tool's print() must not write into the protocol
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        _serve(requests, replies)
    except (EOFError, OSError):  # the parent closed the pipe, or exited: nothing to say
        return


def _serve(requests: Connection, replies: Connection) -> None:  # pragma: no cover - child
    sys.path[:] = pickle.loads(requests.recv_bytes())

    from toolcaller.adapters.python_code import load_callable, translate_exception
    from toolcaller.core.results import to_json_result

    replies.send_bytes(pickle.dumps("ready"))
    while True:
        payload = requests.recv_bytes()
        try:
            target, base_dir, kwargs, fmt, permanent = pickle.loads(payload)
        except Exception as exc:  # noqa: BLE001 - a payload that cannot be read is a failure
            replies.send_bytes(_error(translate_exception(exc)))
            continue
        try:
            fn = (load_callable(target, Path(base_dir) if base_dir else None)
                  if isinstance(target, str) else target)
        except BaseException as exc:  # noqa: BLE001 - the parent reports it as the attempt's
            replies.send_bytes(_error(translate_exception(exc, permanent)))
            continue
        replies.send_bytes(LOADED)
        try:
            value = fn(**kwargs)
            value = value if fmt == "raw" and _picklable(value) else to_json_result(value)
            reply = pickle.dumps(("ok", value))
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
            reply = _error(translate_exception(exc, permanent))
        replies.send_bytes(reply)


LOADED = pickle.dumps("loaded")


def _error(error: Any) -> bytes:
    return pickle.dumps(("error", (error.code.value, error.message, error.details,
                                   error.retryable)))


def _picklable(value: object) -> bool:
    try:
        pickle.dumps(value)
    except Exception:  # noqa: BLE001 - unpicklable values go back as JSON instead
        return False
    return True


if __name__ == "__main__":  # pragma: no cover
    main()

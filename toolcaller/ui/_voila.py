"""Run Voilà, and stop it when the process that started it dies (even by SIGKILL).

`serve()` starts `python -m toolcaller.ui._voila ARGS...` instead of `python -m voila ARGS...`:
a thread watches the parent and, once it is gone, sends this process SIGTERM, which Voilà
handles by shutting its kernels down. So no server outlives `toolcaller ui` or a test run.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
import time

PARENT_POLL_S = 0.5


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)


def main() -> None:
    """Start the parent watcher, then run Voilà with this process's arguments."""
    threading.Thread(target=_watch, args=(os.getppid(),), name="parent-watch",
                     daemon=True).start()
    voila = importlib.import_module("voila.app")  # untyped: imported by name
    sys.argv[0] = "voila"
    voila.main()


if __name__ == "__main__":
    main()

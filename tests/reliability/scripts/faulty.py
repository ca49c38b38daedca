"""A script tool that misbehaves as params["mode"] says (params arrive as JSON on stdin).

Modes: ok (print {"sum": a + b}), hang, exit (status 3), system_exit (2), keyboard_interrupt,
kill (params["sig"]), big (params["n"] bytes of "x"), garbage (binary bytes), nan,
close_stdout (then sleep), close_stdout_exit, stderr_secret (print secrets to stderr, exit 1),
env (print the variable params["name"]), argv (print sys.argv[1:] as JSON).
"""

import json
import os
import signal
import sys
import time

params = json.load(sys.stdin)
mode = params.get("mode", "ok")
out = sys.stdout.buffer
if mode == "ok":
    out.write(json.dumps({"sum": params.get("a", 0) + params.get("b", 0)}).encode())
elif mode == "hang":
    while True:
        time.sleep(3600)
elif mode == "exit":
    os._exit(3)
elif mode == "kill":
    os.kill(os.getpid(), getattr(signal, params.get("sig", "SIGKILL")))
    time.sleep(5)
elif mode == "big":
    chunk = b"x" * 65536
    left = int(params["n"])
    while left > 0:
        out.write(chunk[: min(left, len(chunk))])
        left -= len(chunk)
elif mode == "garbage":
    out.write(b"\xff\xfe\x00\x80garbage\x1b[2J" + bytes(range(256)))
elif mode == "nan":
    out.write(b'{"value": NaN, "other": Infinity}')
elif mode == "close_stdout":
    out.flush()
    os.close(1)
    time.sleep(float(params.get("sleep", 3600)))
elif mode == "close_stdout_exit":
    os.close(1)
elif mode == "stderr_secret":
    for name in params.get("names", []):
        sys.stderr.write(f"{name}={os.environ.get(name)}\n")
    sys.stderr.write(f"auth failed with password={params.get('password', '')}\n")
    sys.exit(1)
elif mode == "system_exit":
    sys.exit(2)
elif mode == "keyboard_interrupt":
    raise KeyboardInterrupt
elif mode == "env":
    out.write(json.dumps(os.environ.get(params["name"])).encode())
elif mode == "argv":
    out.write(json.dumps(sys.argv[1:]).encode())
out.flush()

"""Write params["n"] bytes of params["kind"] ("json", "garbage", "half") to stdout."""

import json
import os
import sys

params = json.load(sys.stdin)
kind = params.get("kind", "json")
out = sys.stdout.buffer
if kind == "x":
    out.write(b"x" * params["n"])
elif kind == "garbage":
    out.write(b"\xff\xfe\x00\x80garbage\xc3(" + bytes(range(256)))
elif kind == "half":  # write a little, close stdout, keep working, exit 0
    out.write(b'{"partial": true}')
    out.flush()
    os.close(1)
    sys.stderr.write("stdout closed\n")
    import time

    time.sleep(0.3)
elif kind == "env":
    out.write(json.dumps(sorted(os.environ)).encode())
elif kind == "signal":
    import signal

    os.kill(os.getpid(), signal.SIGTERM)
out.flush()

"""Write our pid (and a grandchild's, if asked) to params["pidfile"], then hang."""

import json
import os
import subprocess
import sys
import time

params = json.load(sys.stdin)
pids = [os.getpid()]
if params.get("grandchild"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    pids.append(child.pid)
with open(params["pidfile"], "w") as f:
    json.dump(pids, f)
if params.get("close_stdout"):
    os.close(1)
if params.get("exit_now"):
    print("{}", flush=True)
    sys.exit(0)  # the grandchild keeps our stdout open
time.sleep(60)

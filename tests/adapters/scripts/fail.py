"""Write to stderr (the env var named by params["show"], if any) and exit with params["status"]."""

import json
import os
import sys

params = json.load(sys.stdin)
sys.stderr.write("x" * params.get("noise", 0) + "\n")
if "show" in params:
    sys.stderr.write(f"using token {os.environ[params['show']]} for the request\n")
sys.stderr.write("fatal: the thing failed\n")
sys.exit(params.get("status", 3))

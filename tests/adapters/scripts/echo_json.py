"""Echo the params read on stdin with where and how the script ran."""

import json
import os
import sys

params = json.load(sys.stdin)
json.dump({"params": params, "argv": sys.argv, "cwd": os.getcwd()}, sys.stdout)

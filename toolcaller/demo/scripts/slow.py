"""Demo script tool `script.slow`: sleep for some seconds, then say so as JSON."""

import json
import sys
import time

seconds = json.load(sys.stdin).get("seconds", 10)
time.sleep(seconds)
json.dump({"slept": seconds}, sys.stdout)

"""Demo script tool `script.fail`: write a message to stderr and exit with a non-zero status."""

import json
import sys

params = json.load(sys.stdin)
print(params.get("message", "this script always fails"), file=sys.stderr)
sys.exit(params.get("status", 1))

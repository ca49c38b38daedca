"""Demo script tool `script.not_json`: greet in plain text, which is not JSON (PARSE_ERROR)."""

import json
import sys

name = json.load(sys.stdin).get("name", "world")
print(f"Hello, {name}! This line is plain text, not JSON.")

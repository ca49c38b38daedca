"""Demo script tool `script.wc`: count a text's lines, words, characters and UTF-8 bytes.

Reads its params as JSON on stdin, writes its result as JSON on stdout.
"""

import json
import sys

text = json.load(sys.stdin)["text"]
json.dump(
    {
        "lines": len(text.splitlines()),
        "words": len(text.split()),
        "chars": len(text),
        "bytes": len(text.encode("utf-8")),
    },
    sys.stdout,
)

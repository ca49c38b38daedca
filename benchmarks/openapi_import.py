"""How long importing a GitHub-size OpenAPI document takes (target: at most 10 s).

The document is GitHub's own description, from the npm package `@octokit/openapi` (JSON,
13 MB, 1,223 operations), downloaded at benchmark time into `benchmarks/cache/` (ignored by
git; never committed), and written once as YAML (about 10 MB) as GitHub publishes it. Timed,
each in a fresh interpreter so that nothing is warm:

- `tools_from_openapi(github.yaml)` with the YAML cache off: toolcaller's loader, on libyaml
  (PyPI's PyYAML wheel brings it) with a faster resolver and constructor (the target: at most
  10 s);
- the same reading YAML with PyYAML's stock `yaml.CSafeLoader`, and with `yaml.safe_load`
  (pure Python: what toolcaller used before, 44.6 s in issue 12);
- the same YAML again with the cache on (the second import of a file: JSON from the cache);
- `tools_from_openapi(api.github.com.json)`.

Wall and CPU seconds are both shown: on a shared machine the wall time grows with the load.

    python -m benchmarks.openapi_import [--runs 3] [--check]

Without npm or the registry, it says why and exits 0 (`--check`: 1). `--check` also exits 1
when the libyaml import misses the target.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CACHE = Path(__file__).resolve().parent / "cache"
PACKAGE = "@octokit/openapi@23.0.2"
JSON_DOC = CACHE / "npm" / "node_modules" / "@octokit" / "openapi" / "generated" / \
    "api.github.com.json"
YAML_DOC = CACHE / "github.yaml"
TARGET_S = 10.0

TIMED = """
import json, os, sys, time
import yaml
from toolcaller.sources import _openapi_document as document
if sys.argv[2] != "fast":  # how toolcaller read YAML before: PyYAML's stock loaders
    loader = yaml.SafeLoader if sys.argv[2] == "safe_load" else yaml.CSafeLoader
    document._parse_yaml = lambda text, where, error: yaml.load(text, Loader=loader)
started, cpu = time.perf_counter(), time.process_time()
from toolcaller.sources.openapi import tools_from_openapi
tools = tools_from_openapi(sys.argv[1], base_url="https://api.github.com", prefix="github")
print(json.dumps({"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
                  "tools": len(tools)}))
"""


def fetch() -> str:
    """Download the document and write its YAML form once; return why not, or ''."""
    if not JSON_DOC.is_file():
        npm = shutil.which("npm")
        if npm is None:
            return "npm is not installed"
        done = subprocess.run([npm, "install", "--prefix", str(CACHE / "npm"), "--no-audit",
                               "--no-fund", "--loglevel=error", PACKAGE],
                              capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0 or not JSON_DOC.is_file():
            return f"npm could not install {PACKAGE} (offline?): {done.stderr.strip()[-200:]}"
    if not YAML_DOC.is_file():
        import yaml

        doc = json.loads(JSON_DOC.read_text(encoding="utf-8"))
        with tempfile.NamedTemporaryFile("w", dir=CACHE, delete=False, suffix=".tmp") as out:
            yaml.dump(doc, out, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                      sort_keys=False, allow_unicode=True, width=120)
        os.replace(out.name, YAML_DOC)
    return ""


def timed(document: Path, loader: str, cache_dir: str) -> dict[str, float]:
    """Import the document in a fresh interpreter; its seconds and tool count."""
    env = {**os.environ, "TOOLCALLER_CACHE_DIR": cache_dir,
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", TIMED, str(document), loader], env=env,
                          capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    """Time the imports and print one line per way; exit 1 on a missed target with --check."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per way (median shown)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the target is missed")
    args = parser.parse_args(argv)
    CACHE.mkdir(exist_ok=True)
    why = fetch()
    if why:
        print(f"skipped: {why}")
        return 1 if args.check else 0
    size_mb = YAML_DOC.stat().st_size / 1e6
    with tempfile.TemporaryDirectory() as warm:
        timed(YAML_DOC, "fast", warm)  # fills the cache
        ways = [("YAML, toolcaller's loader, no cache", YAML_DOC, "fast", ""),
                ("YAML, stock yaml.CSafeLoader", YAML_DOC, "csafe", ""),
                ("YAML, yaml.safe_load (before)", YAML_DOC, "safe_load", ""),
                ("YAML, second import (JSON cache)", YAML_DOC, "fast", warm),
                ("JSON", JSON_DOC, "fast", "")]
        results = {}
        for label, document, loader, cache in ways:
            runs = [timed(document, loader, cache) for _ in range(args.runs)]
            results[label] = statistics.median(r["seconds"] for r in runs)
            cpu = statistics.median(r["cpu"] for r in runs)
            print(f"{label:36} {results[label]:7.2f} s wall {cpu:7.2f} s CPU  "
                  f"({runs[0]['tools']} tools, {args.runs} runs)")
    ok = results[ways[0][0]] <= TARGET_S
    print(f"GitHub's description, {size_mb:.1f} MB of YAML: first import "
          f"{results[ways[0][0]]:.2f} s, target {TARGET_S:g} s: {'met' if ok else 'MISSED'}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())

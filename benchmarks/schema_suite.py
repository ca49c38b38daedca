"""Run the official JSON-Schema-Test-Suite through toolcaller's validator and through jsonschema.

Run: `python benchmarks/schema_suite.py PATH [--list]`, PATH a checkout of
https://github.com/json-schema-org/JSON-Schema-Test-Suite (never vendored here). Without a
path it says so and exits 0. Prints, per draft (7 and 2020-12) and part (required, optional,
optional/format): the tests, how many each implementation gets wrong, and how many verdicts
differ between the two. `--list` prints every disagreement.

toolcaller runs as the engine configures it (`ParamsValidator`: formats asserted, nothing
fetched). Its wrong answers are split by cause: `remote`, a schema that refers to the suite's
remote schemas (served at localhost:1234), unusable on purpose; `format`, the required
`format.json` that expects formats to be annotations only, asserted on purpose; `other`.
jsonschema runs with its FORMAT_CHECKER and the suite's remotes in its registry: the
reference it is compared with.
Draft-7 schemas get `$schema` added, since the suite leaves the draft to the runner.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

DRAFTS = {"draft7": "http://json-schema.org/draft-07/schema#",
          "draft2020-12": "https://json-schema.org/draft/2020-12/schema"}
PARTS = {"required": "", "optional": "optional", "format": "optional/format"}
REMOTES_URL = "http://localhost:1234/"


def main(argv: list[str] | None = None) -> int:
    """Compare the verdicts and print one table (and the disagreements with `--list`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", type=Path, help="a JSON-Schema-Test-Suite checkout")
    parser.add_argument("--list", action="store_true", help="print every disagreement")
    args = parser.parse_args(argv)
    if args.suite is None or not (args.suite / "tests").is_dir():
        print("skipped: give the path of a JSON-Schema-Test-Suite checkout "
              "(git clone https://github.com/json-schema-org/JSON-Schema-Test-Suite)")
        return 0
    print(f"{'draft':<13}{'part':<10}{'tests':>7}{'toolcaller wrong':>18}{'remote':>8}"
          f"{'format':>8}{'other':>7}{'jsonschema wrong':>18}{'disagree':>10}")
    disagreements: list[str] = []
    for draft, dialect in DRAFTS.items():
        registry = _remotes(args.suite / "remotes", dialect)
        for part, folder in PARTS.items():
            counts = Counter[str]()
            for path in sorted((args.suite / "tests" / draft / folder).glob("*.json")):
                where = "/".join(filter(None, (draft, folder, path.name)))
                disagreements += [f"{where}: {line}"
                                  for line in _run_file(path, dialect, registry, counts)]
            print(f"{draft:<13}{part:<10}{counts['tests']:>7}{counts['ours']:>18}"
                  f"{counts['remote']:>8}{counts['format']:>8}{counts['other']:>7}"
                  f"{counts['theirs']:>18}{counts['differ']:>10}")
    if args.list:
        print("\n".join(disagreements))
    return 0


def _run_file(path: Path, dialect: str, registry: Any, counts: Counter[str]) -> list[str]:
    from toolcaller.core.validation import ParamsValidator

    lines = []
    for group in json.loads(path.read_text(encoding="utf-8")):
        schema = group["schema"]
        if isinstance(schema, dict) and "$schema" not in schema:
            schema = {"$schema": dialect, **schema}
        ours = ParamsValidator(schema)
        theirs = _reference(schema, registry)
        for test in group["tests"]:
            counts["tests"] += 1
            mine = None if ours.problem else ours.is_valid(test["data"])
            other = _verdict(theirs, test["data"])
            if mine is not test["valid"]:
                counts["ours"] += 1
                counts[_cause(path, ours.problem)] += 1
            counts["theirs"] += other is not test["valid"]
            if mine is not other:
                counts["differ"] += 1
                lines.append(f"{group['description']} / {test['description']}: "
                             f"expected {test['valid']}, toolcaller {_word(mine, ours.problem)}, "
                             f"jsonschema {_word(other, None)}")
    return lines


def _cause(path: Path, problem: str | None) -> str:
    if problem and ("remote references" in problem or "localhost:1234" in problem):
        return "remote"
    return "format" if path.name == "format.json" and path.parent.name.startswith("draft") \
        else "other"


def _reference(schema: Any, registry: Any) -> Any:
    import warnings

    from jsonschema import validators

    try:
        with warnings.catch_warnings():  # an unknown $schema: jsonschema warns and uses 2020-12
            warnings.simplefilter("ignore", DeprecationWarning)
            cls = validators.validator_for(schema)
        return cls(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)
    except Exception as exc:  # noqa: BLE001 - a schema jsonschema refuses is a verdict too
        return exc


def _verdict(validator: Any, data: Any) -> bool | None:
    if isinstance(validator, Exception):
        return None
    try:
        return bool(validator.is_valid(data))
    except Exception:  # noqa: BLE001 - jsonschema raising on an instance: no verdict
        return None


def _word(verdict: bool | None, problem: str | None) -> str:
    if verdict is None:
        return f"unusable ({problem[:60]})" if problem else "raised"
    return "valid" if verdict else "invalid"


def _remotes(folder: Path, dialect: str) -> Any:
    """The suite's remote schemas, in the draft under test unless they say theirs."""
    from referencing import Registry, Resource
    from referencing.jsonschema import specification_with

    default = specification_with(dialect)
    resources = []
    for path in sorted(folder.rglob("*.json")):
        uri = REMOTES_URL + path.relative_to(folder).as_posix()
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append((uri, Resource.from_contents(contents, default_specification=default)))
    return Registry().with_resources(resources)


if __name__ == "__main__":
    sys.exit(main())

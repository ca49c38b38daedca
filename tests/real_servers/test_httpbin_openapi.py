"""httpbin's own OpenAPI document, loaded from a registry file, all 78 operations called once.

With default options: text and JSON answers succeed (none ends PARSE_ERROR), binary answers
come back under `format: raw` as `{mediaType, base64}`, the auth operations succeed with
credentials read from the environment, and the form-encoded operations send forms.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.real_servers.conftest import write_registry
from toolcaller import ToolCaller

pytestmark = [pytest.mark.integration, pytest.mark.slow]

USER, PASSWORD, TOKEN = "ada", "pw-8c1e5b72", "tok-61d2f0a9"
BINARY = {"application/octet-stream", "image/jpeg", "image/png", "image/webp"}
PARAMS: dict[str, Any] = {
    "n": 3, "offset": 0, "delay": 1, "codes": "200", "user": USER, "passwd": PASSWORD,
    "qop": "auth", "algorithm": "MD5", "stale_after": "never", "etag": "abc", "numbytes": 10,
    "duration": 0.5, "name": "k", "value": "v", "anything": "x", "url": "/get",
    "status_code": 302, "freeform": {"k": "v"},
}
PER_PATH: dict[str, dict[str, Any]] = {
    "/base64/{value}": {"value": base64.b64encode(b"hello world").decode()},
    "/cache/{value}": {"value": 60},
}
EXPECTED_FAILURES = {
    # digest authentication is not one of the credentials toolcaller sends
    "httpbin.get_digest_auth_qop_user_passwd": 401,
    "httpbin.get_digest_auth_qop_user_passwd_algorithm": 401,
    "httpbin.get_digest_auth_qop_user_passwd_algorithm_stale_after": 401,
    # /image answers 406 without an Accept header, which its document does not declare
    "httpbin.get_image": 406,
    # httpbin reads `url` from the query string only, which these operations do not declare
    # (POST and PUT declare it as form data): it redirects to "None", a 404
    "httpbin.delete_redirect_to": 404, "httpbin.patch_redirect_to": 404,
    "httpbin.trace_redirect_to": 404, "httpbin.post_redirect_to": 404,
    "httpbin.put_redirect_to": 404,
}


@pytest.fixture(scope="module")
def registry(httpbin_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry with httpbin's served document as a file beside it, and credentials."""
    folder = tmp_path_factory.mktemp("httpbin")
    (folder / "specs").mkdir()
    spec = httpx.get(f"{httpbin_url}/spec.json", timeout=10, trust_env=False).text
    (folder / "specs" / "httpbin.json").write_text(spec)
    credentials = {
        "basic": {"type": "basic", "username": "${TC_HB_USER}", "password": "${TC_HB_PASSWORD}",
                  "include": "name:*basic_auth*"},
        "bearer": {"type": "bearer", "token": "${TC_HB_TOKEN}", "include": "name:*bearer"},
    }
    return write_registry(folder, {"openapi": {
        "httpbin": {"document": "specs/httpbin.json", "baseUrl": httpbin_url,
                    "security": credentials},
        "echo": {"document": "specs/httpbin.json", "baseUrl": f"{httpbin_url}/anything",
                 "include": "name:*redirect_to"},
    }})


@pytest.fixture(scope="module")
def outcomes(registry: Path) -> dict[str, dict[str, Any]]:
    """Every operation called once, with plausible params and default options."""
    patch = pytest.MonkeyPatch()
    patch.setenv("TC_HB_USER", USER)
    patch.setenv("TC_HB_PASSWORD", PASSWORD)
    patch.setenv("TC_HB_TOKEN", TOKEN)
    found: dict[str, dict[str, Any]] = {}
    try:
        with ToolCaller.from_file(registry) as caller:
            for info in caller.discover("name:httpbin.*").result["tools"]:
                found[info["name"]] = call_once(caller, info)
    finally:
        patch.undo()
    return found


def call_once(caller: ToolCaller, info: dict[str, Any]) -> dict[str, Any]:
    meta = info["metadata"]["openapi"]
    declared = set(meta.get("produces", []))
    props = info["paramsSchema"].get("properties", {})
    given = {**PARAMS, **PER_PATH.get(meta["path"], {})}
    params = {k: given[k] for k in props if k in given}
    fmt = "raw" if declared and declared <= BINARY else "json"
    return caller.handle({"toolName": info["name"], "params": params,
                          "options": {"format": fmt}})


def test_all_78_operations_are_called(outcomes: dict[str, dict[str, Any]]) -> None:
    """httpbin's document has 78 operations, every one a tool called once."""
    assert len(outcomes) == 78


def test_no_text_or_json_answer_is_a_parse_error(outcomes: dict[str, dict[str, Any]]) -> None:
    """HTML, XML, robots.txt, JSON Lines streams, empty bodies: none ends PARSE_ERROR."""
    parse_errors = {n: e["error"]["message"] for n, e in outcomes.items()
                    if not e["success"] and e["error"]["code"] == "PARSE_ERROR"}
    assert parse_errors == {}


def test_every_other_operation_succeeds(outcomes: dict[str, dict[str, Any]]) -> None:
    """Only the operations httpbin itself refuses fail, each with its HTTP status."""
    failed = {n: (e["error"]["code"], (e["error"].get("details") or {}).get("status"))
              for n, e in outcomes.items() if not e["success"]}
    assert failed == {n: ("EXECUTION_ERROR", s) for n, s in EXPECTED_FAILURES.items()}


@pytest.mark.parametrize(("name", "expected"), [
    ("httpbin.get_html", str), ("httpbin.get_xml", str), ("httpbin.get_robots_txt", str),
    ("httpbin.get_deny", str), ("httpbin.get_base64_value", str), ("httpbin.get_uuid", dict),
    ("httpbin.get_stream_n", list), ("httpbin.get_status_codes", type(None)),
    ("httpbin.get_image_svg", str),
])
def test_results_take_the_shape_of_their_media_type(
        outcomes: dict[str, dict[str, Any]], name: str, expected: type) -> None:
    """Text is a string, JSON is data, JSON Lines a list, an empty body null."""
    assert isinstance(outcomes[name]["result"], expected), outcomes[name]


def test_binary_answers_are_base64_under_raw(outcomes: dict[str, dict[str, Any]]) -> None:
    """Under format raw, bytes are standard base64 with their media type."""
    png = outcomes["httpbin.get_image_png"]["result"]
    assert png["mediaType"] == "image/png"
    assert base64.b64decode(png["base64"], validate=True).startswith(b"\x89PNG")
    assert len(base64.b64decode(outcomes["httpbin.get_bytes_n"]["result"]["base64"])) == 3


def test_binary_under_json_says_use_raw(registry: Path) -> None:
    """A binary answer under format json is PARSE_ERROR saying to use raw."""
    with ToolCaller.from_file(registry) as caller:
        envelope = caller.handle({"toolName": "httpbin.get_image_png"})
    assert envelope["error"]["code"] == "PARSE_ERROR"
    assert "format 'raw'" in envelope["error"]["message"]


def test_auth_operations_succeed_with_credentials_from_the_environment(
        outcomes: dict[str, dict[str, Any]]) -> None:
    """Basic (plain and hidden) and bearer credentials come from ${VAR}s, never shown."""
    assert outcomes["httpbin.get_basic_auth_user_passwd"]["result"] == {
        "authenticated": True, "user": USER}
    assert outcomes["httpbin.get_hidden_basic_auth_user_passwd"]["result"]["authenticated"]
    assert outcomes["httpbin.get_bearer"]["result"] == {"authenticated": True, "token": TOKEN}
    digest = outcomes["httpbin.get_digest_auth_qop_user_passwd"]
    assert PASSWORD not in str(digest)
    assert "get_digest_auth_qop_user_passwd" in digest["error"]["message"]  # name unmasked


def test_form_encoded_operations_send_forms(registry: Path) -> None:
    """POST and PUT /redirect-to declare form data: sent as a form (to httpbin's echo)."""
    with ToolCaller.from_file(registry) as caller:
        for name in ("echo.post_redirect_to", "echo.put_redirect_to"):
            envelope = caller.handle({"toolName": name,
                                      "params": {"url": "/get", "status_code": 307}})
            assert envelope["success"], envelope
            assert envelope["result"]["form"] == {"url": "/get", "status_code": "307"}
            assert envelope["result"]["headers"]["Content-Type"] == (
                "application/x-www-form-urlencoded")


def test_query_objects_follow_the_documents_style(outcomes: dict[str, dict[str, Any]]) -> None:
    """`freeform` (style form, explode) is sent as k=v, not as JSON text."""
    assert outcomes["httpbin.get_response_headers"]["result"]["k"] == "v"

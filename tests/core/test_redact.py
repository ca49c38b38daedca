"""`toolcaller.core.redact`: secrets by name, by schema and by shape become *** (rule 8)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from toolcaller.core.redact import (
    MASK,
    collect_secrets,
    is_secret_name,
    mask_text,
    redact_params,
    redact_value,
    secret_names_in_schema,
)

SECRET_NAMES = ["password", "Password", "PASSWD", "passphrase", "pwd", "db_password",
                "client_secret", "access_token", "refresh-token", "api_key", "apiKey",
                "API Key", "x-api-key", "Authorization", "auth", "cookie", "Set-Cookie",
                "credentials", "private_key", "session_id", "AWS_SECRET_ACCESS_KEY",
                "GITHUB_TOKEN", "bearer", "signature"]
PLAIN_NAMES = ["username", "name", "text", "key", "author", "path", "url", "id", "count",
               "description", "passenger"]

JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
TOKENS = [
    ("openai", "sk-" + "Ab1" * 12),
    ("openai-project", "sk-proj-" + "Ab1" * 12),
    ("anthropic", "sk-ant-" + "api03_" + "x" * 30),
    ("github", "ghp_" + "A1b2" * 9),
    ("github-fine", "github_pat_" + "A1b2" * 10),
    ("gitlab", "glpat-" + "x" * 20),
    ("aws", "AKIAIOSFODNN7EXAMPLE"),
    ("slack", "xoxb-1234567890-abcdefghij"),
    ("google", "AIza" + "S" * 35),
    ("jwt", JWT),
]
NOT_TOKENS = ["hello world, nothing secret here", "sk-short",
              "550e8400-e29b-41d4-a716-446655440000", "ghp_tooShort", "the task-manager runs"]


class TestSecretNames:
    @pytest.mark.parametrize("name", SECRET_NAMES)
    def test_secret_looking_names(self, name: str) -> None:
        """Names that look like secrets are recognised, whatever the case or separator."""
        assert is_secret_name(name)

    @pytest.mark.parametrize("name", PLAIN_NAMES)
    def test_plain_names(self, name: str) -> None:
        """Ordinary names are not secret."""
        assert not is_secret_name(name)


class TestSchemaSecrets:
    def test_write_only_and_password_format(self) -> None:
        """Properties marked writeOnly or format password are secret, at any depth."""
        schema = {
            "type": "object",
            "properties": {
                "pin": {"type": "string", "writeOnly": True},
                "phrase": {"type": "string", "format": "password"},
                "visible": {"type": "string", "writeOnly": False},
                "nested": {"type": "object", "properties": {
                    "otp": {"type": "string", "writeOnly": True}}},
                "list": {"type": "array", "items": {"type": "object", "properties": {
                    "code": {"type": "string", "format": "password"}}}},
            },
            "$defs": {"Cred": {"properties": {"vault": {"writeOnly": True}}}},
        }
        assert secret_names_in_schema(schema) == {"pin", "phrase", "otp", "code", "vault"}

    @pytest.mark.parametrize("schema", [True, False, {}, None, [], {"properties": 3}],
                             ids=["true", "false", "empty", "none", "list", "bad-properties"])
    def test_odd_schemas(self, schema: Any) -> None:
        """Odd or boolean schemas have no secret names (and do not crash)."""
        assert secret_names_in_schema(schema) == frozenset()


class TestRedactParams:
    def test_masks_values_under_secret_keys(self) -> None:
        """Values under secret-looking keys become ***, at any depth, lists included."""
        params = {"user": "bob", "password": "hunter22",
                  "nested": {"api_key": 12345, "list": [{"token": "t-1234"}]},
                  "empty": None, "Authorization": {"scheme": "basic"}}
        original = copy.deepcopy(params)
        out = redact_params(params)
        assert out == {"user": "bob", "password": MASK,
                       "nested": {"api_key": MASK, "list": [{"token": MASK}]},
                       "empty": None, "Authorization": MASK}
        assert params == original  # not mutated

    def test_none_under_a_secret_key_stays_none(self) -> None:
        """A secret key with a null value stays null (nothing to hide)."""
        assert redact_params({"password": None}) == {"password": None}

    def test_schema_keys(self) -> None:
        """Extra secret keys (from a schema) are masked too."""
        assert redact_params({"pin": "1234", "n": 1}, {"pin"}) == {"pin": MASK, "n": 1}

    def test_tokens_in_ordinary_values(self) -> None:
        """Token-shaped strings are masked under ordinary keys as well."""
        out = redact_params({"note": f"use {JWT} please", "items": [TOKENS[3][1]]})
        assert JWT not in str(out)
        assert out["items"] == [MASK]

    def test_scalars_pass(self) -> None:
        """Non-container params come back as they are."""
        assert redact_params(5) == 5
        assert redact_params(None) is None


class TestMaskText:
    @pytest.mark.parametrize("token", [t[1] for t in TOKENS], ids=[t[0] for t in TOKENS])
    def test_well_known_tokens(self, token: str) -> None:
        """Strings shaped like well-known tokens are masked inside any text."""
        masked = mask_text(f"request failed with key {token} (denied)")
        assert token not in masked
        assert MASK in masked
        assert masked.startswith("request failed with key ")

    @pytest.mark.parametrize(
        "text", ["Authorization: Bearer abc.def-ghi_jkl", "Authorization: Basic dXNlcjpwYXNz",
                 "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----"],
        ids=["bearer", "basic", "pem"],
    )
    def test_credentials_in_headers_and_pem(self, text: str) -> None:
        """Bearer and Basic credentials and PEM private keys are masked."""
        masked = mask_text(text)
        assert MASK in masked
        assert "abc.def" not in masked
        assert "dXNlcjpwYXNz" not in masked
        assert "MIIEabc" not in masked

    @pytest.mark.parametrize("text", NOT_TOKENS)
    def test_ordinary_text_unchanged(self, text: str) -> None:
        """Text with no token and no known secret is unchanged."""
        assert mask_text(text) == text

    def test_known_secrets(self) -> None:
        """Known secret values are masked wherever they appear, longest first."""
        text = "login as bob with hunter22 (prefix hunter)"
        expected = f"login as bob with {MASK} (prefix {MASK})"
        assert mask_text(text, ["hunter", "hunter22"]) == expected

    def test_short_secrets_are_not_masked(self) -> None:
        """Secrets shorter than 4 characters are not masked (they would mask everything)."""
        assert mask_text("a b c", ["a", "ab"]) == "a b c"


    @pytest.mark.parametrize(("text", "expected"), [
        ("tool 'httpbin.get_basic_auth_user_passwd' failed",
         "tool 'httpbin.get_basic_auth_user_passwd' failed"),
        ("GET http://h/basic-auth/user/passwd answered 401",
         f"GET http://h/basic-auth/user/{MASK} answered 401"),
        ("read /tmp/passwd.txt, config.passwd, my-passwd", "read /tmp/passwd.txt, config.passwd, "
                                                           "my-passwd"),
        ("password=passwd; then passwd.", f"password={MASK}; then {MASK}."),
    ], ids=["tool-name", "path-segment", "file-names", "value-and-sentence-end"])
    def test_known_secrets_mask_whole_tokens_only(self, text: str, expected: str) -> None:
        """A secret value masks whole values and tokens, never a part of a name or file name."""
        assert mask_text(text, ["passwd"]) == expected

    @pytest.mark.parametrize("text", ["GET http://h/bearer answered 401 UNAUTHORIZED",
                                      "the bearer answered slowly",
                                      "Basic setupguide follows", "GET /basic-auth/u/p"],
                             ids=["bearer-path", "bearer-word", "basic-word", "basic-path"])
    def test_auth_scheme_words_do_not_swallow_the_next_word(self, text: str) -> None:
        """The words Bearer and Basic mask only credentials after them, not ordinary words."""
        assert mask_text(text) == text


class TestRedactValue:
    def test_known_secrets_in_nested_details(self) -> None:
        """Known secrets are masked in strings of nested details; keys and numbers stay."""
        details = {"traceback": "... password=hunter22 ...", "attempts": [
            {"message": "bad hunter22", "duration": 1.5}], "count": 2}
        out = redact_value(details, {"hunter22"})
        assert "hunter22" not in str(out)
        assert out["attempts"][0]["duration"] == 1.5
        assert out["count"] == 2

    def test_secret_keys_in_details(self) -> None:
        """Details holding a secret-named key are masked under it."""
        assert redact_value({"headers": {"Authorization": "xyz"}}) == {
            "headers": {"Authorization": MASK}}


class TestCollectSecrets:
    def test_collects_values_under_secret_keys(self) -> None:
        """Values under secret keys are collected (strings, numbers, nested) to mask in text."""
        params = {"user": "bob", "password": "hunter22", "pin": 123456,
                  "auth": {"user": "u", "pass": ["p-one", "p-two"]},
                  "deep": [{"token": "t-123"}], "flag": True}
        found = collect_secrets(params, {"pin"})
        assert found == {"hunter22", "123456", "u", "p-one", "p-two", "t-123"}

    def test_nothing_secret(self) -> None:
        """Params with no secret keys give no secrets."""
        assert collect_secrets({"a": "b", "c": [1, 2]}) == set()
        assert collect_secrets("not a dict") == set()

"""Planted secrets of every kind a secret scanner finds, for the hardening tests.

`PLANTED` maps a kind to a text holding one secret; `SECRET_PARTS` are substrings of the
secrets that must never appear in any output or file.
"""

from __future__ import annotations

import json

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAzPemSecretBodyLine1xyzxyz\n"
    "PemSecretBodyLine2abcabc\n-----END RSA PRIVATE KEY-----"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJqd3RzZWNyZXQxMjM0NSJ9."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJVadQssw5c"
)
PLANTED: dict[str, str] = {
    "openai": "key sk-FAKEopenaiSECRET0123456789abcd here",
    "openai_project": "sk-proj-FAKEprojSECRET0123456789abcdEF",
    "anthropic": "sk-ant-api03-FAKEanthSECRET0123456789",
    "aws_access_key": "AKIAFAKESECRET123456",
    "aws_secret_key": "aws_secret_access_key = wJalrFAKEsecretKEYabcdefghij0123456789XY",
    "github_classic": "ghp_FAKEghSECRET0123456789abcdefghijklmn",
    "github_fine": "github_pat_11FAKEghpatSECRET0123456789_abcdefghijkl",
    "slack": "xoxb-123456-FAKEslackSECRET",
    "google": "AIzaFAKEgoogleSECRET0123456789abcdefghi",
    "stripe": "sk_live_FAKEstripeSECRET0123456789",
    "huggingface": "hf_FAKEhuggingSECRET0123456789abcdefgh",
    "bearer": "Authorization: Bearer FAKEbearerSECRETtoken.abc-123",
    "jwt": f"session {JWT}",
    "url_password": "postgres://admin:FAKEurlSECRETpw@db.internal:5432/app",
    "pem": PEM,
    "password_line": "DB_PASSWORD=FAKEdbSECRETpass\nSERVICE_API_KEY=FAKEsvcSECRETkey",
    "tool_arguments": json.dumps(
        {"user": "bob", "password": "FAKEtoolSECRETpw", "api_key": "FAKEtoolSECRETkey"}
    ),
}
SECRET_PARTS = (
    "FAKEopenaiSECRET",
    "FAKEprojSECRET",
    "FAKEanthSECRET",
    "AKIAFAKESECRET",
    "wJalrFAKEsecret",
    "FAKEghSECRET",
    "FAKEghpatSECRET",
    "FAKEslackSECRET",
    "FAKEgoogleSECRET",
    "FAKEstripeSECRET",
    "FAKEhuggingSECRET",
    "FAKEbearerSECRET",
    "eyJzdWIiOiJqd3RzZWNyZXQxMjM0NSJ9",
    "FAKEurlSECRET",
    "PemSecretBody",
    "FAKEdbSECRET",
    "FAKEsvcSECRET",
    "FAKEtoolSECRET",
)


def leaks(data: bytes | str) -> list[str]:
    """The secret parts found in `data` (empty: nothing leaked)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [part for part in SECRET_PARTS if part in text]

"""Keeping secrets out of everything a runtime reports: errors, stderr lines, launch summaries.

A ``Redactor`` knows the resolved values of a server's secret references and sensitive
literals and replaces them in every encoding (raw, repr, bytes repr, JSON, URL-encoded, each
line of a multi-line value; see ``clawplane.secrets.redaction``), every other value this
process resolved, and any ``user:password@`` in URLs, with ``<redacted>``. The
launch summary follows OpenClaw's ``describeStdioMcpServerLaunchConfig``: the command,
its arguments with values of secret-looking flags replaced by ``***``, and ``(cwd=…)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from clawplane.models import McpServerSpec, SecretValue, Transport, is_reference
from clawplane.naming import is_sensitive_key, redact_url_userinfo
from clawplane.secrets import ValueRedactor, redact

__all__ = ["Redactor", "describe_launch", "redact_argv", "redact_url"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>]+")

# OpenClaw src/config/redact-argv.ts: flags whose value is a secret.
_SECRET_FLAGS = frozenset(
    {
        "--token", "--api-key", "--apikey", "--secret", "--password", "--provider-env",
        "--auth-token", "--access-token", "--refresh-token", "--client-secret", "--hook-token",
        "--gateway-token", "--bot-token", "--app-token", "--remote-token", "--push-token",
        "--webhook-secret", "--webhook-token", "--service-account-token",
        "--op-service-account-token", "--bearer", "--bearer-token", "--pat",
        "--personal-access-token", "--oauth-token", "--id-token", "--identity-token",
        "--session-token", "--service-token", "--private-key", "--recovery-key", "--gateway-key",
        "--session-key", "--active-key",
    }
)  # fmt: skip
_SECRET_FLAG_SUFFIX = re.compile(
    r"^--(?:[a-z0-9]+(?:[-_][a-z0-9]+)*[-_])?(?:token|secret|password|passwd|passphrase|pin|"
    r"api[-_]?key|api[-_]?secret|secret[-_]?key|secret[-_]?access[-_]?key|access[-_]?key(?:[-_]?id)?|"
    r"account[-_]?key|client[-_]?key|consumer[-_]?key|license[-_]?key|subscription[-_]?key|webhook|"
    r"credentials?|creds?|auth(?:orization)?|bearer|pat|cookie|private[-_]?key|recovery[-_]?key|"
    r"signing[-_]?key|encryption[-_]?key|master[-_]?key|session[-_]?key|gateway[-_]?key|"
    r"service[-_]?key|hook[-_]?key)$"
)
_SECRET_QUERY_NAMES = frozenset(
    {
        "token", "key", "api_key", "apikey", "secret", "access_token", "auth_token", "password",
        "pass", "passwd", "auth", "jwt", "session", "id_token", "code", "client_secret",
        "app_secret", "hook_token", "refresh_token", "signature", "x_amz_signature",
        "x_amz_security_token", "private_key", "credential", "authorization", "sig", "x_api_key",
        "x_access_token", "x_auth_token",
    }
)  # fmt: skip


class Redactor:
    """Replaces known secret values and URL credentials in text with ``<redacted>``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = tuple(dict.fromkeys(secrets))
        self._values = ValueRedactor(self._secrets)

    @classmethod
    def for_values(cls, declared: Mapping[str, SecretValue], resolved: Mapping[str, str]) -> Redactor:
        """A redactor for the resolved ``env``/``headers`` values that are references or sensitive."""
        secret = [
            resolved[key]
            for key, value in declared.items()
            if key in resolved and (is_reference(value) or is_sensitive_key(key))
        ]
        return cls(secret)

    def extend(self, other: Redactor) -> Redactor:
        """A redactor that knows the secrets of both."""
        return Redactor([*self._secrets, *other._secrets])

    def __call__(self, text: str) -> str:
        """``text`` with every known secret and URL credential replaced."""
        # The process-wide pass first: it takes bearer tokens out whole before a value that is a
        # token's first characters could cut one in two.
        text = self._values(redact(text))
        return _URL.sub(lambda m: redact_url(m.group(0)), text)


def redact_url(url: str) -> str:
    """A URL with its userinfo and secret-looking query values replaced."""
    url, _ = redact_url_userinfo(url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.query:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(_secret_query_name(name) for name, _ in pairs):
        return url
    query = urlencode([(n, "***" if _secret_query_name(n) else v) for n, v in pairs], safe="*")
    return urlunsplit(parts._replace(query=query))


def _secret_query_name(name: str) -> bool:
    key = name.strip().lower().replace("-", "_")
    return key in _SECRET_QUERY_NAMES or key.endswith("_token") or key == "token"


def redact_argv(argv: Sequence[str]) -> list[str]:
    """Arguments with the values of secret flags (``--token x``, ``--api-key=x``) set to ``***``."""
    result: list[str] = []
    redact_next = False
    for arg in argv:
        if redact_next:
            result.append("***")
            redact_next = False
            continue
        flag = arg.split("=", 1)[0].lower() if arg.startswith("--") else None
        if flag is not None and (flag in _SECRET_FLAGS or _SECRET_FLAG_SUFFIX.match(flag)):
            if "=" in arg:
                result.append(f"{arg.split('=', 1)[0]}=***")
            else:
                result.append(arg)
                redact_next = True
            continue
        result.append(redact_url(arg) if _URL.fullmatch(arg) else arg)
    return result


def describe_launch(spec: McpServerSpec) -> str:
    """OpenClaw's launch summary: ``command args (cwd=…)`` for stdio, the redacted URL otherwise."""
    if spec.effective_transport is Transport.STDIO:
        args = redact_argv(spec.args)
        text = " ".join([spec.command or "", *args])
        return f"{text} (cwd={spec.cwd})" if spec.cwd else text
    return redact_url(spec.url or "")

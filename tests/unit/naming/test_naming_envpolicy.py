"""The stdio env blocklist is exactly the one measured from OpenClaw 2026.9.6 (section b)."""

import pytest

from clawplane.naming import (
    BLOCKED_ENV_NAMES,
    BLOCKED_ENV_PREFIXES,
    MCP_EXPLICIT_CREDENTIAL_KEYS,
    is_blocked_env_name,
)

_KEPT_POLICY_NAMES_TEXT = """
ALL_PROXY AMQP_URL AWS_ACCESS_KEY_ID AWS_CONFIG_FILE AWS_SECRET_ACCESS_KEY AWS_SECURITY_TOKEN
AWS_SESSION_TOKEN AWS_SHARED_CREDENTIALS_FILE AWS_WEB_IDENTITY_TOKEN_FILE AZURE_AUTH_LOCATION
AZURE_CLIENT_ID AZURE_CLIENT_SECRET CURL_CA_BUNDLE DATABASE_URL DOCKER_CERT_PATH DOCKER_CONTEXT
DOCKER_HOST DOCKER_TLS_VERIFY GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GIT_PAGER
GOOGLE_APPLICATION_CREDENTIALS GRADLE_USER_HOME HISTFILE HOME HTTPS_PROXY HTTP_PROXY KUBECONFIG
MANPAGER MONGODB_URI NODE_AUTH_TOKEN NODE_EXTRA_CA_CERTS NODE_TLS_REJECT_UNAUTHORIZED NO_PROXY
NPM_TOKEN PAGER REDIS_URL REQUESTS_CA_BUNDLE RUSTUP_DIST_ROOT RUSTUP_DIST_SERVER RUSTUP_HOME
RUSTUP_TOOLCHAIN RUSTUP_UPDATE_ROOT SSH_AUTH_SOCK SSL_CERT_DIR SSL_CERT_FILE SYSTEMROOT WINDIR
XDG_CACHE_HOME XDG_CONFIG_DIRS XDG_CONFIG_HOME XDG_DATA_DIRS XDG_DATA_HOME XDG_RUNTIME_DIR
XDG_STATE_HOME ZDOTDIR
"""
KEPT_POLICY_NAMES = _KEPT_POLICY_NAMES_TEXT.split()


def test_blocklist_has_exactly_194_upper_case_names() -> None:
    assert len(BLOCKED_ENV_NAMES) == 194
    assert all(name == name.upper().strip() for name in BLOCKED_ENV_NAMES)


def test_blocked_prefixes_are_dyld_ld_and_bash_func() -> None:
    assert BLOCKED_ENV_PREFIXES == ("DYLD_", "LD_", "BASH_FUNC_")


def test_the_57_policy_names_openclaw_keeps_for_mcp_are_not_blocked() -> None:
    assert len(set(KEPT_POLICY_NAMES)) == 57
    assert [name for name in KEPT_POLICY_NAMES if is_blocked_env_name(name)] == []


def test_the_15_explicit_credential_keys_are_kept_policy_names() -> None:
    assert len(MCP_EXPLICIT_CREDENTIAL_KEYS) == 15
    assert set(KEPT_POLICY_NAMES) >= MCP_EXPLICIT_CREDENTIAL_KEYS
    assert not any(is_blocked_env_name(name) for name in MCP_EXPLICIT_CREDENTIAL_KEYS)


def test_every_listed_name_is_blocked() -> None:
    assert all(is_blocked_env_name(name) for name in BLOCKED_ENV_NAMES)


@pytest.mark.parametrize(
    "key",
    [
        "NODE_OPTIONS",
        "node_options",
        " NODE_OPTIONS ",
        "ld_library_path",
        "LD_PRELOAD",
        "dyld_insert_libraries",
        "BASH_FUNC_foo%%",
        "_JAVA_OPTIONS",
    ],
)
def test_blocked_names_are_matched_trimmed_and_case_insensitively(key: str) -> None:
    assert is_blocked_env_name(key)


@pytest.mark.parametrize(
    "key",
    [
        "PATH",
        "HOME",
        "FOO",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "NPM_CONFIG_REGISTRY",
        "CARGO_REGISTRIES_X_TOKEN",
        "TF_VAR_region",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER",
        "LD",
        "",
    ],
)
def test_unlisted_and_override_only_names_are_kept(key: str) -> None:
    assert not is_blocked_env_name(key)

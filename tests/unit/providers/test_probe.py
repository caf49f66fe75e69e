"""The provider probe against our loopback fake: ready, failing and slow, in every API it lists."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.fixtures.providers.fake_provider import FakeProvider

from clawplane.models import ModelProviderSpec
from clawplane.models.values import SecretValue, ValueFrom
from clawplane.providers import ANTHROPIC_VERSION, ProbeResult, probe_provider
from clawplane.secrets import SecretError

pytestmark = pytest.mark.anyio
CANARY = "sk-canary-7f3a9e1b2c4d"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def spec(base_url: str | None, **extra: Any) -> ModelProviderSpec:
    doc: dict[str, Any] = {"apiKey": {"valueFrom": {"env": "KEY"}}, "models": [], **extra}
    if base_url is not None:
        doc["baseUrl"] = base_url
    return ModelProviderSpec.model_validate(doc)


def resolver(env: dict[str, str]) -> Any:
    async def resolve(value: SecretValue) -> str:
        if not isinstance(value, ValueFrom):
            return str(value)
        name = value.value_from.env
        if name is None or name not in env:
            raise SecretError(f"environment variable {name} is not set")
        return env[name]

    return resolve


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(flavor="openai", key=CANARY, models=["llama-3.1-8b", "qwen2.5-coder"]) as server:
        yield server


def no_canary(result: ProbeResult) -> None:
    assert CANARY not in repr(result)
    assert CANARY[4:] not in repr(result)


async def test_openai_compatible_provider_lists_its_models(fake: FakeProvider) -> None:
    result = await probe_provider(spec(fake.base_url), resolve=resolver({"KEY": CANARY}))
    assert result.ready and result.reason == "ModelsListed"
    assert [m.id for m in result.models] == ["llama-3.1-8b", "qwen2.5-coder"]
    assert result.endpoint == f"{fake.base_url}/models"
    assert result.message == f"2 models listed at {fake.base_url}/models"
    [seen] = fake.seen()
    assert seen.path == "/v1/models" and seen.authorized
    no_canary(result)


@pytest.mark.parametrize(
    ("flavor", "api"),
    [("anthropic", "anthropic-messages"), ("google", "google-generative-ai"), ("ollama", "ollama")],
)
async def test_other_apis_list_the_way_their_own_api_does(flavor: str, api: str) -> None:
    models = [f"m{i}" for i in range(5)]
    key = None if flavor == "ollama" else CANARY
    with FakeProvider(flavor=flavor, key=key, models=models, page_size=2) as server:
        result = await probe_provider(spec(server.base_url, api=api), resolve=resolver({"KEY": CANARY}))
        assert result.ready, result
        assert [m.id for m in result.models] == models
        seen = server.seen()
    if flavor == "anthropic":
        assert [s.query.get("after_id") for s in seen] == [None, ["m1"], ["m3"]]
        assert {s.anthropic_version for s in seen} == {ANTHROPIC_VERSION}
    if flavor == "google":
        assert [s.query.get("pageToken") for s in seen] == [None, ["2"], ["4"]]
        assert result.models[0].context_window == 32768
    assert all(s.authorized for s in seen)


async def test_anthropic_base_url_may_already_end_in_v1() -> None:
    with FakeProvider(flavor="anthropic", key=CANARY, models=["claude-x"]) as server:
        result = await probe_provider(
            spec(server.base_url + "/v1", api="anthropic-messages"), resolve=resolver({"KEY": CANARY})
        )
    assert result.ready and [m.id for m in result.models] == ["claude-x"]


async def test_a_wrong_key_is_unauthorized_and_the_echoed_key_never_comes_back(fake: FakeProvider) -> None:
    fake.key = "the-right-key"
    result = await probe_provider(spec(fake.base_url), resolve=resolver({"KEY": CANARY}))
    assert result.outcome == "failed" and result.reason == "Unauthorized" and result.http_status == 401
    assert "Incorrect API key provided: <redacted>" in result.message
    assert "check the API key" in result.message
    no_canary(result)


async def test_a_refused_connection_is_a_failure_with_its_cause() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = await probe_provider(spec(f"http://127.0.0.1:{port}/v1"), resolve=resolver({"KEY": CANARY}))
    assert result.outcome == "failed" and result.reason == "ConnectFailed"
    assert f"cannot connect to http://127.0.0.1:{port}/v1/models" in result.message
    assert "refused" in result.message.lower()


async def test_a_slow_provider_times_out_at_the_connection_timeout(fake: FakeProvider) -> None:
    fake.stall()
    started = time.monotonic()
    try:
        result = await probe_provider(
            spec(fake.base_url, connectionTimeoutMs=300), resolve=resolver({"KEY": CANARY})
        )
    finally:
        fake.release()
    elapsed = time.monotonic() - started
    assert result.outcome == "failed" and result.reason == "Timeout"
    assert "within 300 ms" in result.message and "connectionTimeoutMs" in result.message
    # It gave up at its own deadline, not when the fake let go (60 s).
    assert 0.3 <= elapsed < 30


@pytest.mark.parametrize(
    ("status", "body", "reason", "text"),
    [
        (404, '{"error": "not here"}', "NotFound", "check baseUrl"),
        (500, "upstream exploded", "ServerError", "answered HTTP 500: upstream exploded"),
        (200, "<html>hello</html>", "BadResponse", "did not answer with JSON"),
        (200, '{"models": []}', "BadResponse", "no 'data' list"),
        (403, f"key {CANARY} may not list", "Forbidden", "may not list models"),
    ],
)
async def test_bad_answers_are_failures_with_the_servers_own_words(
    fake: FakeProvider, status: int, body: str, reason: str, text: str
) -> None:
    fake.fail_with(status, body)
    result = await probe_provider(spec(fake.base_url), resolve=resolver({"KEY": CANARY}))
    assert result.outcome == "failed" and result.reason == reason, result
    assert text in result.message
    no_canary(result)


async def test_a_missing_secret_is_reported_without_calling_the_provider(fake: FakeProvider) -> None:
    result = await probe_provider(spec(fake.base_url), resolve=resolver({}))
    assert result.outcome == "failed" and result.reason == "SecretUnresolved"
    assert result.message == "apiKey: environment variable KEY is not set"
    assert fake.seen() == []


async def test_request_auth_overrides_how_the_key_is_sent(fake: FakeProvider) -> None:
    fake.key = "tok-123456"
    s = spec(
        fake.base_url,
        request={"auth": {"mode": "authorization-bearer", "token": {"valueFrom": {"env": "TOK"}}}},
    )
    result = await probe_provider(s, resolve=resolver({"KEY": CANARY, "TOK": "tok-123456"}))
    assert result.ready


@pytest.mark.parametrize(
    ("extra", "base", "reason"),
    [
        ({"probe": False}, "http://127.0.0.1:9/v1", "ProbeDisabled"),
        ({}, None, "NoBaseUrl"),
        ({"api": "bedrock-converse-stream"}, "http://127.0.0.1:9", "ProbeUnsupported"),
        ({"auth": "oauth"}, "http://127.0.0.1:9/v1", "ProbeUnsupported"),
    ],
)
async def test_providers_clawplane_cannot_list_are_not_probed(
    extra: dict[str, Any], base: str | None, reason: str
) -> None:
    result = await probe_provider(spec(base, **extra), resolve=resolver({"KEY": CANARY}))
    assert result.outcome == "not-probed" and result.reason == reason

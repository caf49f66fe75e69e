"""Test helpers: build resources from camelCase specs and load folders the way the engine will."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawplane.models import Agent, Channel, Gateway, McpServer, ModelProvider
from clawplane.render import RenderedConfig, render_openclaw_config
from clawplane.validation import validate_paths

API = "clawplane.dev/v1alpha1"


def _doc(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name}, "spec": spec}


def server(name: str, **spec: Any) -> McpServer:
    return McpServer.model_validate(_doc("McpServer", name, spec))


def agent(name: str, **spec: Any) -> Agent:
    return Agent.model_validate(_doc("Agent", name, spec))


def channel(name: str, **spec: Any) -> Channel:
    return Channel.model_validate(_doc("Channel", name, spec))


def provider(name: str, **spec: Any) -> ModelProvider:
    return ModelProvider.model_validate(_doc("ModelProvider", name, spec))


def gateway(**spec: Any) -> Gateway:
    return Gateway.model_validate(_doc("Gateway", "default", spec))


def hosted(*servers: McpServer, port: int = 7777) -> dict[str, str]:
    return {s.name: f"http://127.0.0.1:{port}/mcp/{s.name}" for s in servers}


def render_resources(
    *,
    gateway: Gateway | None = None,
    servers: Any = (),
    agents: Any = (),
    channels: Any = (),
    providers: Any = (),
    hosted_urls: dict[str, str] | None = None,
    base: Path = Path("/res"),
    **kwargs: Any,
) -> RenderedConfig:
    """render_openclaw_config with every resource's files under ``base``; hosted URLs default to hosted()."""
    resources = [*servers, *agents, *channels, *providers, *([gateway] if gateway else [])]
    return render_openclaw_config(
        gateway=gateway,
        servers=list(servers),
        agents=list(agents),
        channels=list(channels),
        hosted_urls=hosted(*servers) if hosted_urls is None else hosted_urls,
        base_dirs={r.key: base for r in resources},
        providers=list(providers),
        **kwargs,
    )


@dataclass
class Folder:
    """The typed resources of a folder plus each one's base directory."""

    gateway: Gateway | None = None
    servers: list[McpServer] = field(default_factory=list)
    agents: list[Agent] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    providers: list[ModelProvider] = field(default_factory=list)
    base_dirs: dict[str, Path] = field(default_factory=dict)

    def render(self, **kwargs: Any) -> RenderedConfig:
        kwargs.setdefault("hosted_urls", hosted(*self.servers))
        return render_openclaw_config(
            gateway=self.gateway,
            servers=self.servers,
            agents=self.agents,
            channels=self.channels,
            base_dirs=self.base_dirs,
            providers=self.providers,
            **kwargs,
        )


def load_folder(*paths: Path) -> Folder:
    result = validate_paths(list(paths))
    assert result.ok, "\n".join(f"{d.location}: {d.code}: {d.message}" for d in result.diagnostics.errors)
    folder = Folder()
    for item in result.resources:
        res = item.resource
        folder.base_dirs[res.key] = Path(item.source.file).resolve().parent
        if isinstance(res, Gateway):
            folder.gateway = res
        elif isinstance(res, McpServer):
            folder.servers.append(res)
        elif isinstance(res, Agent):
            folder.agents.append(res)
        elif isinstance(res, Channel):
            folder.channels.append(res)
        elif isinstance(res, ModelProvider):
            folder.providers.append(res)
    return folder


def codes(diagnostics: Any) -> list[str]:
    return [d.code for d in diagnostics]

"""The backends' resources and prompts merged natively on the agent endpoint (beside the utility tools).

Of the servers whose ``resources_list``/``prompts_list`` entry the agent sees: prompts are named
``<server>__<prompt>`` (the tools' naming code), resources keep their URIs (a client may hold
them from tool results) with names prefixed, and reads, subscriptions and completions are routed
by the URI's listing or template. The agent's skills come first in ``resources/list`` and
``resources/read`` (``skills``). ``logging/setLevel`` goes to every backend of the session.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from clawplane.jscompat import js_lower_key
from clawplane.naming import name_tools
from clawplane.runtimes.aggregate import skills as skills_ext
from clawplane.runtimes.aggregate.backend import BackendError
from clawplane.runtimes.aggregate.forwarding import Forwarding
from clawplane.runtimes.aggregate.sessions import Downstream
from clawplane.runtimes.catalog import ToolEntry, ToolKind

__all__ = ["NativeMethods", "template_pattern"]


def template_pattern(template: str) -> re.Pattern[str]:
    """An RFC 6570 template as a match for the URIs it expands to (``{+x}``/``{/x}`` span slashes)."""
    out, pos = [], 0
    for m in re.finditer(r"\{([^}]*)\}", template):
        out.append(re.escape(template[pos : m.start()]))
        out.append(".*" if m.group(1)[:1] in "+#/" else "[^/]*")
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out) + r"\Z")


class NativeMethods(Forwarding):
    """Resources, templates, prompts, subscriptions, completion and logging level, merged natively."""

    def _servers_of(self, entries: Sequence[ToolEntry], kind: ToolKind) -> list[ToolEntry]:
        return [e for e in entries if e.kind is kind]

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        out = skills_ext.skill_resources(self.catalogs.skills(agent))
        for entry in self._servers_of(await self._session_catalog(ctx, downstream), ToolKind.RESOURCES_LIST):
            for item in await self._list_all(ctx, downstream, entry.server, "resources/list", "resources"):
                uri = item.get("uri")
                if not isinstance(uri, str):
                    continue
                downstream.resources.setdefault(uri, entry.server)
                name = f"{entry.safe_server}__{item.get('name') or uri}"
                out.append(types.Resource.model_validate({**item, "name": name}, by_name=False))
        return types.ListResourcesResult(resources=out)

    async def _list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        out: list[types.ResourceTemplate] = []
        downstream.templates.clear()
        for entry in self._servers_of(await self._session_catalog(ctx, downstream), ToolKind.RESOURCES_LIST):
            listed = await self._list_all(
                ctx, downstream, entry.server, "resources/templates/list", "resourceTemplates"
            )
            for item in listed:
                template = item.get("uriTemplate")
                if not isinstance(template, str):
                    continue
                downstream.templates.append((template_pattern(template), entry.server, template))
                name = f"{entry.safe_server}__{item.get('name') or template}"
                out.append(types.ResourceTemplate.model_validate({**item, "name": name}, by_name=False))
        return types.ListResourceTemplatesResult(resource_templates=out)

    async def _owner(
        self, ctx: ServerRequestContext[Any, Any], downstream: Downstream, uri: str, servers: list[str]
    ) -> str | None:
        if len(servers) == 1:
            return servers[0]
        for attempt in range(2):
            owner = downstream.resources.get(uri)
            if owner is None:
                owner = next((s for pattern, s, _ in downstream.templates if pattern.match(uri)), None)
            if owner in servers or attempt:
                return owner if owner in servers else None
            # Not listed in this session yet: list, then look again.
            await self._list_resources(ctx, None)
            await self._list_templates(ctx, None)
        return None

    async def _resource_owner(
        self, ctx: ServerRequestContext[Any, Any], downstream: Downstream, uri: str
    ) -> str:
        """The server a URI belongs to (listed by it, or matching its template), else INVALID_PARAMS."""
        catalog = await self._session_catalog(ctx, downstream)
        servers = [e.server for e in self._servers_of(catalog, ToolKind.RESOURCES_LIST)]
        owner = await self._owner(ctx, downstream, uri, servers)
        if owner is None:
            raise MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})
        return owner

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        agent, consumer = self._agent(ctx)
        uri = str(params.uri)
        served = skills_ext.read_skill_file(self.catalogs.skills(agent), uri)
        if served is not None:
            return served
        downstream = self._downstream(ctx, agent, consumer)
        owner = await self._resource_owner(ctx, downstream, uri)
        result = await self._request(ctx, downstream, owner, "resources/read", {"uri": uri})
        return types.ReadResourceResult.model_validate(result, by_name=False)

    # -- prompts ---------------------------------------------------------------------------------
    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        out: list[types.Prompt] = []
        taken: set[str] = set()
        downstream.prompts.clear()
        for entry in self._servers_of(await self._session_catalog(ctx, downstream), ToolKind.PROMPTS_LIST):
            found = await self._list_all(ctx, downstream, entry.server, "prompts/list", "prompts")
            listed = [p for p in found if isinstance(p.get("name"), str) and p["name"].strip()]
            named = name_tools(entry.safe_server, [p["name"].strip() for p in listed], reserved=taken)
            for item, safe in zip(listed, named, strict=True):
                taken.add(js_lower_key(safe.safe))
                downstream.prompts[safe.safe] = (entry.server, item["name"].strip())
                out.append(types.Prompt.model_validate({**item, "name": safe.safe}, by_name=False))
        return types.ListPromptsResult(prompts=out)

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        if params.name not in downstream.prompts:
            await self._list_prompts(ctx, None)
        found = downstream.prompts.get(params.name)
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        server, raw = found
        request: dict[str, Any] = {"name": raw}
        if params.arguments:
            request["arguments"] = dict(params.arguments)
        result = await self._request(ctx, downstream, server, "prompts/get", request)
        return types.GetPromptResult.model_validate(result, by_name=False)

    async def _subscription(
        self, ctx: ServerRequestContext[Any, Any], uri: str, method: str
    ) -> types.EmptyResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        owner = await self._resource_owner(ctx, downstream, uri)
        try:
            backend = await self._backend(downstream, owner)
            # On the backend session's own link: the subscription lasts as long as the session.
            await backend.session_request(method, {"uri": uri})
        except BackendError as exc:
            raise MCPError(exc.code, exc.message, exc.data) from None
        return types.EmptyResult()

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        return await self._subscription(ctx, str(params.uri), "resources/subscribe")

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        return await self._subscription(ctx, str(params.uri), "resources/unsubscribe")

    async def _complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Completion of a prompt's argument (by its prefixed name) or a resource template's (by URI)."""
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        request = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        request.pop("_meta", None)
        ref = request.get("ref", {})
        if ref.get("type") == "ref/prompt":
            if ref.get("name") not in downstream.prompts:
                await self._list_prompts(ctx, None)
            found = downstream.prompts.get(str(ref.get("name")))
            if found is None:
                raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {ref.get('name')}")
            server, raw = found
            request["ref"] = {**ref, "name": raw}
        else:
            uri = str(ref.get("uri", ""))
            if not downstream.templates:
                await self._list_templates(ctx, None)
            # A template reference names the template itself, not a URI it expands to.
            server = next((s for pattern, s, text in downstream.templates if text == uri), None) or (
                await self._resource_owner(ctx, downstream, uri)
            )
        result = await self._request(ctx, downstream, server, "completion/complete", request)
        return types.CompleteResult.model_validate(result, by_name=False)

    async def _set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        downstream.log_level = str(params.level)
        for server in list(downstream.backends):
            with contextlib.suppress(MCPError):  # a server without logging ignores it
                await self._request(
                    ctx, downstream, server, "logging/setLevel", {"level": downstream.log_level}
                )
        return types.EmptyResult()

"""Model references (``Agent.spec.model``, ``agents.defaults.model``) checked against what exists.

OpenClaw 2026.9.6 splits a reference on its first ``/`` into a provider id (compared in
lower case) and a model id (src/agents/model-selection-normalize.ts); a reference without
a provider is an alias (``agents.defaults.models.<ref>.alias``) or the model id of exactly
one configured provider. OpenClaw itself checks none of this before a turn runs. Here a
reference must name a declared ModelProvider's model, or any model of one of OpenClaw's
built-in providers (``validation.modelcatalog``); anything else is an error with a
suggestion. What a provider actually serves is only known after it was probed: that check
is the planner's (a warning, see ``planning.models``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Agent, Gateway, ModelChoice, ModelProvider
from clawplane.validation.modelcatalog import builtin_providers
from clawplane.validation.rawrefs import RawResource
from clawplane.validation.result import LoadedResource
from clawplane.validation.suggest import did_you_mean

E, W = Severity.ERROR, Severity.WARNING
_OPENROUTER_AUTO = "openrouter:auto"


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A parsed reference: ``provider`` is None for a bare model id or alias."""

    provider: str | None
    model: str

    def __str__(self) -> str:
        return self.model if self.provider is None else f"{self.provider}/{self.model}"


def parse_model_ref(text: str) -> ModelRef | None:
    """OpenClaw's parse: split on the first ``/``; None for a reference it would reject."""
    trimmed = text.strip()
    if not trimmed:
        return None
    if trimmed.lower() == _OPENROUTER_AUTO:
        return ModelRef("openrouter", "auto")
    provider, slash, model = trimmed.partition("/")
    if not slash:
        return ModelRef(None, trimmed)
    provider, model = provider.strip(), model.strip()
    if not provider or not model:
        return None
    return ModelRef(provider.lower(), model)


def model_matches(model: str, declared: Iterable[str]) -> bool:
    """``model`` is a declared id, or one followed by an ``@profile`` auth-profile suffix."""
    ids = set(declared)
    if model in ids:
        return True
    head, at, _ = model.rpartition("@")
    return bool(at) and head in ids


@dataclass(frozen=True)
class ModelWorld:
    """What model references can name in one folder."""

    providers: Mapping[str, list[str] | None]
    """Declared provider id → its declared model ids (None: unknown, e.g. the resource is invalid)."""
    aliases: Mapping[str, str]
    """Alias → the ``provider/model`` it stands for (``agents.defaults.models`` in spec.config)."""
    replace_mode: bool
    plugin_paths: bool
    """The Gateway loads plugins from paths, which may register providers no catalog knows."""

    @classmethod
    def of(cls, resources: Iterable[LoadedResource], invalid: Iterable[RawResource] = ()) -> ModelWorld:
        """The world of a validated folder; ``invalid`` names resources that failed validation."""
        providers: dict[str, list[str] | None] = {}
        gateway: Gateway | None = None
        for item in resources:
            res = item.resource
            if isinstance(res, ModelProvider):
                providers[res.name.lower()] = res.spec.model_ids
            elif isinstance(res, Gateway) and gateway is None:
                gateway = res
        for failed in invalid:
            if failed.kind == "ModelProvider":
                providers.setdefault(failed.name.lower(), None)
        raw = gateway.spec.openclaw_view() if gateway is not None else {}
        return cls(
            providers=providers,
            aliases=dict(_aliases(raw)),
            replace_mode=gateway is not None and gateway.spec.models.mode == "replace",
            plugin_paths=_loads_plugin_paths(raw),
        )


def check_model_refs(
    resources: list[LoadedResource], *, invalid: Iterable[RawResource] = ()
) -> Iterator[Diagnostic]:
    """An error (with a suggestion) for every model reference that names nothing known."""
    world = ModelWorld.of(resources, invalid)
    for item in resources:
        for path, text in _refs_of(item):
            problem = _problem(text, world)
            if problem is not None:
                severity, code, message, hint = problem
                yield item.diagnostic(severity, code, message, path, hint=hint)


def _refs_of(item: LoadedResource) -> Iterator[tuple[tuple[str | int, ...], str]]:
    res = item.resource
    if isinstance(res, Agent):
        model = res.spec.model
        if isinstance(model, ModelChoice):
            if model.primary is not None:
                yield ("spec", "model", "primary"), model.primary
            for i, fallback in enumerate(model.fallbacks):
                yield ("spec", "model", "fallbacks", i), fallback
        elif model is not None:
            yield ("spec", "model"), model
    elif isinstance(res, Gateway) and res.spec.agents.defaults.model is not None:
        model = res.spec.agents.defaults.model
        base = ("spec", "agents", "defaults", "model")
        if isinstance(model, ModelChoice):
            if model.primary is not None:
                yield (*base, "primary"), model.primary
            for i, fallback in enumerate(model.fallbacks):
                yield (*base, "fallbacks", i), fallback
        else:
            yield base, model


def _problem(text: str, world: ModelWorld) -> tuple[Severity, str, str, str] | None:
    ref = parse_model_ref(text)
    if ref is None:
        return E, "model.invalid-ref", f"{text!r} is not a model reference", "write it as <provider>/<model>"
    if ref.provider is None:
        return _bare(ref.model, world)
    catalog = builtin_providers()
    if ref.provider in world.providers:
        declared = world.providers[ref.provider]
        if not declared or model_matches(ref.model, declared):
            return None
        if world.aliases.get(ref.model, "").lower().startswith(f"{ref.provider}/"):
            return None
        if catalog.is_overlay(ref.provider) and not world.replace_mode:
            return None  # a built-in provider's bundled catalog still applies in merge mode
        guess = did_you_mean(ref.model, declared)
        hint = f"did you mean {ref.provider}/{guess}?" if guess else f"declared: {', '.join(declared)}"
        message = f"ModelProvider {ref.provider!r} declares no model {ref.model!r}"
        return E, "model.unknown", message, hint
    if ref.provider in catalog.ids:
        if world.replace_mode:
            message = (
                f"{ref.provider!r} is a built-in provider, but the Gateway's models.mode is replace, "
                "so only declared ModelProviders exist"
            )
            return (
                E,
                "model.provider-not-declared",
                message,
                f"declare a ModelProvider named {ref.provider!r}",
            )
        return None
    known = sorted({*world.providers, *([] if world.replace_mode else catalog.ids)})
    guess = did_you_mean(ref.provider, known)
    hint = (
        f"did you mean {guess}/{ref.model}?" if guess else f"declare a ModelProvider named {ref.provider!r}"
    )
    message = (
        f"provider {ref.provider!r} is neither a declared ModelProvider nor one of OpenClaw "
        f"{catalog.openclaw_version}'s built-in providers"
    )
    if world.plugin_paths:
        return (
            W,
            "model.unknown-provider",
            message + " (a plugin loaded from plugins.load.paths may add it)",
            hint,
        )
    return E, "model.unknown-provider", message, hint


def _bare(model: str, world: ModelWorld) -> tuple[Severity, str, str, str] | None:
    if model in world.aliases:
        return None
    owners = sorted(p for p, ids in world.providers.items() if ids and model_matches(model, ids))
    if len(owners) == 1:
        return None
    if owners:
        message = f"model {model!r} is declared by several providers ({', '.join(owners)})"
        return E, "model.ambiguous", message, f"name the provider, e.g. {owners[0]}/{model}"
    candidates = [f"{p}/{m}" for p, ids in world.providers.items() for m in ids or []]
    guess = did_you_mean(model, sorted(world.aliases)) or _closest_model(model, candidates)
    hint = f"did you mean {guess!r}?" if guess else "write it as <provider>/<model>"
    message = f"model {model!r} names no alias and no declared provider's model"
    return E, "model.unknown", message, hint


def _closest_model(model: str, candidates: list[str]) -> str | None:
    by_id = {c.partition("/")[2]: c for c in candidates}
    guess = did_you_mean(model, sorted(by_id))
    return by_id[guess] if guess else None


def _aliases(raw: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    agents = raw.get("agents")
    defaults = agents.get("defaults") if isinstance(agents, Mapping) else None
    models = defaults.get("models") if isinstance(defaults, Mapping) else None
    if isinstance(models, Mapping):
        for target, entry in models.items():
            alias = entry.get("alias") if isinstance(entry, Mapping) else None
            if isinstance(alias, str) and alias.strip():
                yield alias.strip(), str(target)


def _loads_plugin_paths(raw: Mapping[str, Any]) -> bool:
    plugins = raw.get("plugins")
    load = plugins.get("load") if isinstance(plugins, Mapping) else None
    paths = load.get("paths") if isinstance(load, Mapping) else None
    return bool(paths)


__all__ = ["ModelRef", "ModelWorld", "check_model_refs", "model_matches", "parse_model_ref"]

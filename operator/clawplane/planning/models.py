"""Model references checked against what providers actually list (warnings for plan and status).

Validation already proved each reference names a declared provider's model or a built-in
provider. What a declared provider serves is known only once it was probed: its last
successful listing is in its status (``models``). A reference to a model the listing
lacks, and a declared model the listing lacks, is a warning: the provider may still serve
it (some servers list only loaded models), but a turn would most likely fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from clawplane.planning.plan import PlanWarning
from clawplane.state import ObservedState
from clawplane.validation.modelrefs import model_matches, parse_model_ref


def listed_models(observed: ObservedState) -> dict[str, list[str]]:
    """Provider id → the models its last successful probe listed (complete listings only)."""
    out: dict[str, list[str]] = {}
    for rec in observed.resources.values():
        models = rec.status.get("models")
        if rec.kind != "ModelProvider" or rec.phase != "Ready" or not isinstance(models, list):
            continue
        if rec.status.get("modelCount", len(models)) == len(models):
            out[rec.name.lower()] = [str(m) for m in models]
    return out


def model_refs(key: str, spec: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """``(key, path, reference)`` of every model reference in an Agent's or Gateway's (redacted) spec."""
    if key.startswith("Agent/"):
        model = spec.get("model")
        if isinstance(model, str):
            yield key, "spec.model", model
        elif isinstance(model, Mapping):
            if isinstance(model.get("primary"), str):
                yield key, "spec.model.primary", model["primary"]
            for i, fallback in enumerate(model.get("fallbacks") or []):
                if isinstance(fallback, str):
                    yield key, f"spec.model.fallbacks[{i}]", fallback
    elif key.startswith("Gateway/"):
        defaults = (spec.get("agents") or {}).get("defaults") or {}
        if isinstance(defaults.get("model"), str):
            yield key, "spec.agents.defaults.model", defaults["model"]


def model_warnings(
    refs: Iterable[tuple[str, str, str]],
    listed: Mapping[str, list[str]],
    declared: Mapping[str, list[str]],
) -> list[PlanWarning]:
    """Warnings for references (and declared models) that a provider's listing does not contain."""
    warnings: list[PlanWarning] = []
    for provider, ids in sorted(declared.items()):
        found = listed.get(provider)
        if found is None:
            continue
        for model in ids:
            if model not in found:
                warnings.append(
                    PlanWarning(
                        code="provider.model-not-listed",
                        key=f"ModelProvider/{provider}",
                        message=f"declared model {model!r} is not among the {len(found)} models it lists",
                        hint="check the model id against the provider, or remove it",
                    )
                )
    for key, path, text in refs:
        ref = parse_model_ref(text)
        if ref is None or ref.provider is None or ref.provider not in listed:
            continue
        found = listed[ref.provider]
        if not model_matches(ref.model, found):
            shown = ", ".join(found[:5]) + (", …" if len(found) > 5 else "")
            warnings.append(
                PlanWarning(
                    code="model.not-listed",
                    key=key,
                    path=path,
                    message=f"{text} is not among the models {ref.provider!r} lists ({shown or 'none'})",
                    hint="a turn with this model will most likely fail; pick a listed model",
                )
            )
    return warnings


__all__ = ["listed_models", "model_refs", "model_warnings"]

"""Object-level rules of the emulated API: Status errors, patch flavours, server-owned metadata."""

from __future__ import annotations

import copy
import datetime
import secrets
import uuid
from collections.abc import Mapping
from typing import Any

import jsonpatch

JSON = dict[str, Any]

# Metadata fields that only the server sets; clients cannot change them with PUT or PATCH.
SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
# The alphabet the real API server uses for generateName suffixes (no vowels, no confusables).
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class ApiError(Exception):
    """An error answered as a Kubernetes ``Status`` body."""

    def __init__(
        self, code: int, reason: str, message: str, details: JSON | None = None, *, body: JSON | None = None
    ) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details or {}
        self.body = body

    def status(self) -> JSON:
        """The ``kind: Status`` body for this error."""
        if self.body is not None:
            return self.body
        body: JSON = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
        body.update(message=self.message, reason=self.reason, code=self.code)
        if self.details:
            body["details"] = self.details
        return body


def not_found(qualified: str, name: str) -> ApiError:
    """404 for a missing object, worded like the real API server."""
    return ApiError(404, "NotFound", f'{qualified} "{name}" not found', {"name": name, "kind": qualified})


def already_exists(qualified: str, name: str) -> ApiError:
    """409 AlreadyExists for a POST of an existing name."""
    return ApiError(409, "AlreadyExists", f'{qualified} "{name}" already exists', {"name": name})


def conflict(qualified: str, name: str) -> ApiError:
    """409 Conflict for a stale resourceVersion (also used by fault injection)."""
    message = (
        f'Operation cannot be fulfilled on {qualified} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    return ApiError(409, "Conflict", message, {"name": name, "kind": qualified})


def now_rfc3339() -> str:
    """The current UTC time as the API server writes timestamps."""
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def generated_name(prefix: str) -> str:
    """``generateName`` plus five random characters."""
    return prefix + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))


def new_uid() -> str:
    """A fresh object uid."""
    return str(uuid.uuid4())


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: dicts merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Strategic merge approximated as a merge patch that merges lists of named items by ``name``.

    The ``$setElementOrder``/``$retainKeys`` directives kubectl sends are dropped; an item with
    ``$patch: delete`` removes the named item. Real schemas pick merge keys per field; ``name``
    covers containers, env, ports and volumes, which is what this project's manifests use.
    """
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            result.pop(key, None)
        elif _named_list(value) and _named_list(result.get(key)):
            result[key] = _merge_named(result[key], value)
        else:
            result[key] = strategic_merge_patch(result.get(key), value)
    return result


def _named_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(i, Mapping) and "name" in i for i in value)


def _merge_named(base: list[JSON], patch: list[JSON]) -> list[JSON]:
    merged = {item["name"]: item for item in base}
    order = [item["name"] for item in base]
    for item in patch:
        name = item["name"]
        if item.get("$patch") == "delete":
            merged.pop(name, None)
            continue
        merged[name] = strategic_merge_patch(merged.get(name), item)
        if name not in order:
            order.append(name)
    return [merged[n] for n in order if n in merged]


def json_patch(target: JSON, ops: Any) -> JSON:
    """RFC 6902 JSON patch; a failed ``test`` op or a bad path is a 422 Invalid."""
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", "a JSON patch must be a list of operations")
    try:
        result = jsonpatch.apply_patch(target, ops, in_place=False)
    except jsonpatch.JsonPatchTestFailed as exc:
        raise ApiError(422, "Invalid", f"the server rejected our request due to an error: {exc}") from exc
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, TypeError) as exc:
        raise ApiError(422, "Invalid", f"the server rejected our request: invalid JSON patch: {exc}") from exc
    if not isinstance(result, dict):
        raise ApiError(422, "Invalid", "a JSON patch must produce an object")
    return result


def content_of(obj: Mapping[str, Any], has_status: bool) -> JSON:
    """What a generation counts: everything but metadata (and status when it is a subresource)."""
    skip = {"metadata", "status"} if has_status else {"metadata"}
    return {k: v for k, v in obj.items() if k not in skip}


def carry_server_fields(new: JSON, old: Mapping[str, Any]) -> JSON:
    """Restore the server-owned metadata of ``old`` onto ``new`` (clients cannot change it)."""
    meta = dict(new.get("metadata") or {})
    old_meta = old.get("metadata") or {}
    for key in (*SERVER_OWNED, "name", "namespace"):
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    new["metadata"] = meta
    return new

"""``/openapi/v3``: enough of the OpenAPI v3 discovery for kubectl's default ``--validate=strict``.

kubectl (cli-runtime ``queryParamVerifierV3``) reads ``/openapi/v3``, then the document of
the object's group-version, and looks for a PATCH operation tagged with the object's
``x-kubernetes-group-version-kind`` that accepts the ``fieldValidation`` query parameter. When
it finds one it leaves validation to the server (``fieldValidation=Strict``), which the
emulator enforces (tests/k8s/rules). The operations carry no request body, so kubectl
computes apply patches from its built-in types, as it does against a server whose schemas
it cannot use; ``kubectl explain`` is not served.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import kmock
from kmock._internal import rendering

JSON = dict[str, Any]
PREFIX = "/openapi/v3"


class OpenApiMixin:
    """Serves ``/openapi/v3`` and ``/openapi/v3/{api/v1|apis/G/V}`` from the declared resources."""

    resources: kmock.ResourcesArray

    @staticmethod
    def _is_openapi_request(request: rendering.Request) -> bool:
        return request.url.path == PREFIX or request.url.path.startswith(PREFIX + "/")

    def _group_versions_docs(self) -> dict[str, JSON]:
        docs: dict[str, JSON] = {}
        for res in self.resources:
            if not isinstance(res, kmock.resource) or res.plural is None or res.version is None:
                continue
            info = self.resources[res]
            gv = f"apis/{res.group}/{res.version}" if res.group else f"api/{res.version}"
            doc = docs.setdefault(gv, {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.4"}, "paths": {}})
            base = f"/{gv}/namespaces/{{namespace}}/{res.plural}" if info.namespaced else f"/{gv}/{res.plural}"
            gvk = {"group": res.group or "", "version": res.version, "kind": info.kind or ""}
            doc["paths"][f"{base}/{{name}}"] = {
                "patch": {
                    "x-kubernetes-group-version-kind": gvk,
                    "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
                    "responses": {"200": {"description": "OK"}},
                }
            }
        return docs

    async def _serve_openapi(self, request: rendering.Request) -> rendering.Response:
        docs = self._group_versions_docs()
        rest = request.url.path[len(PREFIX) :].strip("/")
        if not rest:
            paths = {
                gv: {"serverRelativeURL": f"{PREFIX}/{gv}?hash={hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()}"}
                for gv, doc in sorted(docs.items())
            }
            payload: JSON = {"paths": paths}
        elif rest in docs:
            payload = docs[rest]
        else:
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}
            return rendering.Response(status=404, headers={"Content-Type": "application/json"}, payload=status)
        return rendering.Response(status=200, headers={"Content-Type": "application/json"}, payload=payload)

"""The plain manifests, the Kubernetes examples, the Dockerfile and the kind workflow are sound.

Everything here runs offline: built-in kinds are checked with kubernetes-validate, custom
resources against the generated CRDs' schemas, and `kubectl kustomize` needs no cluster.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.k8s.helmutil import (
    CHART,
    EXAMPLES,
    HELM_HOME_VARS,
    MANIFESTS,
    ROOT,
    Doc,
    ident,
    kube_problems,
    least_privilege_problems,
    load_docs,
    load_file,
    of_kind,
    one,
    render,
)
from tests.oracles import locate

import clawplane

IMAGE = f"ghcr.io/clawplane/clawplane:{clawplane.__version__}"
HAND_WRITTEN = ("namespace.yaml", "rbac.yaml", "operator.yaml")
CRD_FILES = sorted((MANIFESTS / "crds").glob("*.yaml"))
DEMO_NS = "clawplane-demo"
WORKFLOW = ROOT / ".github" / "workflows" / "e2e-kind.yaml"
REQUIRE_ENV = "CLAWPLANE_REQUIRE_ORACLES"


@pytest.fixture(autouse=True)
def helm_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in HELM_HOME_VARS:
        monkeypatch.setenv(var, str(tmp_path / var.lower()))


def manifest_docs() -> list[Doc]:
    return [doc for name in HAND_WRITTEN for doc in load_file(MANIFESTS / name)]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": ""},
        cwd=ROOT,
    )
    assert "Traceback" not in proc.stderr + proc.stdout
    return proc


# --- manifests/ ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [MANIFESTS / n for n in HAND_WRITTEN] + CRD_FILES, ids=lambda p: p.name)
def test_manifest_files_pass_the_kubernetes_schemas(path: Path) -> None:
    docs = load_file(path)
    assert docs and kube_problems(docs) == []


def test_manifests_live_in_one_namespace_and_use_the_released_image() -> None:
    docs = manifest_docs()
    ns = one(docs, "Namespace")["metadata"]["name"]
    namespaced = [d for d in docs if d["kind"] in ("ServiceAccount", "Deployment", "Service")]
    assert {d["metadata"]["namespace"] for d in namespaced} == {ns}
    assert {b["subjects"][0]["namespace"] for b in of_kind(docs, "ClusterRoleBinding")} == {ns}
    c = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == IMAGE and "--all-namespaces" in c["args"]


def test_manifests_rbac_is_least_privilege_and_matches_the_chart() -> None:
    docs = manifest_docs()
    assert least_privilege_problems(docs) == []
    rules = {r["metadata"]["name"].endswith("-webhook"): r["rules"] for r in of_kind(docs, "ClusterRole")}
    chart = {r["metadata"]["name"].endswith("-webhook"): r["rules"] for r in of_kind(render(), "ClusterRole")}
    assert rules == chart


def test_manifests_operator_matches_the_chart_defaults() -> None:
    """The plain Deployment must not drift from what the chart renders by default."""
    mine = one(manifest_docs(), "Deployment")["spec"]["template"]["spec"]
    chart = one(render(), "Deployment")["spec"]["template"]["spec"]
    for key in ("securityContext", "volumes"):
        assert mine[key] == chart[key], key
    keys = ["image", "args", "env", "ports", "livenessProbe", "readinessProbe", "resources"]
    for key in [*keys, "securityContext", "volumeMounts"]:
        assert mine["containers"][0][key] == chart["containers"][0][key], key


def test_kustomization_lists_every_manifest() -> None:
    (kustomization,) = load_file(MANIFESTS / "kustomization.yaml")
    expected = {f"crds/{p.name}" for p in CRD_FILES} | set(HAND_WRITTEN)
    assert set(kustomization["resources"]) == expected


def require_kubectl() -> list[str]:
    """kubectl's argv, or skip LOUDLY (fail under CLAWPLANE_REQUIRE_ORACLES=1) like tests/compat."""
    argv = locate.kubectl_cmd()
    if argv is not None:
        return argv
    msg = f"ORACLE UNAVAILABLE: kubectl: {locate.unavailable_reason('kubectl')}"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{msg} ({REQUIRE_ENV}=1)", pytrace=False)
    pytest.skip(msg)


@pytest.mark.compat
def test_kubectl_kustomize_builds_offline_and_validates(tmp_path: Path) -> None:
    argv = require_kubectl()
    env = locate.kubectl_env(tmp_path / "home", tmp_path / "kubeconfig", tmp_path / "kube-cache")
    proc = subprocess.run(
        [*argv, "kustomize", str(MANIFESTS)], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    docs = load_docs(proc.stdout)
    assert len(of_kind(docs, "CustomResourceDefinition")) == len(CRD_FILES)
    assert {d["kind"] for d in docs} >= {"Namespace", "ClusterRole", "Deployment", "Service"}
    assert kube_problems(docs) == []


# --- examples/k8s -------------------------------------------------------------------------------


def example_resources() -> list[Doc]:
    return [doc for p in sorted((EXAMPLES / "resources").glob("*.yaml")) for doc in load_file(p)]


def test_example_namespace_and_secret_pass_the_kubernetes_schemas() -> None:
    docs = [doc for p in sorted(EXAMPLES.glob("0[01]-*.yaml")) for doc in load_file(p)]
    assert sorted(d["kind"] for d in docs) == ["Namespace", "Secret"]
    assert kube_problems(docs) == []
    assert one(docs, "Namespace")["metadata"]["name"] == DEMO_NS
    assert one(docs, "Secret")["metadata"]["namespace"] == DEMO_NS


def test_example_resources_validate_with_clawplane() -> None:
    proc = cli("validate", str(EXAMPLES / "resources"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 errors, 0 warnings" in proc.stdout


def test_example_resources_cover_every_kind_in_the_demo_namespace() -> None:
    docs = example_resources()
    assert {d["kind"] for d in docs} == {"Gateway", "McpServer", "Agent", "Channel", "Skill"}
    assert {d["metadata"].get("namespace") for d in docs} == {DEMO_NS}
    servers = {d["metadata"]["name"]: d["spec"] for d in of_kind(docs, "McpServer")}
    assert servers["time"]["transport"] == "stdio" and servers["time"]["command"] == "uvx"
    assert servers["time"]["args"][0] == "mcp-server-time"
    assert any(s.get("transport") == "streamable-http" for s in servers.values())


def value_refs(node: Any) -> list[dict[str, str]]:
    """Every ``secretKeyRef`` below ``node``."""
    if isinstance(node, dict):
        here = [node["secretKeyRef"]] if isinstance(node.get("secretKeyRef"), dict) else []
        return here + [ref for v in node.values() for ref in value_refs(v)]
    if isinstance(node, list):
        return [ref for v in node for ref in value_refs(v)]
    return []


def test_example_secret_refs_resolve_to_the_example_secret() -> None:
    (secret,) = load_file(EXAMPLES / "01-secret.yaml")
    refs = value_refs(example_resources())
    assert refs, "the examples should show valueFrom.secretKeyRef"
    hosted = {d["metadata"]["name"] for d in of_kind(example_resources(), "McpServer") if d["spec"].get("command")}
    for ref in refs:
        generated = ref["name"] in {f"mcp-{h}-token" for h in hosted} and ref["key"] in ("token", "authorization")
        assert generated or (ref["name"] == secret["metadata"]["name"] and ref["key"] in secret["stringData"]), ref


def crd_validators() -> dict[str, jsonschema.protocols.Validator]:
    validators = {}
    for path in CRD_FILES:
        (crd,) = load_file(path)
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        # OpenAPI v3 schemas are draft-4 flavoured (boolean exclusiveMinimum).
        validators[crd["spec"]["names"]["kind"]] = jsonschema.Draft4Validator(schema)
    return validators


def test_example_resources_pass_the_crd_schemas() -> None:
    validators = crd_validators()
    problems = [
        f"{ident(doc)}: {err.json_path}: {err.message}"
        for doc in example_resources()
        for err in validators[doc["kind"]].iter_errors(doc)
    ]
    assert problems == []


# --- Dockerfile ---------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` with line continuations joined and comments dropped."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    out = []
    for line in joined.splitlines():
        if line.strip():
            instr, _, rest = line.strip().partition(" ")
            out.append((instr.upper(), rest.strip()))
    return out


def test_dockerfile_installs_clawplane_with_the_k8s_extra_and_node() -> None:
    instrs = dockerfile_instructions()
    froms = [args for instr, args in instrs if instr == "FROM"]
    assert len(froms) >= 3, "multi-stage: node, build, runtime"
    args = dict(a.split("=", 1) for i, a in instrs if i == "ARG" and "=" in a)
    assert args["PYTHON_IMAGE"].startswith("python:3.12-slim")
    assert args["NODE_IMAGE"].startswith("node:22-")
    runs = " ".join(a for i, a in instrs if i == "RUN")
    assert re.search(r"pip install [^&]*\"\.\[k8s\]\"", runs)
    assert "uv" in runs and "npx" in runs


def test_dockerfile_runs_clawplane_as_non_root() -> None:
    instrs = dockerfile_instructions()
    users = [a for i, a in instrs if i == "USER"]
    assert users and users[-1].split(":")[0] == "65532"
    assert json.loads(next(a for i, a in reversed(instrs) if i == "ENTRYPOINT")) == ["clawplane"]
    assert json.loads(next(a for i, a in reversed(instrs) if i == "CMD")) == [
        "k8s",
        "run",
        "--all-namespaces",
    ]
    env = " ".join(a for i, a in instrs if i == "ENV")
    assert "HOME=/home/clawplane" in env


def test_dockerfile_copy_sources_exist_and_are_not_ignored() -> None:
    ignored = {
        ln.strip().rstrip("/")
        for ln in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")
    }
    sources = []
    for instr, args in dockerfile_instructions():
        if instr in ("COPY", "ADD") and "--from=" not in args:
            sources += shlex.split(args)[:-1]
    assert sources
    for src in sources:
        assert (ROOT / src).exists(), src
        assert Path(src).parts[0] not in ignored, f"{src} is excluded by .dockerignore"


def effective_argv(container: dict[str, Any]) -> list[str]:
    """What a container runs in this image: Kubernetes' command/args over ENTRYPOINT/CMD."""
    instrs = dockerfile_instructions()
    entrypoint = json.loads(next(a for i, a in reversed(instrs) if i == "ENTRYPOINT"))
    cmd = json.loads(next(a for i, a in reversed(instrs) if i == "CMD"))
    if "command" in container:
        return [*container["command"], *container.get("args", [])]
    return [*entrypoint, *container.get("args", cmd)]


def test_operator_containers_run_the_intended_clawplane_command() -> None:
    c = one(manifest_docs(), "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert effective_argv(c)[:3] == ["clawplane", "k8s", "run"]


def test_the_operator_deployment_is_not_one_of_its_own_children() -> None:
    """The operator watches Deployments labelled managed-by=clawplane; its own must not be one."""
    for deploy in (one(manifest_docs(), "Deployment"), one(render(), "Deployment")):
        for labels in (deploy["metadata"]["labels"], deploy["spec"]["template"]["metadata"]["labels"]):
            assert labels.get("app.kubernetes.io/managed-by") != "clawplane"


def test_server_pods_run_clawplane_bridge_in_this_image() -> None:
    """The operator's server Deployments must work with the image's ENTRYPOINT ["clawplane"]."""
    from clawplane.k8s.objects.children import Owner, server_deployment
    from clawplane.models import McpServerSpec

    spec = McpServerSpec.model_validate({"transport": "stdio", "command": "uvx", "args": ["mcp-server-time"]})
    owner = Owner("McpServer", "time", "uid-1")
    deploy = server_deployment("time", DEMO_NS, spec, owner=owner, image=IMAGE, config_hash="h")
    (c,) = deploy["spec"]["template"]["spec"]["containers"]
    argv = effective_argv(c)
    assert argv[:2] == ["clawplane", "bridge"] and argv[-2:] == ["uvx", "mcp-server-time"], argv


# --- the kind workflow --------------------------------------------------------------------------


def test_e2e_workflow_is_a_valid_github_workflow() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(WORKFLOW),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_e2e_workflow_uses_values_the_chart_accepts() -> None:
    (workflow,) = load_file(WORKFLOW)
    job = workflow["jobs"]["e2e"]
    assert job["timeout-minutes"] == 20
    kind = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("helm/kind-action@"))
    assert re.fullmatch(r"kindest/node:v\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?", kind["with"]["node_image"])
    script = "\n".join(s.get("run", "") for s in job["steps"])
    sets = dict(s.split("=", 1) for s in re.findall(r"--set ([\w.]+=\S+)", script))
    assert sets["image.tag"] == "e2e" and sets["image.pullPolicy"] == "Never"
    values: dict[str, Any] = {}
    for key, value in sets.items():
        *parents, leaf = key.split(".")
        node = values
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    image = one(render(values), "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == job["env"]["IMAGE"]
    assert 'docker build -t "$IMAGE" .' in script and "kind load docker-image" in script
    assert "kubectl wait --for=condition=Ready mcpserver/time" in script
    assert (CHART / "Chart.yaml").is_file()

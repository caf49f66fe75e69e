#!/usr/bin/env node
// Many `openclaw ...` CLI invocations in ONE Node process: each call goes through
// OpenClaw's own CLI entry, `runCli(argv)` from dist/cli/run-main.js (the function
// openclaw.mjs -> dist/entry.js hands every command to), so it gets a freshly built
// program, the real pre-action hooks (config guard, state-store guard) and the real command
// handlers. What it saves is the start: loading OpenClaw's module graph costs ~8 CPU-s per
// process on our 2-core CI machine, while a later call in the same process costs ~0.5 s.
//
// Usage: node openclaw_batch.mjs CALLS.json --pkg DIR   (DIR: the installed node_modules/openclaw)
//   CALLS.json = {"calls": [{"args": ["mcp", "set", "x", "{...}"], "env": {"K": "V"}}, ...]}
// Prints one JSON array on stdout: [{"args", "returncode", "stdout", "stderr", "ms"}, ...].
//
// Per call: stdout/stderr are captured, `env` is applied on top of the process's own
// environment (and removed again), and an exit -- `process.exit(code)` from OpenClaw's
// runtime, or `process.exitCode` set by commander -- becomes the call's returncode instead
// of ending the process. tests/compat/test_openclaw_batch.py checks that a call here gives
// the same exit code, output and config file as the same call through the real CLI.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const realStdoutWrite = process.stdout.write.bind(process.stdout);
const realStderrWrite = process.stderr.write.bind(process.stderr);
const realExit = process.exit.bind(process);

function die(message, code = 2) {
  realStderrWrite(`openclaw_batch.mjs: ${message}\n`);
  realExit(code);
}

function parseArgs(argv) {
  const out = { pkg: undefined, calls: undefined };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--pkg" && i + 1 < argv.length) out.pkg = argv[++i];
    else if (out.calls === undefined && !argv[i].startsWith("--")) out.calls = argv[i];
    else die(`unknown argument: ${argv[i]}`);
  }
  if (out.calls === undefined || out.pkg === undefined) die("usage: node openclaw_batch.mjs CALLS.json --pkg DIR");
  return out;
}

/** Thrown by the patched process.exit so the call unwinds instead of ending the process. */
class CallExit extends Error {
  constructor(code) {
    super(`exit ${code}`);
    this.code = code;
  }
}

let captured = { stdout: [], stderr: [] };
let exitCode;

function capture(stream) {
  return (chunk, encoding, callback) => {
    captured[stream].push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    const done = typeof encoding === "function" ? encoding : callback;
    if (done) done();
    return true;
  };
}

async function runOne(runCli, call, baseEnv) {
  captured = { stdout: [], stderr: [] };
  exitCode = undefined;
  process.exitCode = undefined;
  for (const key of Object.keys(process.env)) if (!(key in baseEnv)) delete process.env[key];
  Object.assign(process.env, baseEnv, call.env ?? {});
  const started = performance.now();
  let returncode;
  try {
    await runCli(["node", "openclaw", ...call.args]);
    returncode = exitCode ?? process.exitCode ?? 0;
  } catch (error) {
    if (exitCode !== undefined) returncode = exitCode;
    else if (error?.name === "ExitError" && Number.isInteger(error.code)) {
      // A command that already reported its outcome unwinds with ExitError (doctor, config
      // validate); OpenClaw's entry (runCliWithExitFinalization) turns it into that exit code.
      returncode = error.code;
    } else {
      // What dist/entry.js's onError does with an error that escapes runCli: say so, exit 1.
      captured.stderr.push(`The CLI command failed: ${error?.stack ?? error}\n`);
      returncode = 1;
    }
  }
  return {
    args: call.args,
    returncode: Number(returncode),
    stdout: captured.stdout.join(""),
    stderr: captured.stderr.join(""),
    ms: Math.round(performance.now() - started),
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 24) die(`needs Node >= 24 (OpenClaw uses node:sqlite), this is ${process.versions.node}`, 3);
  const spec = JSON.parse(fs.readFileSync(args.calls, "utf8"));
  if (!Array.isArray(spec.calls)) die(`${args.calls}: expected {"calls": [...]}`);
  // `openclaw update` arms a 10 s exit watchdog (watchCliExitAfterOutput) that would fire in
  // a later call of this process: it can only run as a process of its own.
  const unbatchable = spec.calls.find((c) => c.args?.[0] === "update");
  if (unbatchable) die(`cannot batch \`openclaw ${unbatchable.args.join(" ")}\`: run it with OpenClawOracle.run`);
  const runMain = path.join(args.pkg, "dist", "cli", "run-main.js");
  if (!fs.existsSync(runMain)) die(`no ${runMain}: is openclaw installed? (run tests/oracles/install.sh)`, 3);

  process.stdout.write = capture("stdout");
  process.stderr.write = capture("stderr");
  process.exit = (code) => {
    if (exitCode === undefined) exitCode = code ?? process.exitCode ?? 0;
    throw new CallExit(exitCode);
  };
  // Every runCli adds its own uncaughtException handler; that is expected here.
  process.setMaxListeners(0);
  const { runCli } = await import(pathToFileURL(runMain).href);
  const baseEnv = { ...process.env };
  const results = [];
  for (const call of spec.calls) results.push(await runOne(runCli, call, baseEnv));
  // OpenClaw may keep handles (timers, SQLite) open: end the process once the answer is out.
  realStdoutWrite(`${JSON.stringify(results)}\n`, () => realExit(0));
}

main().catch((error) => die(`${error?.stack ?? error}`, 1));

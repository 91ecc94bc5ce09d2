// check.mjs RESULTS_DIR RUN BASELINE — the part of a conformance run that no
// baseline can excuse. The suite's own exit code only covers the scenarios
// it scores, and an expected-failures file could (wrongly) list anything;
// this reads every checks.json the run wrote and fails when one of the
// scenarios examples/conformance must pass (tools, resources, prompts,
// completion, caching, headers, lifecycle, the tasks extension) is missing
// or has a check that is neither SUCCESS nor SKIPPED/INFO (a "Not
// testable" is a FAILURE too).
// Only single checks the baseline names as "scenario:checkId" are excused
// (such as the prompts/resources parts of the caching scenario); a whole
// must-pass scenario in the baseline is not. It prints one line per
// scenario.
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const [dir, run, baseline] = process.argv.slice(2);

// Scenarios that must run and pass, per run. Everything matching
// mustPassPattern (and not exempt) that a run happens to include must pass
// as well; the exempt ones need the client-side features a tools-only
// server lacks (they are in the expected-failures baselines).
// Resources, prompts and completion, served by examples/conformance's bash
// functions (resources.json, prompts.json).
const declared = [
  "resources-list", "resources-read-text", "resources-read-binary", "resources-templates-read",
  "prompts-list", "prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource",
  "prompts-get-with-image", "completion-complete",
];
const legacy = [
  "server-initialize", "ping", "logging-set-level", "tools-list",
  "tools-call-simple-text", "tools-call-image", "tools-call-audio",
  "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-error",
  "tools-call-with-progress", "tools-call-with-logging",
  "server-sse-multiple-streams", "dns-rebinding-protection",
  // Tools that ask the client (mcp_ask, mcp_elicit, mcp_sample).
  "tools-call-elicitation", "tools-call-sampling",
  ...declared,
];
// The io.modelcontextprotocol/tasks extension's scenarios (2026-07-28).
const tasks = [
  "tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields",
  "tasks-request-state-removal", "tasks-mrtr-input", "tasks-request-headers",
  "tasks-dispatch-and-envelope", "tasks-status-notifications",
  "tasks-required-task-error", "tasks-mrtr-composition",
];
const required = {
  "0.1.16": [...legacy, "resources-subscribe", "resources-unsubscribe"],
  "2025-11-25": [...legacy, "resources-subscribe", "resources-unsubscribe", "server-session-lifecycle", "json-schema-2020-12",
    "elicitation-sep1034-defaults", "elicitation-sep1330-enums"],
  "2026-07-28": [
    "server-stateless", "tools-list", "tools-call-simple-text", "tools-call-image",
    "tools-call-audio", "tools-call-embedded-resource", "tools-call-mixed-content",
    "tools-call-error", "tools-call-with-progress", "server-sse-multiple-streams",
    "dns-rebinding-protection", "caching", "http-header-validation",
    "http-custom-header-server-validation", "json-schema-2020-12",
    ...declared, "sep-2164-resource-not-found",
    // The tasks extension: unscored by the suite, held to pass here
    // (examples/conformance's task tools).
    ...tasks,
  ],
};
const mustPassPattern =
  /^(server-initialize|server-session-|server-stateless|ping$|logging-|tools-|json-schema-|server-sse-|dns-rebinding-|caching$|http-|resources-|prompts-|completion-|sep-2164-|elicitation-|tasks-)/;
// In the session eras a tool asks the client on the call's stream; 2026's
// way (input_required) is judged by its own scenarios.
const exempt = run === "2026-07-28" ? /^tools-call-(sampling|elicitation)$/ : /^$/;

if (!dir || !required[run] || !baseline) {
  console.error("usage: check.mjs RESULTS_DIR 0.1.16|2025-11-25|2026-07-28 BASELINE.yml");
  process.exit(2);
}

// "  - scenario:check-id" lines of the expected-failures file.
const excused = new Set();
for (const line of readFileSync(baseline, "utf8").split("\n")) {
  const m = /^\s*-\s*([\w.-]+:[\w.$-]+)\s*$/.exec(line);
  if (m) excused.add(m[1]);
}

// The suite writes DIR/server-<scenario>-<timestamp>/checks.json.
const results = new Map();
for (const d of readdirSync(dir).sort()) {
  const f = join(dir, d, "checks.json");
  const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(d);
  if (!m || !existsSync(f)) continue;
  results.set(m[1], JSON.parse(readFileSync(f, "utf8")));
}

const ok = new Set(["SUCCESS", "SKIPPED", "INFO"]);
let bad = 0;
for (const name of required[run]) {
  if (!results.has(name)) {
    console.log(`MISSING  ${name}: the run did not include it`);
    bad++;
  }
}
for (const [name, checks] of results) {
  const failing = checks.filter((c) => !ok.has(c.status) && !excused.has(`${name}:${c.id}`));
  const must = mustPassPattern.test(name) && !exempt.test(name);
  const tag = failing.length === 0 ? "pass" : must ? "FAIL" : "fail";
  const counts = `${checks.filter((c) => c.status === "SUCCESS").length}/${checks.length}`;
  console.log(`${tag.padEnd(8)} ${name} (${counts} checks succeeded)`);
  if (failing.length > 0 && must) {
    bad++;
    for (const c of failing) {
      console.log(`           ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
    }
  }
}
if (bad > 0) {
  console.log(`${run}: ${bad} scenario(s) examples/conformance must pass did not (FAIL/MISSING above)`);
  process.exit(1);
}
console.log(`${run}: every tools, resources, prompts, completion, caching, ping, logging, lifecycle, header, stateless and DNS-rebinding scenario passed`);

#!/usr/bin/env node
// Drives an MCP server over stdio with the official TypeScript SDK
// (@modelcontextprotocol/sdk, Client + StdioClientTransport), for
// tests/clients_test.go. Everything it learns goes to stdout as JSON lines;
// the Go test makes the assertions.
//
// Usage:
//   node ts_client.mjs SCENARIO [--env KEY=VALUE]... -- COMMAND [ARGS...]
//
// The SDK passes the server only HOME, LOGNAME, PATH, SHELL, TERM and USER;
// --env adds variables (the test's /proc marker, TMPDIR, ...) on top, the way
// a host manifest's "env" does.
//
// Scenarios:
//   greeter  list the tools and call greet, count, fail and greet with a bad
//            argument; close; print one "done" line.
//   abort    call the "hang" tool with an AbortSignal and print "calling";
//            on the stdin line "abort", abort it and print "aborted" (the
//            error the SDK returned and the notifications/cancelled it sent);
//            on the stdin line "continue", call "hello", close (stdin EOF:
//            the server drains and exits) and print "done".
//
// Every line print carries "wire": each message as the transport saw it
// (dir "out" sent, "in" received), so the test can check responses by id.

import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

function parseArgs(argv) {
  const [scenario, ...rest] = argv;
  const env = {};
  let i = 0;
  for (; i < rest.length && rest[i] !== '--'; i++) {
    if (rest[i] !== '--env' || i + 1 >= rest.length) {
      throw new Error(`unexpected argument ${JSON.stringify(rest[i])}`);
    }
    const kv = rest[++i];
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new Error(`--env wants KEY=VALUE, got ${JSON.stringify(kv)}`);
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const command = rest.slice(i + 1);
  if (!scenario || command.length === 0) {
    throw new Error('usage: ts_client.mjs SCENARIO [--env KEY=VALUE]... -- COMMAND [ARGS...]');
  }
  return { scenario, env, command };
}

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function errorInfo(e) {
  if (e === undefined || e === null) return null;
  return { name: e.name, code: e.code, message: String(e.message ?? e) };
}

// connect starts the server and records every message both ways. The
// recording hooks sit on the transport before Client.connect: Protocol
// chains a transport's existing onmessage/onerror, and send is wrapped.
async function connect(command, env) {
  const transport = new StdioClientTransport({
    command: command[0],
    args: command.slice(1),
    env, // merged over the SDK's default six variables
    stderr: 'inherit',
  });
  const wire = [];
  const errors = [];
  const snapshot = (msg) => JSON.parse(JSON.stringify(msg));
  transport.onmessage = (msg) => wire.push({ dir: 'in', msg: snapshot(msg) });
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    wire.push({ dir: 'out', msg: snapshot(msg) });
    return send(msg, opts);
  };
  const client = new Client({ name: 'mcp-bashd-e2e-ts', version: '0' }, { capabilities: {} });
  client.onerror = (e) => errors.push(String(e?.stack ?? e));
  await client.connect(transport);
  // The child process, kept to read its exit status after close(); the
  // transport forgets it when it closes.
  const proc = transport._process;
  const init = wire.find((w) => w.dir === 'in' && w.msg.result?.protocolVersion);
  return {
    client,
    transport,
    wire,
    errors,
    proc,
    info: {
      serverPid: transport.pid,
      protocolVersion: init?.msg.result.protocolVersion ?? null,
      serverInfo: client.getServerVersion() ?? null,
      instructions: client.getInstructions() ?? null,
      capabilities: client.getServerCapabilities() ?? null,
    },
  };
}

// close ends the session the SDK's way: stdin EOF, then up to 2 s for the
// server to exit before SIGTERM. Waiting for the process's "close" event
// means every byte it wrote to stdout has been seen by the transport.
async function close(c) {
  const closed = c.proc.exitCode !== null || c.proc.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => c.proc.once('close', resolve));
  await c.client.close();
  await closed;
  return { code: c.proc.exitCode, signal: c.proc.signalCode };
}

async function settle(p) {
  try {
    return { result: await p };
  } catch (e) {
    return { error: errorInfo(e) };
  }
}

async function greeter(command, env) {
  const c = await connect(command, env);
  const tools = await c.client.listTools();
  const calls = {};
  calls.greet = await settle(c.client.callTool({ name: 'greet', arguments: { name: 'Ada' } }));
  calls.count1 = await settle(c.client.callTool({ name: 'count', arguments: {} }));
  calls.count2 = await settle(c.client.callTool({ name: 'count', arguments: {} }));
  calls.fail = await settle(c.client.callTool({ name: 'fail', arguments: {} }));
  calls.invalid = await settle(c.client.callTool({ name: 'greet', arguments: { name: 'Ada', x: 1 } }));
  const exit = await close(c);
  emit({ event: 'done', ...c.info, tools: tools.tools, calls, errors: c.errors, exit, wire: c.wire });
}

async function abort(command, env) {
  const rl = createInterface({ input: process.stdin });
  const lines = rl[Symbol.asyncIterator]();
  const expect = async (word) => {
    const { value, done } = await lines.next();
    if (done || value.trim() !== word) {
      throw new Error(`expected ${JSON.stringify(word)} on stdin, got ${done ? 'EOF' : JSON.stringify(value)}`);
    }
  };
  const c = await connect(command, env);
  emit({ event: 'connected', ...c.info });

  const controller = new AbortController();
  const pending = settle(c.client.callTool({ name: 'hang', arguments: {} }, undefined, { signal: controller.signal }));
  const request = c.wire.find((w) => w.dir === 'out' && w.msg.method === 'tools/call');
  emit({ event: 'calling', requestId: request?.msg.id ?? null });

  await expect('abort');
  controller.abort();
  const outcome = await pending;
  const cancels = c.wire.filter((w) => w.dir === 'out' && w.msg.method === 'notifications/cancelled').map((w) => w.msg);
  emit({ event: 'aborted', outcome, cancels });

  await expect('continue');
  const followUp = await settle(c.client.callTool({ name: 'hello', arguments: {} }));
  const exit = await close(c);
  rl.close();
  emit({ event: 'done', followUp, errors: c.errors, exit, wire: c.wire });
}

const scenarios = { greeter, abort };

async function main() {
  const { scenario, env, command } = parseArgs(process.argv.slice(2));
  const run = scenarios[scenario];
  if (!run) throw new Error(`unknown scenario ${JSON.stringify(scenario)}`);
  await run(command, env);
}

main().then(
  () => process.exit(0),
  (e) => {
    emit({ event: 'fatal', error: String(e?.stack ?? e) });
    process.exit(1);
  },
);

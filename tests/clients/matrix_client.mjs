#!/usr/bin/env node
// Drives an MCP server with the official TypeScript SDK, v1
// (@modelcontextprotocol/sdk) or v2 (@modelcontextprotocol/client), over
// stdio or Streamable HTTP, for tests/clients_matrix_test.go. It lists the
// tools, calls one, calls a tool that reports progress, cancels a slow call
// and calls again. Everything it learns goes to stdout as JSON lines; the Go
// test makes the assertions and paces the run through stdin.
//
// Usage:
//   node matrix_client.mjs --sdk v1|v2 [--mode legacy|auto|pin:VERSION]
//        [--env KEY=VALUE]... (--url URL | -- COMMAND [ARGS...])
//
// --mode is v2's versionNegotiation (v1 has none: it always initializes).
// --env adds variables for a stdio server on top of the SDK's default six.
//
// Events, in order:
//   connected   the negotiated version, era, server pid (stdio), session id
//   listed      tools/list, and tools/call echo {"text":"hi"}
//   progress    one per progress notification of the "progress" tool's call
//               (the tool waits for the test to release it after three)
//   progressed  that call's outcome
//   calling     the "hang" call went out (its request id) with an
//               AbortSignal; on the stdin line "abort" it is aborted:
//   aborted     the abort's outcome and the notifications/cancelled sent
//   done        on the stdin line "continue": tools/call hello, close, and
//               the wire (every message the transport sent or received), the
//               errors the client reported (before the close, and all), the
//               server's exit (stdio)

import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

function parseArgs(argv) {
  const o = { sdk: '', mode: 'legacy', env: {}, url: '', command: [] };
  let i = 0;
  for (; i < argv.length && argv[i] !== '--'; i++) {
    const want = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} wants a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case '--sdk': o.sdk = want(); break;
      case '--mode': o.mode = want(); break;
      case '--url': o.url = want(); break;
      case '--env': {
        const kv = want();
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new Error(`--env wants KEY=VALUE, got ${JSON.stringify(kv)}`);
        o.env[kv.slice(0, eq)] = kv.slice(eq + 1);
        break;
      }
      default: throw new Error(`unexpected argument ${JSON.stringify(argv[i])}`);
    }
  }
  o.command = argv.slice(i + 1);
  if (!['v1', 'v2'].includes(o.sdk) || (o.url === '') === (o.command.length === 0)) {
    throw new Error('usage: matrix_client.mjs --sdk v1|v2 [--mode M] [--env K=V]... (--url URL | -- COMMAND [ARGS...])');
  }
  return o;
}

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function errorInfo(e) {
  if (e === undefined || e === null) return null;
  return { name: e.name, code: e.code, message: String(e.message ?? e) };
}

async function settle(p) {
  try {
    return { result: await p };
  } catch (e) {
    return { error: errorInfo(e) };
  }
}

async function loadSDK(sdk) {
  if (sdk === 'v1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    return { Client, StdioClientTransport, StreamableHTTPClientTransport };
  }
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  return { Client, StdioClientTransport, StreamableHTTPClientTransport };
}

function clientOptions(sdk, mode) {
  const opts = { capabilities: {} };
  if (sdk === 'v2') {
    const m = mode.startsWith('pin:') ? { pin: mode.slice(4) } : mode;
    opts.versionNegotiation = { mode: m };
  } else if (mode !== 'legacy') {
    throw new Error(`v1 has no version negotiation mode ${JSON.stringify(mode)}`);
  }
  return opts;
}

// connect records every message both ways: onmessage set before connect is
// chained by the SDK's Protocol (v1 and v2), send is wrapped on the
// instance. v2's server/discover probe runs before that (on a sibling
// process for stdio), so it may not be on this wire.
async function connect(o) {
  const sdk = await loadSDK(o.sdk);
  const transport = o.url
    ? new sdk.StreamableHTTPClientTransport(new URL(o.url))
    : new sdk.StdioClientTransport({ command: o.command[0], args: o.command.slice(1), env: o.env, stderr: 'inherit' });
  const wire = [];
  const errors = [];
  const snapshot = (msg) => JSON.parse(JSON.stringify(msg));
  transport.onmessage = (msg) => wire.push({ dir: 'in', msg: snapshot(msg) });
  const watchers = [];
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    wire.push({ dir: 'out', msg: snapshot(msg) });
    for (const w of watchers.splice(0)) {
      if (w.match(msg)) w.resolve(msg); else watchers.push(w);
    }
    return send(msg, opts);
  };
  // sent resolves with the first message sent from now on that matches.
  const sent = (match) => new Promise((resolve) => watchers.push({ match, resolve }));
  const options = clientOptions(o.sdk, o.mode);
  if (o.capabilities) options.capabilities = o.capabilities; // asks_client.mjs
  const client = new sdk.Client({ name: `mcp-bashd-e2e-ts-${o.sdk}`, version: '0' }, options);
  client.onerror = (e) => errors.push(String(e?.stack ?? e));
  await client.connect(transport);
  const proc = transport._process; // stdio: kept to read the exit status after close()
  const init = wire.find((w) => w.dir === 'in' && w.msg.result?.protocolVersion);
  const call = o.sdk === 'v1'
    ? (params, options) => client.callTool(params, undefined, options)
    : (params, options) => client.callTool(params, options);
  return {
    client, transport, wire, errors, proc, call, sent,
    info: {
      serverPid: o.url ? null : transport.pid,
      sessionId: o.url ? (transport.sessionId ?? null) : null,
      protocolVersion: client.getNegotiatedProtocolVersion?.() ?? init?.msg.result.protocolVersion ?? null,
      era: client.getProtocolEra?.() ?? null,
      serverInfo: client.getServerVersion() ?? null,
      capabilities: client.getServerCapabilities() ?? null,
    },
  };
}

// close ends the session the SDK's way. For stdio that is stdin EOF, then
// a wait for the server's exit; waiting for "close" means every byte it
// wrote to stdout reached the transport.
async function close(c) {
  if (!c.proc) {
    await c.client.close();
    return null;
  }
  const closed = c.proc.exitCode !== null || c.proc.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => c.proc.once('close', resolve));
  await c.client.close();
  await closed;
  return { code: c.proc.exitCode, signal: c.proc.signalCode };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const rl = createInterface({ input: process.stdin });
  const lines = rl[Symbol.asyncIterator]();
  const expect = async (word) => {
    const { value, done } = await lines.next();
    if (done || value.trim() !== word) {
      throw new Error(`expected ${JSON.stringify(word)} on stdin, got ${done ? 'EOF' : JSON.stringify(value)}`);
    }
  };

  const c = await connect(o);
  emit({ event: 'connected', ...c.info });

  const tools = await settle(c.client.listTools());
  const echo = await settle(c.call({ name: 'echo', arguments: { text: 'hi' } }));
  emit({ event: 'listed', tools, echo });

  const progressed = await settle(c.call({ name: 'progress', arguments: {} }, {
    onprogress: (p) => emit({ event: 'progress', ...p }),
  }));
  emit({ event: 'progressed', outcome: progressed });

  const controller = new AbortController();
  // v2 sends a request a few ticks after callTool returns its promise.
  const request = c.sent((m) => m.method === 'tools/call' && m.params?.name === 'hang');
  const pending = settle(c.call({ name: 'hang', arguments: {} }, { signal: controller.signal }));
  emit({ event: 'calling', requestId: (await request).id });

  await expect('abort');
  controller.abort();
  const outcome = await pending;
  const cancels = c.wire.filter((w) => w.dir === 'out' && w.msg.method === 'notifications/cancelled').map((w) => w.msg);
  emit({ event: 'aborted', outcome, cancels });

  await expect('continue');
  const followUp = await settle(c.call({ name: 'hello', arguments: {} }));
  // Errors up to here are the session's; closing may add the transport's
  // own (v1 over HTTP aborts the requests it still has open).
  const errorsBeforeClose = [...c.errors];
  const exit = await close(c);
  rl.close();
  emit({ event: 'done', followUp, errorsBeforeClose, errors: c.errors, exit, wire: c.wire });
}

// Shared with resources_client.mjs, which imports this file: main runs
// only when it is the script node was started with.
export { parseArgs, emit, settle, connect, close };

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (e) => {
      emit({ event: 'fatal', error: String(e?.stack ?? e) });
      process.exit(1);
    },
  );
}

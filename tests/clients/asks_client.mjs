#!/usr/bin/env node
// Drives a server whose tool asks the user (elicitation/create) with the
// official TypeScript SDK v1 over stdio, for tests/asks_test.go: the
// client declares the elicitation capability and answers with a fixed
// form; the tool prints what it got. The Go test makes the assertions.
//
// Usage: node asks_client.mjs --sdk v1 [--env KEY=VALUE]... -- COMMAND [ARGS...]
//
// Events: connected; results (the elicitation requests the handler saw,
// the call's {result} or {error}); done (the wire, errors, the exit).

import { parseArgs, emit, settle, connect, close } from './matrix_client.mjs';

async function main() {
  const o = parseArgs(process.argv.slice(2));
  o.capabilities = { elicitation: {} };
  const c = await connect(o);
  emit({ event: 'connected', ...c.info });
  const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const asked = [];
  c.client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return { action: 'accept', content: { name: 'Ada from TypeScript' } };
  });
  const call = await settle(c.call({ name: 'elicit', arguments: {} }));
  emit({ event: 'results', asked, call });
  const errorsBeforeClose = [...c.errors];
  const exit = await close(c);
  emit({ event: 'done', errorsBeforeClose, errors: c.errors, exit, wire: c.wire });
}

main().then(
  () => process.exit(0),
  (e) => {
    emit({ event: 'fatal', error: String(e?.stack ?? e) });
    process.exit(1);
  },
);

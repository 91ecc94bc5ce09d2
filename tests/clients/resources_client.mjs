#!/usr/bin/env node
// Drives examples/notes with the official TypeScript SDK, v1
// (@modelcontextprotocol/sdk) or v2 (@modelcontextprotocol/client), over
// stdio or Streamable HTTP, for tests/clients_resources_test.go: it lists
// and reads resources (the template expanded, a blob), gets a prompt with
// arguments and one with an image, completes an argument, and subscribes
// to a note before a tool changes it (resources/subscribe in a 2025-era
// session, subscriptions/listen in 2026-07-28), waiting for
// notifications/resources/updated. The Go test makes the assertions.
//
// Usage: node resources_client.mjs --sdk v1|v2 [--mode legacy|auto|pin:V]
//        [--env KEY=VALUE]... (--url URL | -- COMMAND [ARGS...])
//
// Events: connected, updated (the notification's params), results (each
// request's {result} or {error}), done (the wire, errors, the server's
// exit on stdio).

import { parseArgs, emit, settle, connect, close } from './matrix_client.mjs';

const NOTE = 'notes://note/groceries';

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const c = await connect(o);
  emit({ event: 'connected', ...c.info });
  const modern = c.info.era === 'modern';

  let gotUpdate;
  const updated = new Promise((resolve) => { gotUpdate = resolve; });
  const onUpdated = (n) => gotUpdate(n.params);
  if (o.sdk === 'v1') {
    const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    c.client.setNotificationHandler(ResourceUpdatedNotificationSchema, onUpdated);
  } else {
    c.client.setNotificationHandler('notifications/resources/updated', onUpdated);
  }
  const r = {};
  r.resources = await settle(c.client.listResources());
  r.templates = await settle(c.client.listResourceTemplates());
  let subscription;
  if (modern) {
    // Resolves once the server acknowledged the stream.
    r.subscribe = await settle(c.client.listen({ resourceSubscriptions: [NOTE] }).then((s) => { subscription = s; return {}; }));
  } else {
    r.subscribe = await settle(c.client.subscribeResource({ uri: NOTE }));
  }
  r.add = await settle(c.call({ name: 'add_note', arguments: { title: 'groceries', text: '- milk\n- eggs' } }));
  const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 20000));
  emit({ event: 'updated', params: await Promise.race([updated, timeout]) });

  r.note = await settle(c.client.readResource({ uri: NOTE }));
  r.logo = await settle(c.client.readResource({ uri: 'notes://logo' }));
  r.missing = await settle(c.client.readResource({ uri: 'notes://note/nope' }));
  r.prompts = await settle(c.client.listPrompts());
  r.summarize = await settle(c.client.getPrompt({ name: 'summarize', arguments: { title: 'groceries', style: 'detailed' } }));
  r.logoPrompt = await settle(c.client.getPrompt({ name: 'describe_logo' }));
  r.complete = await settle(c.client.complete({ ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'title', value: 'gro' } }));
  r.completeTemplate = await settle(c.client.complete({ ref: { type: 'ref/resource', uri: 'notes://note/{title}' }, argument: { name: 'title', value: 'g' } }));
  emit({ event: 'results', ...r });

  if (subscription) await subscription.close();
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

#!/usr/bin/env node
// Interop checks: the official JavaScript SDK at 0.3.14 (an A2A v0.3
// client, pinned in package.json) against our Go server serving v0.3 on
// its JSON-RPC binding (serve.WithV03).
//
// Usage:
//   node client.mjs <baseURL> <apiKey> [--name=<expected agent name>]
//
//   baseURL  where the server serves /.well-known/agent-card.json
//   apiKey   sent in X-API-Key with every call (the extended card needs an
//            authenticated caller)
//
// The server hosts an echo agent: each message makes a task that reports
// working, emits one artifact "echo: " + <text>, and completes; the text
// "wait" makes a task that works until it is canceled.
//
// Output: one "ok - <name>" or "not ok - <name>: <reason>" line per check,
// then exactly "<N> passed, <M> failed". Exit status 1 if M > 0. Only
// loopback hosts are contacted.

import { randomUUID } from 'node:crypto';
import { A2AClient, JsonRpcTransport } from '@a2a-js/sdk/client';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--name='));
const name = process.argv.slice(2).find((a) => a.startsWith('--name='))?.slice('--name='.length);
if (args.length !== 2) {
  console.error('usage: node client.mjs <baseURL> <apiKey> [--name=<agent name>]');
  process.exit(2);
}
const [baseUrl, apiKey] = args;
const TIMEOUT = Number(process.env.A2A_INTEROP_TIMEOUT_MS || 10000);

// fetchImpl adds the API key and refuses any host but loopback.
async function fetchImpl(input, init = {}) {
  const url = new URL(typeof input === 'string' ? input : input.url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    throw new Error(`refusing to contact ${url.host}: not loopback`);
  }
  const headers = new Headers(init.headers || {});
  headers.set('X-API-Key', apiKey);
  if (headers.has('A2A-Version')) throw new Error('a v0.3 client sent A2A-Version');
  return fetch(url, { ...init, headers, signal: init.signal ?? AbortSignal.timeout(TIMEOUT * 3) });
}

let passed = 0;
let failed = 0;
async function check(title, fn) {
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${TIMEOUT} ms`)), TIMEOUT).unref()),
    ]);
    passed++;
    console.log(`ok - ${title}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${title}: ${e?.stack || e}`);
  }
}
function assert(cond, what) {
  if (!cond) throw new Error(what);
}
function ok(resp, what) {
  assert(resp && !('error' in resp), `${what}: error ${JSON.stringify(resp?.error)}`);
  return resp.result;
}
function message(text, taskId) {
  const m = { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] };
  if (taskId) m.taskId = taskId;
  return m;
}
function kinds(events) {
  return events
    .map((e) => e.kind + (e.status ? '/' + e.status.state : '') + (e.kind === 'status-update' ? `/final=${e.final}` : ''))
    .join(' ');
}

let client;
let card;
let taskId;

await check('agent card is a v0.3 card (dual)', async () => {
  client = await A2AClient.fromCardUrl(`${baseUrl}/.well-known/agent-card.json`, { fetchImpl });
  card = await client.getAgentCard();
  assert(card.protocolVersion === '0.3.0', `protocolVersion ${card.protocolVersion}`);
  assert(card.url === `${baseUrl}/a2a/jsonrpc`, `url ${card.url}`);
  assert(card.preferredTransport === 'JSONRPC', `preferredTransport ${card.preferredTransport}`);
  assert(!name || card.name === name, `name ${card.name}`);
  assert(card.capabilities?.streaming === true, 'streaming not declared');
  assert(card.capabilities?.pushNotifications === true, 'pushNotifications not declared');
  assert(card.supportsAuthenticatedExtendedCard === true, 'supportsAuthenticatedExtendedCard not declared');
  assert(Array.isArray(card.supportedInterfaces), 'no v1.0 supportedInterfaces beside the v0.3 members');
});

await check('message/send (blocking) returns the completed task', async () => {
  const task = ok(await client.sendMessage({ message: message('hello'), configuration: { blocking: true } }), 'sendMessage');
  assert(task.kind === 'task', `kind ${task.kind}`);
  assert(task.status.state === 'completed', `state ${task.status.state}`);
  const text = task.artifacts?.[0]?.parts?.[0];
  assert(text?.kind === 'text' && text.text === 'echo: hello', `artifact ${JSON.stringify(task.artifacts)}`);
  assert(task.history?.[0]?.kind === 'message' && task.history[0].role === 'user', `history ${JSON.stringify(task.history)}`);
  taskId = task.id;
});

await check('message/stream streams v0.3 events and ends after final', async () => {
  const events = [];
  for await (const ev of client.sendMessageStream({ message: message('stream me') })) events.push(ev);
  const got = kinds(events);
  const want = 'task/submitted status-update/working/final=false artifact-update status-update/completed/final=true';
  assert(got === want, `events "${got}", want "${want}"`);
  assert(events[2].artifact.parts[0].text === 'echo: stream me', `artifact ${JSON.stringify(events[2])}`);
});

await check('tasks/get returns the task with historyLength', async () => {
  const task = ok(await client.getTask({ id: taskId, historyLength: 1 }), 'getTask');
  assert(task.kind === 'task' && task.id === taskId && task.status.state === 'completed', JSON.stringify(task));
  assert(task.history?.length === 1, `history ${JSON.stringify(task.history)}`);
});

await check('tasks/get of an unknown task is TaskNotFound (-32001)', async () => {
  const resp = await client.getTask({ id: 'no-such-task' });
  assert(resp.error?.code === -32001, `answer ${JSON.stringify(resp)}`);
});

await check('tasks/resubscribe and tasks/cancel of a running task', async () => {
  const task = ok(await client.sendMessage({ message: message('wait'), configuration: { blocking: false } }), 'sendMessage');
  assert(task.kind === 'task' && ['submitted', 'working'].includes(task.status.state), `state ${task.status.state}`);
  const events = [];
  let canceled;
  for await (const ev of client.resubscribeTask({ id: task.id })) {
    events.push(ev);
    if (events.length === 1) {
      assert(ev.kind === 'task' && ev.id === task.id, `first event ${JSON.stringify(ev)}`);
      canceled = ok(await client.cancelTask({ id: task.id }), 'cancelTask');
    }
  }
  assert(canceled?.kind === 'task' && canceled.status.state === 'canceled', `cancelTask ${JSON.stringify(canceled)}`);
  const last = events[events.length - 1];
  assert(last.kind === 'status-update' && last.status.state === 'canceled' && last.final === true, `events "${kinds(events)}"`);
  const again = await client.cancelTask({ id: task.id });
  assert(again.error?.code === -32002, `second cancel ${JSON.stringify(again)}`);
});

await check('push config set, get, list, delete', async () => {
  const url = 'http://127.0.0.1:9/hook'; // nobody listens; the task is finished, so nothing is sent
  const set = ok(await client.setTaskPushNotificationConfig({ taskId, pushNotificationConfig: { url, token: 'tok' } }), 'set');
  assert(set.taskId === taskId && set.pushNotificationConfig.url === url, `set ${JSON.stringify(set)}`);
  assert(set.pushNotificationConfig.id === taskId, `a config without an id gets the task's: ${set.pushNotificationConfig.id}`);
  ok(await client.setTaskPushNotificationConfig({ taskId, pushNotificationConfig: { id: 'second', url: url + '2' } }), 'set second');
  const got = ok(await client.getTaskPushNotificationConfig({ id: taskId }), 'get');
  assert(got.pushNotificationConfig.token === 'tok', `get ${JSON.stringify(got)}`);
  const second = ok(await client.getTaskPushNotificationConfig({ id: taskId, pushNotificationConfigId: 'second' }), 'get second');
  assert(second.pushNotificationConfig.url === url + '2', `get second ${JSON.stringify(second)}`);
  const list = ok(await client.listTaskPushNotificationConfig({ id: taskId }), 'list');
  assert(Array.isArray(list) && list.length === 2, `list ${JSON.stringify(list)}`);
  const del = ok(await client.deleteTaskPushNotificationConfig({ id: taskId, pushNotificationConfigId: 'second' }), 'delete');
  assert(del === null, `delete ${JSON.stringify(del)}`);
  const after = ok(await client.listTaskPushNotificationConfig({ id: taskId }), 'list after delete');
  assert(after.length === 1 && after[0].pushNotificationConfig.id === taskId, `list after delete ${JSON.stringify(after)}`);
});

await check('agent/getAuthenticatedExtendedCard', async () => {
  // A2AClient 0.3.14 has no call for it; its JSON-RPC transport has.
  const transport = new JsonRpcTransport({ endpoint: card.url, fetchImpl });
  const ext = await transport.getExtendedAgentCard();
  assert(ext.protocolVersion === '0.3.0' && ext.url === card.url, `card ${JSON.stringify(ext)}`);
  assert(ext.name === `${card.name} (extended)`, `name ${ext.name}`);
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);

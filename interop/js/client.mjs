#!/usr/bin/env node
// Interop checks: the official JavaScript SDK (@a2a-js/sdk, pinned to 1.3.0
// in package.json) used as an A2A v1.0 CLIENT of our Go server.
//
// Usage:
//   node client.mjs <baseURL> <jsonrpc|rest|grpc> [--name=<expected agent name>]
//
//   baseURL  where the server serves /.well-known/agent-card.json,
//            e.g. http://127.0.0.1:8080
//   binding  "jsonrpc" selects the card's JSONRPC interface,
//            "rest" selects its HTTP+JSON interface,
//            "grpc" selects its GRPC interface (url "host:port", plaintext),
//            through the SDK's gRPC transport (@a2a-js/sdk/client/grpc, on
//            @grpc/grpc-js).
//
// Environment:
//   A2A_INTEROP_TIMEOUT_MS  per-operation timeout (default 10000)
//   A2A_INTEROP_TRACE=1     log every HTTP request the SDK makes to stderr
//
// The server is expected to host an echo agent: each message creates a task
// that reports TASK_STATE_WORKING, emits one artifact whose text part is
// "echo: " + <message text>, and completes. The card declares streaming and
// pushNotifications. A message whose text starts with "push:" instead makes
// a task that reports TASK_STATE_WORKING and then TASK_STATE_INPUT_REQUIRED;
// the answer (a message with the task's id) completes it the echo way. The
// server must deliver webhooks: the push-delivery checks run a receiver on
// 127.0.0.1 and register it through the SDK.
//
// Output is TAP-like: one "ok - <name>" or "not ok - <name>: <reason>" line
// per check, "# ..." diagnostic lines, and finally exactly
// "<N> passed, <M> failed". The exit status is 1 if M > 0, 2 on bad usage.
//
// Only loopback hosts are ever contacted: the fetch used by the SDK refuses
// any other destination (the agent card could name one), and the gRPC
// interface is used only if its host:port is on loopback.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { isDeepStrictEqual } from 'node:util';

import {
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  SendMessageRequest,
  StreamResponse,
  TaskPushNotificationConfig,
  TaskState,
  taskStateToJSON,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';

// ---------------------------------------------------------------------------
// Arguments.

const BINDINGS = {
  jsonrpc: 'JSONRPC',
  rest: 'HTTP+JSON',
  grpc: 'GRPC',
};
// The interfaces the card must always list: the two JSON bindings. The
// GRPC one is required when it is the binding under test.
const JSON_BINDINGS = ['JSONRPC', 'HTTP+JSON'];

const positional = [];
let expectedName;
for (const arg of process.argv.slice(2)) {
  if (arg.startsWith('--name=')) expectedName = arg.slice('--name='.length);
  else positional.push(arg);
}
if (positional.length !== 2 || !(positional[1] in BINDINGS)) {
  console.error('usage: node client.mjs <baseURL> <jsonrpc|rest|grpc> [--name=<agent name>]');
  process.exit(2);
}
const [baseUrl, bindingArg] = positional;
const binding = BINDINGS[bindingArg];
const TIMEOUT_MS = Number(process.env.A2A_INTEROP_TIMEOUT_MS) || 10000;
const TRACE = process.env.A2A_INTEROP_TRACE === '1';

// ---------------------------------------------------------------------------
// fetch: loopback only, optional tracing.

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function isLoopback(url) {
  try {
    return LOOPBACK.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

/** Whether a gRPC interface URL is "host:port" with a loopback host. */
function isLoopbackHostPort(addr) {
  if (typeof addr !== 'string' || !/^(\[[^\]]+\]|[^:/[\]]+):\d+$/.test(addr)) return false;
  return isLoopback(`http://${addr}`);
}

if (!isLoopback(baseUrl)) {
  console.error(`refusing non-loopback base URL ${baseUrl}`);
  process.exit(2);
}

async function guardedFetch(input, init) {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (!isLoopback(url)) {
    throw new Error(`interop client refuses non-loopback URL ${url}`);
  }
  if (TRACE) {
    const headers = Object.entries(init?.headers ?? {})
      .map(([k, v]) => `${k}: ${v}`)
      .join('; ');
    const body = typeof init?.body === 'string' ? ` ${init.body}` : '';
    console.error(`> ${init?.method ?? 'GET'} ${url} [${headers}]${body}`);
  }
  // The card resolver passes no AbortSignal; bound every request anyway.
  const res = await fetch(input, init?.signal ? init : { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (TRACE) {
    console.error(`< ${res.status} ${res.headers.get('content-type') ?? ''}`);
  }
  return res;
}

// ---------------------------------------------------------------------------
// Check harness.

let passed = 0;
let failed = 0;

function note(msg) {
  console.log(`# ${msg}`);
}

/** Runs fn; it returns nothing on success and throws on failure. */
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (err) {
    failed++;
    console.log(`not ok - ${name}: ${describe(err)}`);
  }
}

class CheckFailure extends Error {}

function fail(msg) {
  throw new CheckFailure(msg);
}

function assert(cond, msg) {
  if (!cond) fail(msg);
}

function describe(err) {
  if (err instanceof CheckFailure) return err.message;
  if (err instanceof Error) {
    let s = `${err.name}: ${err.message}`;
    if (err.cause instanceof Error) s += ` (cause: ${err.cause.name}: ${err.cause.message})`;
    return s.replace(/\s+/g, ' ');
  }
  return String(err);
}

function opts() {
  return { signal: AbortSignal.timeout(TIMEOUT_MS) };
}

function stateName(state) {
  return state === undefined ? 'undefined' : taskStateToJSON(state);
}

function textOf(parts) {
  return (parts ?? [])
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('');
}

function userMessage(text, extra = {}) {
  // fromJSON fills every field of the SDK's internal (ts-proto) shape.
  return SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [{ text }],
      ...extra,
    },
  });
}

/**
 * Asserts that err is the A2A error `name` (e.g. "TaskNotCancelableError")
 * with the binding-specific identity: the JSON-RPC code, the REST HTTP
 * status, or the gRPC status code; and the ErrorInfo reason. Errors delivered inside an SSE stream are
 * wrapped by the SDK's JSON-RPC transport in a plain Error whose `cause` is
 * the typed error; that is accepted and reported as a diagnostic.
 */
function expectA2AError(err, { name, code, reason, httpStatus, grpcStatus }) {
  let e = err;
  if (!(e instanceof A2AError) && e?.cause instanceof A2AError) {
    note(`${name} arrived inside the SSE stream (SDK wraps it: ${describe(err)})`);
    e = e.cause;
  }
  if (!(e instanceof A2AError)) {
    fail(`expected ${name}, got non-A2A error ${describe(err)}`);
  }
  const problems = [];
  if (e.name !== name) problems.push(`name ${e.name}`);
  if (e.reason !== reason) problems.push(`reason ${e.reason}`);
  if (binding === 'JSONRPC') {
    if (e.transport !== 'jsonrpc') problems.push(`transport ${e.transport}`);
    if (e.envelopeCode !== code) problems.push(`code ${e.envelopeCode}`);
  } else if (binding === 'GRPC') {
    // The SDK's gRPC transport types the error from the google.rpc.ErrorInfo
    // in grpc-status-details-bin; `status` is the call's gRPC code, on
    // unary calls and streams alike (a stream fails with a status too).
    if (e.transport !== 'grpc') problems.push(`transport ${e.transport}`);
    if (e.status !== grpcStatus) problems.push(`gRPC status ${e.status}`);
  } else {
    if (e.transport !== 'rest') problems.push(`transport ${e.transport}`);
    const inStream = String(e.headers?.['content-type'] ?? '').startsWith('text/event-stream');
    if (inStream && e.statusCode === 200) {
      // An "event: error" inside an SSE stream that was opened with 200.
      note(`${name} arrived as an SSE error event on an HTTP 200 stream`);
    } else if (e.statusCode !== httpStatus) {
      problems.push(`HTTP status ${e.statusCode}`);
    }
  }
  if (problems.length > 0) {
    const identity = { JSONRPC: `code ${code}`, 'HTTP+JSON': `HTTP ${httpStatus}`, GRPC: `gRPC status ${grpcStatus}` }[binding];
    fail(`expected ${name} (${identity}, reason ${reason}); got ${problems.join(', ')}; message "${e.message}"`);
  }
}

async function expectError(promiseFn, spec) {
  let result;
  try {
    result = await promiseFn();
  } catch (err) {
    expectA2AError(err, spec);
    return;
  }
  fail(`expected ${spec.name}, but the call succeeded: ${JSON.stringify(result)?.slice(0, 200)}`);
}

// gRPC status codes (A2A §5.4 error code mappings): NOT_FOUND is 5,
// FAILED_PRECONDITION 9.
const ERR = {
  TaskNotFound: { name: 'TaskNotFoundError', code: -32001, reason: 'TASK_NOT_FOUND', httpStatus: 404, grpcStatus: 5 },
  TaskNotCancelable: { name: 'TaskNotCancelableError', code: -32002, reason: 'TASK_NOT_CANCELABLE', httpStatus: 400, grpcStatus: 9 },
  UnsupportedOperation: { name: 'UnsupportedOperationError', code: -32004, reason: 'UNSUPPORTED_OPERATION', httpStatus: 400, grpcStatus: 9 },
};

// ---------------------------------------------------------------------------
// Checks.

let card;
let client;
let clientError;
let blockingTask; // the completed task of check (b)

function needClient() {
  if (!client) fail(`no client (${clientError ? describe(clientError) : 'agent card unavailable'})`);
  return client;
}

let retryTask; // memoized promise of the one retry below

async function needTask() {
  if (blockingTask) return blockingTask;
  // (b) failed: try once more (once in total) so the dependent checks can
  // still run.
  retryTask ??= (async () => {
    const res = await needClient().sendMessage(userMessage('hello'), opts());
    if (!res || !('status' in res) || res.status?.state !== TaskState.TASK_STATE_COMPLETED) {
      fail('no completed task available (blocking send did not produce one)');
    }
    return res;
  })();
  try {
    return await retryTask;
  } catch (err) {
    fail(`no task from send-blocking; retry failed: ${describe(err)}`);
  }
}

// (a) Agent card.
await check('card', async () => {
  const resolver = new DefaultAgentCardResolver({ fetchImpl: guardedFetch });
  card = await resolver.resolve(baseUrl);
  assert(card && typeof card === 'object', 'card is not an object');
  assert(typeof card.name === 'string' && card.name !== '', 'card has no name');
  if (expectedName !== undefined) {
    assert(card.name === expectedName, `card name "${card.name}", want "${expectedName}"`);
  }
  const ifaces = card.supportedInterfaces ?? [];
  const required = binding === 'GRPC' ? [...JSON_BINDINGS, 'GRPC'] : JSON_BINDINGS;
  for (const want of required) {
    const iface = ifaces.find((i) => i.protocolBinding === want);
    assert(iface, `no supportedInterfaces entry with protocolBinding "${want}" (have ${JSON.stringify(ifaces)})`);
    assert(iface.protocolVersion === '1.0', `${want} interface protocolVersion "${iface.protocolVersion}", want "1.0"`);
    if (want === 'GRPC') {
      // Our server lists its gRPC interface as host:port, no scheme: the
      // form a2a.proto's AgentInterface.url asks for on main (queued for
      // 1.0.2; v1.0.1 gives no gRPC form), and the one the SDK dials.
      assert(isLoopbackHostPort(iface.url), `GRPC interface url "${iface.url}" is not a loopback host:port`);
      continue;
    }
    assert(typeof iface.url === 'string' && /^https?:\/\//.test(iface.url), `${want} interface url "${iface.url}" is not absolute`);
    assert(isLoopback(iface.url), `${want} interface url "${iface.url}" is not a loopback URL`);
  }
  assert(card.capabilities?.streaming === true, 'capabilities.streaming is not true');
  assert(card.capabilities?.pushNotifications === true, 'capabilities.pushNotifications is not true');
});

// Build the SDK client restricted to the requested binding.
async function transportFactory() {
  switch (binding) {
    case 'JSONRPC':
      return new JsonRpcTransportFactory({ fetchImpl: guardedFetch });
    case 'HTTP+JSON':
      return new RestTransportFactory({ fetchImpl: guardedFetch });
    default: {
      // Imported only here: the JSON runs need neither @grpc/grpc-js nor
      // @bufbuild/protobuf. The transport dials the card's GRPC url, which
      // must be a loopback host:port (the SDK makes an insecure channel
      // when given no credentials).
      const grpcIface = (card.supportedInterfaces ?? []).filter((i) => i.protocolBinding === 'GRPC');
      if (grpcIface.length === 0 || !grpcIface.every((i) => isLoopbackHostPort(i.url))) {
        throw new Error(`refusing GRPC interfaces ${JSON.stringify(grpcIface)}: not all loopback host:port`);
      }
      // Every case below runs over gRPC too; none is skipped. The SDK
      // sends "a2a-version: 1.0" as call metadata (our Handler refuses a
      // call without it, A2A §3.6.1), types errors from the
      // google.rpc.ErrorInfo of grpc-status-details-bin, and cancels a
      // call when its AbortSignal fires (it sets no gRPC deadline).
      const { GrpcTransportFactory } = await import('@a2a-js/sdk/client/grpc');
      return new GrpcTransportFactory();
    }
  }
}

if (card) {
  try {
    const factory = new ClientFactory({
      transports: [await transportFactory()],
      preferredTransports: [binding],
    });
    client = await factory.createFromAgentCard(card);
    if (client.transport.protocolName !== binding) {
      throw new Error(`SDK selected transport ${client.transport.protocolName}, want ${binding}`);
    }
    const endpoint =
      client.transport.endpoint ?? (card.supportedInterfaces ?? []).find((i) => i.protocolBinding === binding)?.url ?? '?';
    note(`SDK transport ${client.transport.protocolName}, A2A-Version ${client.protocolVersion}, endpoint ${endpoint}`);
  } catch (err) {
    clientError = err;
    client = undefined;
  }
}

// (b) Blocking SendMessage.
await check('send-blocking', async () => {
  const res = await needClient().sendMessage(userMessage('hello'), opts());
  assert(res && 'status' in res && !('messageId' in res), `result is not a Task: ${JSON.stringify(res)?.slice(0, 200)}`);
  assert(res.id !== '', 'task has no id');
  assert(res.contextId !== '', 'task has no contextId');
  assert(res.status?.state === TaskState.TASK_STATE_COMPLETED, `task state ${stateName(res.status?.state)}, want TASK_STATE_COMPLETED`);
  const texts = (res.artifacts ?? []).map((a) => textOf(a.parts));
  assert(texts.includes('echo: hello'), `no artifact with text "echo: hello" (artifact texts ${JSON.stringify(texts)})`);
  blockingTask = res;
});

// (c) SendStreamingMessage.
await check('send-streaming', async () => {
  const events = [];
  for await (const ev of needClient().sendMessageStream(userMessage('stream me'), opts())) {
    events.push(ev);
  }
  assert(events.length > 0, 'stream produced no events');
  const kinds = events.map((e) => e.payload?.$case ?? 'none');
  note(`stream events: ${kinds.join(', ')}`);
  assert(kinds[0] === 'task', `first event is "${kinds[0]}", want "task"`);
  const task = events[0].payload.value;
  assert(task.id !== '', 'first task event has no id');
  const rest = events.slice(1);
  assert(rest.length > 0, 'no events after the task');
  for (const [i, ev] of rest.entries()) {
    const c = ev.payload?.$case;
    assert(c === 'statusUpdate' || c === 'artifactUpdate', `event ${i + 1} is "${c}", want statusUpdate or artifactUpdate`);
    assert(ev.payload.value.taskId === task.id, `event ${i + 1} taskId "${ev.payload.value.taskId}", want "${task.id}"`);
    assert(ev.payload.value.contextId === task.contextId, `event ${i + 1} contextId "${ev.payload.value.contextId}", want "${task.contextId}"`);
  }
  const states = [task.status?.state, ...rest.filter((e) => e.payload.$case === 'statusUpdate').map((e) => e.payload.value.status?.state)];
  assert(states.includes(TaskState.TASK_STATE_WORKING), `no TASK_STATE_WORKING seen (states ${states.map(stateName).join(', ')})`);
  const last = events[events.length - 1].payload;
  assert(last.$case === 'statusUpdate', `last event is "${last.$case}", want statusUpdate`);
  assert(last.value.status?.state === TaskState.TASK_STATE_COMPLETED, `last status ${stateName(last.value.status?.state)}, want TASK_STATE_COMPLETED`);
  const artifactText = rest
    .filter((e) => e.payload.$case === 'artifactUpdate')
    .map((e) => textOf(e.payload.value.artifact?.parts))
    .join('');
  assert(artifactText === 'echo: stream me', `artifact text "${artifactText}", want "echo: stream me"`);
});

// (d) GetTask with historyLength 1.
await check('get-task-history-length', async () => {
  const t = await needTask();
  const got = await needClient().getTask({ tenant: '', id: t.id, historyLength: 1 }, opts());
  assert(got.id === t.id, `got task "${got.id}", want "${t.id}"`);
  assert(got.status?.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(got.status?.state)}, want TASK_STATE_COMPLETED`);
  assert((got.history ?? []).length <= 1, `history has ${got.history.length} messages, want at most 1`);
});

// (e) ListTasks filtered by contextId.
await check('list-tasks-by-context', async () => {
  const t = await needTask();
  const res = await needClient().listTasks(ListTasksRequest.fromJSON({ contextId: t.contextId }), opts());
  const ids = (res.tasks ?? []).map((x) => x.id);
  assert(ids.length === 1 && ids[0] === t.id, `tasks ${JSON.stringify(ids)}, want exactly ["${t.id}"]`);
  assert(res.tasks[0].contextId === t.contextId, `listed task contextId "${res.tasks[0].contextId}", want "${t.contextId}"`);
});

// (f) CancelTask on a finished task.
await check('cancel-finished-task', async () => {
  const t = await needTask();
  await expectError(() => needClient().cancelTask({ tenant: '', id: t.id, metadata: undefined }, opts()), ERR.TaskNotCancelable);
});

// (g) SubscribeToTask on a finished task.
await check('subscribe-finished-task', async () => {
  const t = await needTask();
  await expectError(async () => {
    const events = [];
    for await (const ev of needClient().resubscribeTask({ tenant: '', id: t.id }, opts())) {
      events.push(ev.payload?.$case ?? 'none');
    }
    return { events };
  }, ERR.UnsupportedOperation);
});

// (h) Webhook delivery. A receiver of our own on 127.0.0.1 collects the
// notifications; the SDK registers it twice: with the SendMessage that
// makes the task (hook "a") and, while the task waits for input, with
// CreateTaskPushNotificationConfig (hook "b"). The answer completes the task.

const MAX_NOTIFICATION_BYTES = 1 << 20;

/** A webhook receiver on 127.0.0.1 that records every request it gets. */
class WebhookReceiver {
  requests = []; // { method, path, headers, body }
  #waiters = new Set();
  #server;
  base;

  async start() {
    this.#server = createServer((req, res) => {
      const chunks = [];
      let size = 0;
      req.on('data', (c) => {
        size += c.length;
        if (size <= MAX_NOTIFICATION_BYTES) chunks.push(c);
      });
      req.on('end', () => {
        const rec = {
          method: req.method,
          path: req.url,
          headers: req.headers,
          body: size <= MAX_NOTIFICATION_BYTES ? Buffer.concat(chunks).toString('utf8') : `<${size} bytes, too large>`,
        };
        // Recorded once the answer is sent: a check that saw the last
        // notification leaves no call of the server unanswered.
        res.on('finish', () => {
          this.requests.push(rec);
          for (const w of this.#waiters) w();
        });
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      });
    });
    await new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', resolve);
    });
    this.base = `http://127.0.0.1:${this.#server.address().port}`;
  }

  /** Requests made to path, in the order they were answered. */
  at(path) {
    return this.requests.filter((r) => r.path === path);
  }

  /** Resolves once pred(requests) holds; fails after TIMEOUT_MS. */
  waitFor(pred, what) {
    return new Promise((resolve, reject) => {
      const done = () => {
        if (!pred(this.requests)) return;
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(done);
        reject(new CheckFailure(`timed out after ${TIMEOUT_MS} ms waiting for ${what}`));
      }, TIMEOUT_MS);
      this.#waiters.add(done);
      done();
    });
  }

  close() {
    if (!this.#server) return Promise.resolve();
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

const HOOKS = {
  a: { path: '/hook/a', token: 'tok-a-' + randomUUID(), credentials: 'cred-a-' + randomUUID() },
  b: { path: '/hook/b', token: 'tok-b-' + randomUUID(), credentials: 'cred-b-' + randomUUID() },
};

let receiver;
let receiverError;
let pushTask; // the task of push-send-with-config, input-required
let pushAnswered = false;
let createdConfigId; // the id of hook b's config

async function needReceiver() {
  if (receiver) return receiver;
  if (receiverError) fail(`no webhook receiver: ${describe(receiverError)}`);
  const r = new WebhookReceiver();
  try {
    await r.start();
  } catch (err) {
    receiverError = err;
    fail(`no webhook receiver: ${describe(err)}`);
  }
  receiver = r;
  note(`webhook receiver at ${r.base}`);
  return r;
}

function hookConfig(r, name) {
  const h = HOOKS[name];
  return {
    url: r.base + h.path,
    token: h.token,
    authentication: { scheme: 'Bearer', credentials: h.credentials },
  };
}

function needPushTask() {
  if (!pushTask) fail('no input-required task (push-send-with-config failed)');
  return pushTask;
}

await check('push-send-with-config', async () => {
  const r = await needReceiver();
  const req = SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'push: one' }] },
    configuration: { taskPushNotificationConfig: hookConfig(r, 'a') },
  });
  const res = await needClient().sendMessage(req, opts());
  assert(res && 'status' in res && !('messageId' in res), `result is not a Task: ${JSON.stringify(res)?.slice(0, 200)}`);
  assert(res.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED, `task state ${stateName(res.status?.state)}, want TASK_STATE_INPUT_REQUIRED`);
  pushTask = res;
});

await check('push-config-create-on-waiting-task', async () => {
  const t = needPushTask();
  const r = await needReceiver();
  const want = hookConfig(r, 'b');
  const cfg = await needClient().createTaskPushNotificationConfig(
    TaskPushNotificationConfig.fromJSON({ taskId: t.id, ...want }),
    opts(),
  );
  assert(cfg.id !== '', 'created config has no id');
  assert(cfg.taskId === t.id, `created config taskId "${cfg.taskId}", want "${t.id}"`);
  assert(cfg.url === want.url, `created config url "${cfg.url}", want "${want.url}"`);
  createdConfigId = cfg.id;
});

await check('push-config-list-both', async () => {
  const t = needPushTask();
  const r = await needReceiver();
  const res = await needClient().listTaskPushNotificationConfig(
    ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: t.id }),
    opts(),
  );
  const configs = res.configs ?? [];
  const urls = configs.map((c) => c.url).sort();
  const want = [r.base + HOOKS.a.path, r.base + HOOKS.b.path];
  assert(isDeepStrictEqual(urls, want), `config urls ${JSON.stringify(urls)}, want ${JSON.stringify(want)}`);
  for (const c of configs) {
    assert(c.taskId === t.id, `listed config taskId "${c.taskId}", want "${t.id}"`);
    assert(c.id !== '', `listed config for ${c.url} has no id`);
  }
  assert(createdConfigId === undefined || configs.some((c) => c.id === createdConfigId), `created config "${createdConfigId}" not listed`);
});

await check('push-answer-completes', async () => {
  const t = needPushTask();
  const req = SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: t.id, contextId: t.contextId, parts: [{ text: 'two' }] },
  });
  const res = await needClient().sendMessage(req, opts());
  assert(res && 'status' in res && res.id === t.id, `result is not task "${t.id}": ${JSON.stringify(res)?.slice(0, 200)}`);
  assert(res.status?.state === TaskState.TASK_STATE_COMPLETED, `task state ${stateName(res.status?.state)}, want TASK_STATE_COMPLETED`);
  pushAnswered = true;
});

/** The kind of a decoded notification: "statusUpdate:<state>" or "artifactUpdate". */
function notificationKind(sr) {
  const c = sr.payload?.$case;
  return c === 'statusUpdate' ? `statusUpdate:${stateName(sr.payload.value.status?.state)}` : String(c);
}

function sortedKeys(v) {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortedKeys(v[k])]));
  }
  return v;
}

/**
 * Checks what hook `name` received: `kinds` in this order, the last being
 * the completion, each a POST with the configured headers whose body the
 * SDK's StreamResponse type decodes, and re-encodes to the same JSON.
 */
async function checkDelivery(name, kinds) {
  const t = needPushTask();
  assert(pushAnswered, 'the task was not completed (push-answer-completes failed)');
  const r = await needReceiver();
  const hook = HOOKS[name];
  const isCompletion = (req) => {
    try {
      const j = JSON.parse(req.body);
      return j.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED';
    } catch {
      return false;
    }
  };
  await r.waitFor((reqs) => reqs.some((q) => q.path === hook.path && isCompletion(q)), `the completion at ${hook.path}`);
  const got = r.at(hook.path);
  const decoded = [];
  let lastSeq = -Infinity;
  for (const [i, q] of got.entries()) {
    const at = `notification ${i + 1} of ${got.length}`;
    assert(q.method === 'POST', `${at}: method ${q.method}, want POST`);
    assert(q.headers['content-type'] === 'application/a2a+json', `${at}: Content-Type "${q.headers['content-type']}", want "application/a2a+json"`);
    const wantAuth = `Bearer ${hook.credentials}`;
    assert(q.headers.authorization === wantAuth, `${at}: Authorization "${q.headers.authorization}", want "${wantAuth}"`);
    for (const h of ['a2a-notification-token', 'x-a2a-notification-token']) {
      assert(q.headers[h] === hook.token, `${at}: ${h} "${q.headers[h]}", want "${hook.token}"`);
    }
    const id = q.headers['a2a-push-event-id'] ?? '';
    const m = /^(.*):(\d+)$/.exec(id);
    assert(m && m[1] === t.id, `${at}: A2A-Push-Event-Id "${id}", want "${t.id}:<seq>"`);
    const seq = Number(m[2]);
    assert(seq > lastSeq, `${at}: event seq ${seq} does not follow ${lastSeq}`);
    lastSeq = seq;

    let raw;
    try {
      raw = JSON.parse(q.body);
    } catch (err) {
      fail(`${at}: body is not JSON (${describe(err)}): ${q.body.slice(0, 200)}`);
    }
    const keys = Object.keys(raw);
    assert(keys.length === 1 && (keys[0] === 'statusUpdate' || keys[0] === 'artifactUpdate'), `${at}: body keys ${JSON.stringify(keys)}, want exactly one of statusUpdate, artifactUpdate`);
    if (raw.statusUpdate) {
      assert(typeof raw.statusUpdate.status?.state === 'string', `${at}: status.state ${JSON.stringify(raw.statusUpdate.status?.state)} is not a ProtoJSON enum name`);
    }
    const sr = StreamResponse.fromJSON(raw);
    const ev = sr.payload?.value;
    assert(sr.payload?.$case === keys[0], `${at}: SDK decoded payload "${sr.payload?.$case}", want "${keys[0]}"`);
    assert(ev.taskId === t.id, `${at}: taskId "${ev.taskId}", want "${t.id}"`);
    assert(ev.contextId === t.contextId, `${at}: contextId "${ev.contextId}", want "${t.contextId}"`);
    const again = StreamResponse.toJSON(sr);
    assert(
      isDeepStrictEqual(sortedKeys(again), sortedKeys(raw)),
      `${at}: the SDK's StreamResponse does not round-trip the body: sent ${JSON.stringify(raw)}, SDK re-encodes ${JSON.stringify(again)}`,
    );
    decoded.push(sr);
  }
  const gotKinds = decoded.map(notificationKind);
  note(`hook ${name}: ${gotKinds.join(', ')}`);
  assert(isDeepStrictEqual(gotKinds, kinds), `notifications ${JSON.stringify(gotKinds)}, want ${JSON.stringify(kinds)}`);
  const art = decoded.filter((sr) => sr.payload.$case === 'artifactUpdate').map((sr) => textOf(sr.payload.value.artifact?.parts));
  assert(isDeepStrictEqual(art, ['echo: two']), `artifact texts ${JSON.stringify(art)}, want ["echo: two"]`);
}

await check('push-delivered-send-config', () =>
  checkDelivery('a', [
    'statusUpdate:TASK_STATE_WORKING',
    'statusUpdate:TASK_STATE_INPUT_REQUIRED',
    'statusUpdate:TASK_STATE_WORKING',
    'artifactUpdate',
    'statusUpdate:TASK_STATE_COMPLETED',
  ]),
);

await check('push-delivered-created-config', () =>
  checkDelivery('b', ['statusUpdate:TASK_STATE_WORKING', 'artifactUpdate', 'statusUpdate:TASK_STATE_COMPLETED']),
);

await check('push-no-stray-webhook-calls', async () => {
  const r = await needReceiver();
  const stray = r.requests.filter((q) => q.path !== HOOKS.a.path && q.path !== HOOKS.b.path).map((q) => `${q.method} ${q.path}`);
  assert(stray.length === 0, `unexpected requests ${JSON.stringify(stray)}`);
});

// (i) Push notification config CRUD on the task of (b).
// Never called: a config made on a finished task has nothing to deliver
// (the Go test fails if its Deliverer saw a failed call).
const WEBHOOK_URL = 'http://127.0.0.1:9/webhook';
let pushConfig;

function needPushConfig() {
  if (!pushConfig) fail('no push config (create failed)');
  return pushConfig;
}

await check('push-config-create', async () => {
  const t = await needTask();
  const req = TaskPushNotificationConfig.fromJSON({ taskId: t.id, url: WEBHOOK_URL, token: 'interop-token' });
  const cfg = await needClient().createTaskPushNotificationConfig(req, opts());
  assert(cfg.id !== '', 'created config has no id');
  assert(cfg.taskId === t.id, `created config taskId "${cfg.taskId}", want "${t.id}"`);
  assert(cfg.url === WEBHOOK_URL, `created config url "${cfg.url}", want "${WEBHOOK_URL}"`);
  pushConfig = cfg;
});

await check('push-config-get', async () => {
  const cfg = needPushConfig();
  const got = await needClient().getTaskPushNotificationConfig({ tenant: '', taskId: cfg.taskId, id: cfg.id }, opts());
  assert(got.id === cfg.id, `got config id "${got.id}", want "${cfg.id}"`);
  assert(got.taskId === cfg.taskId, `got config taskId "${got.taskId}", want "${cfg.taskId}"`);
  assert(got.url === WEBHOOK_URL, `got config url "${got.url}", want "${WEBHOOK_URL}"`);
});

await check('push-config-list', async () => {
  const cfg = needPushConfig();
  const res = await needClient().listTaskPushNotificationConfig(
    ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: cfg.taskId }),
    opts(),
  );
  const ids = (res.configs ?? []).map((c) => c.id);
  assert(ids.includes(cfg.id), `config ids ${JSON.stringify(ids)} do not include "${cfg.id}"`);
  const listed = res.configs.find((c) => c.id === cfg.id);
  assert(listed.url === WEBHOOK_URL, `listed config url "${listed.url}", want "${WEBHOOK_URL}"`);
});

let pushConfigDeleted = false;
await check('push-config-delete', async () => {
  const cfg = needPushConfig();
  await needClient().deleteTaskPushNotificationConfig({ tenant: '', taskId: cfg.taskId, id: cfg.id }, opts());
  pushConfigDeleted = true;
});

await check('push-config-get-after-delete', async () => {
  const cfg = needPushConfig();
  assert(pushConfigDeleted, 'delete failed, nothing to check');
  await expectError(
    () => needClient().getTaskPushNotificationConfig({ tenant: '', taskId: cfg.taskId, id: cfg.id }, opts()),
    ERR.TaskNotFound,
  );
});

await receiver?.close();

console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;

#!/usr/bin/env node
// Interop fixture: an A2A v1.0 SERVER built from the official JavaScript
// SDK's own server components (@a2a-js/sdk 1.3.0, pinned in package.json),
// so that our Go client can be tested against a foreign implementation.
//
// Usage:
//   node server.mjs <port> [--token-header=<name>]
//
//   port            TCP port on 127.0.0.1; 0 picks a free one.
//   --token-header  header the SDK's push sender puts a config's `token` in
//                   (default: the SDK's own default, X-A2A-Notification-Token).
//
// Once ready it prints exactly one line to stdout,
//
//   listening http://127.0.0.1:PORT
//
// (the HTTP port; the gRPC server's address, 127.0.0.1:GRPCPORT on another
// free port, is in the agent card) and then runs until SIGTERM or SIGINT. Everything else (the SDK's own
// logging included) goes to stderr.
//
// Wiring, all SDK parts:
//   DefaultRequestHandler(card, InMemoryTaskStore, EchoExecutor,
//                         DefaultExecutionEventBusManager,
//                         InMemoryPushNotificationStore,
//                         DefaultPushNotificationSender (loopback-guarded))
//   express app:
//     /.well-known/agent-card.json  agentCardHandler
//     /a2a/jsonrpc                  jsonRpcHandler   (JSON-RPC binding)
//     /a2a/rest                     restHandler      (HTTP+JSON binding)
//   @grpc/grpc-js server (plaintext, 127.0.0.1, a free port):
//     lf.a2a.v1.A2AService          grpcService      (gRPC binding)
// The card lists the three interfaces in that order; the GRPC one's url is
// "127.0.0.1:GRPCPORT" (host:port, no scheme).
//
// The agent echoes: every message creates a task (TASK_STATE_SUBMITTED),
// then it publishes
//   1. statusUpdate TASK_STATE_WORKING
//   2. artifactUpdate "echo" part 1: text "echo: ",   append false
//   3. artifactUpdate "echo" part 2: the message text, append true, lastChunk true
//   4. statusUpdate TASK_STATE_COMPLETED
// If the message text contains "slow", it waits SLOW_MS between events (so a
// client can drop a stream part-way and resubscribe). If it contains "wait",
// it stays in TASK_STATE_WORKING after step 1 until the task is canceled.
// If it contains "streamerror", it publishes a second task event after
// TASK_STATE_WORKING, which the SDK's streaming path rejects mid-stream: the
// stream then ends with an SSE "event: error" frame (the task stays WORKING).
// CancelTask on a running task publishes TASK_STATE_CANCELED.
//
// Only 127.0.0.1 is ever bound, and push notifications are only ever
// delivered to loopback URLs (others are dropped with a log line).

import { randomUUID } from 'node:crypto';
import http from 'node:http';

import * as grpc from '@grpc/grpc-js';
import express from 'express';

import { AgentCard, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultExecutionEventBusManager,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { A2AService, UserBuilder as GrpcUserBuilder, grpcService } from '@a2a-js/sdk/server/grpc';

const HOST = '127.0.0.1';
const JSONRPC_PATH = '/a2a/jsonrpc';
const REST_PATH = '/a2a/rest';
const CARD_PATH = '/.well-known/agent-card.json';
const SLOW_MS = 300;

// ---------------------------------------------------------------------------
// Arguments.

const positional = [];
let tokenHeaderName;
for (const arg of process.argv.slice(2)) {
  if (arg.startsWith('--token-header=')) tokenHeaderName = arg.slice('--token-header='.length);
  else positional.push(arg);
}
const port = Number(positional[0]);
if (positional.length !== 1 || !Number.isInteger(port) || port < 0 || port > 65535) {
  console.error('usage: node server.mjs <port> [--token-header=<name>]');
  process.exit(2);
}

// stdout carries exactly one line (the "listening" line); the SDK logs with
// console.info/console.log too, so send all of that to stderr.
for (const level of ['log', 'info', 'debug']) {
  console[level] = (...args) => console.error(...args);
}

// ---------------------------------------------------------------------------
// The echo agent.

function now() {
  return new Date().toISOString();
}

function textPart(text) {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

function textOf(parts) {
  return (parts ?? [])
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('');
}

class Canceled extends Error {}

class EchoExecutor {
  /** taskId -> { contextId, canceled, wake } for running executions. */
  running = new Map();
  /** taskId -> contextId of every task executed here. */
  contexts = new Map();

  /** Resolves after ms, or at once (throwing Canceled) if the task is canceled. */
  async pause(taskId, ms) {
    const run = this.running.get(taskId);
    if (run.canceled) throw new Canceled();
    await new Promise((resolve) => {
      const timer = ms === Infinity ? undefined : setTimeout(resolve, ms);
      run.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    run.wake = undefined;
    if (run.canceled) throw new Canceled();
  }

  async execute(requestContext, eventBus) {
    const { taskId, contextId } = requestContext;
    const userMessage = requestContext.userMessage;
    const text = textOf(userMessage.parts);
    const slow = text.includes('slow');
    const wait = text.includes('wait');
    const streamError = text.includes('streamerror');
    const run = { contextId, canceled: false, wake: undefined };
    this.running.set(taskId, run);
    this.contexts.set(taskId, contextId);

    const status = (state) =>
      AgentEvent.statusUpdate({ taskId, contextId, status: { state, message: undefined, timestamp: now() }, metadata: undefined });
    const chunk = (value, append, lastChunk) =>
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: 'echo',
          name: 'echo',
          description: '',
          parts: [textPart(value)],
          metadata: undefined,
          extensions: [],
        },
        append,
        lastChunk,
        metadata: undefined,
      });

    try {
      // The SDK requires a task (or message) as the first event of every
      // execution, follow-up turns included.
      const existing = requestContext.task;
      const firstTask = {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
        artifacts: existing?.artifacts ?? [],
        history: existing ? existing.history : [userMessage],
        metadata: undefined,
      };
      eventBus.publish(AgentEvent.task(firstTask));
      if (slow) await this.pause(taskId, SLOW_MS);
      eventBus.publish(status(TaskState.TASK_STATE_WORKING));
      if (streamError) {
        // A second task event breaks the SDK's stream-ordering rule; its
        // streaming path then fails mid-stream (an SSE "event: error").
        eventBus.publish(AgentEvent.task({ ...firstTask, status: { ...firstTask.status, timestamp: now() } }));
        return;
      }
      if (wait) await this.pause(taskId, Infinity);
      if (slow) await this.pause(taskId, SLOW_MS);
      eventBus.publish(chunk('echo: ', false, false));
      if (slow) await this.pause(taskId, SLOW_MS);
      eventBus.publish(chunk(text, true, true));
      if (slow) await this.pause(taskId, SLOW_MS);
      eventBus.publish(status(TaskState.TASK_STATE_COMPLETED));
    } catch (err) {
      if (!(err instanceof Canceled)) throw err;
      // cancelTask already published TASK_STATE_CANCELED.
    } finally {
      this.running.delete(taskId);
    }
  }

  async cancelTask(taskId, eventBus) {
    const run = this.running.get(taskId);
    if (run) {
      run.canceled = true;
      run.wake?.();
    }
    // The request handler drains the bus until it sees a terminal state, so
    // TASK_STATE_CANCELED is published here (execute() publishes nothing
    // more once canceled). Publish it even if the execution has just ended,
    // or the handler's drain would never finish.
    const contextId = this.contexts.get(taskId) ?? '';
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
  }
}

// ---------------------------------------------------------------------------
// Push notifications: the SDK's sender, refusing non-loopback webhooks.

function isLoopbackUrl(url) {
  try {
    const { hostname } = new URL(url);
    return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
  } catch {
    return false;
  }
}

class LoopbackPushNotificationSender extends DefaultPushNotificationSender {
  async _dispatchNotification(streamResponse, storedConfig, taskId, task) {
    const url = storedConfig?.config?.url;
    if (!isLoopbackUrl(url)) {
      console.error(`push notification for task ${taskId} to non-loopback URL ${url} dropped`);
      return;
    }
    return super._dispatchNotification(streamResponse, storedConfig, taskId, task);
  }
}

// ---------------------------------------------------------------------------
// Server.

function buildCard(baseUrl, grpcAddr) {
  // fromJSON fills in every field of the SDK's internal shape; the card
  // handler serializes that shape with plain JSON.stringify.
  return AgentCard.fromJSON({
    name: 'JS SDK Echo Agent',
    description: 'Echo agent served by @a2a-js/sdk 1.3.0 (goa2a interop fixture).',
    supportedInterfaces: [
      { url: baseUrl + JSONRPC_PATH, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: baseUrl + REST_PATH, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: grpcAddr, protocolBinding: 'GRPC', protocolVersion: '1.0' },
    ],
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Replies with an artifact "echo: <your text>". "slow" in the text slows it down; "wait" makes it wait to be canceled.',
        tags: ['echo', 'test'],
        examples: ['hi'],
      },
    ],
  });
}

const app = express();
app.disable('x-powered-by');
const server = http.createServer(app);
const grpcServer = new grpc.Server();

server.on('error', (err) => {
  console.error(`server error: ${err.message}`);
  process.exit(1);
});

/** Binds the gRPC server to a free port of 127.0.0.1; resolves to "127.0.0.1:PORT". */
function bindGrpc() {
  return new Promise((resolve, reject) => {
    grpcServer.bindAsync(`${HOST}:0`, grpc.ServerCredentials.createInsecure(), (err, boundPort) => {
      if (err) reject(err);
      else resolve(`${HOST}:${boundPort}`);
    });
  });
}

server.listen(port, HOST, async () => {
  const baseUrl = `http://${HOST}:${server.address().port}`;
  let grpcAddr;
  try {
    grpcAddr = await bindGrpc();
  } catch (err) {
    console.error(`gRPC server error: ${err.message}`);
    process.exit(1);
  }
  const card = buildCard(baseUrl, grpcAddr);
  const pushStore = new InMemoryPushNotificationStore();
  const pushSender = new LoopbackPushNotificationSender(
    pushStore,
    tokenHeaderName ? { tokenHeaderName } : {},
  );
  const requestHandler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new EchoExecutor(),
    new DefaultExecutionEventBusManager(),
    pushStore,
    pushSender,
  );
  app.use(CARD_PATH, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(JSONRPC_PATH, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  app.use(REST_PATH, restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  grpcServer.addService(A2AService, grpcService({ requestHandler, userBuilder: GrpcUserBuilder.noAuthentication }));
  process.stdout.write(`listening ${baseUrl}\n`);
});

let stopping = false;
function shutdown(signal) {
  if (stopping) return;
  stopping = true;
  console.error(`${signal}: shutting down`);
  // Open SSE streams and gRPC streams (and "wait" tasks) would keep close()
  // waiting forever.
  grpcServer.forceShutdown();
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

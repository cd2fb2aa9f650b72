// The protocol features of docs/protocol.md through the official MCP
// TypeScript SDK client: many calls in flight at once, cancellation through an
// AbortSignal, progress notifications, tool titles, annotations and output
// schemas, structuredContent the SDK validates, logging, and version
// negotiation. Every test starts its own Xvfb and server (harness.mjs).
//
// Run: npm install && CU_BINARY=/path/to/computer-use-mcp node --test protocol.test.mjs

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';

import {
  EmptyResultSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  LoggingMessageNotificationSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

import {
  EXPECTED_HEIGHT,
  EXPECTED_TOOLS,
  EXPECTED_WIDTH,
  SCREEN_HEIGHT,
  SCREEN_WIDTH,
  assertOk,
  callOk,
  checkScreenshotResult,
  resultText,
  withSession,
} from './harness.mjs';

// docs/protocol.md, "Tools".
const READ_ONLY_TOOLS = [
  'screenshot',
  'zoom',
  'cursor_position',
  'read_clipboard',
  'list_granted_applications',
  'wait',
];
const OUTPUT_SCHEMA_TOOLS = [
  'screenshot',
  'zoom',
  'cursor_position',
  'request_access',
  'list_granted_applications',
  'open_application',
  'switch_display',
  'computer_batch',
];

// The versions initialize echoes (docs/protocol.md, "Versions").
const SERVER_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

const CURSOR_TEXT = /^\[(-?\d+), (-?\d+)\]$/;

/** The JSON-RPC id of the first request `sent` after index `from` that matches. */
function findRequestId(session, pred, from = 0) {
  const m = session.sent.slice(from).find((e) => e.msg.method && e.msg.id !== undefined && pred(e.msg));
  assert.ok(m, 'the request was sent');
  return m.msg.id;
}

/** Every message received with this JSON-RPC id (responses and errors). */
function responsesFor(session, id) {
  return session.received.filter((e) => e.msg.id === id && !e.msg.method);
}

/** The SDK's complaints about responses or progress it has no handler for. */
function strayErrors(session) {
  return session.errors
    .map((e) => e.message)
    .filter((m) => /unknown message ID|unknown token|unknown progress/i.test(m));
}

/** Rejects after `ms` with `what`, for event waits that must not hang. */
function within(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

describe('protocol features through the MCP TypeScript SDK client', { timeout: 60000 }, () => {
  it('50 calls in flight at once: the fast ones all answer before any 2 s one', () =>
    withSession(async ({ client }) => {
      checkScreenshotResult(await client.callTool({ name: 'screenshot', arguments: {} }), 'first screenshot');

      const kinds = ['hold_key', 'wait', 'screenshot', 'cursor_position', 'ping'];
      const start = {
        hold_key: () => client.callTool({ name: 'hold_key', arguments: { text: 'shift', duration: 2 } }),
        wait: () => client.callTool({ name: 'wait', arguments: { duration: 2 } }),
        screenshot: () => client.callTool({ name: 'screenshot', arguments: {} }),
        cursor_position: () => client.callTool({ name: 'cursor_position', arguments: {} }),
        ping: () => client.ping(),
      };
      const t0 = performance.now();
      const done = [];
      const calls = Array.from({ length: 50 }, (_, i) => {
        const kind = kinds[i % kinds.length];
        return start[kind]().then(
          (r) => {
            const e = { i, kind, t: performance.now() - t0, r };
            done.push(e);
            return e;
          },
          (err) => {
            const e = { i, kind, t: performance.now() - t0, err };
            done.push(e);
            return e;
          },
        );
      });
      const all = await Promise.all(calls);
      const wall = performance.now() - t0;

      const rejected = all.filter((e) => e.err);
      assert.deepEqual(
        rejected.map((e) => `#${e.i} ${e.kind}: ${e.err.message}`),
        [],
        'no call rejected',
      );
      for (const { i, kind, r } of all) {
        const label = `#${i} ${kind}`;
        switch (kind) {
          case 'hold_key':
            assertOk(r, label);
            assert.match(resultText(r), /shift/, `${label}: text names the key`);
            break;
          case 'wait':
            assertOk(r, label);
            assert.equal(resultText(r), 'waited 2s', `${label}: text`);
            break;
          case 'screenshot':
            checkScreenshotResult(r, label);
            break;
          case 'cursor_position':
            assertOk(r, label);
            assert.match(resultText(r), CURSOR_TEXT, `${label}: text`);
            break;
          case 'ping':
            assert.deepEqual(r, {}, `${label}: result`);
            break;
        }
      }

      const order = done.map((e) => `${e.kind}@${Math.round(e.t)}`).join(' ');
      const slow = all.filter((e) => e.kind === 'hold_key' || e.kind === 'wait');
      const fast = all.filter((e) => !(e.kind === 'hold_key' || e.kind === 'wait'));
      const lastFast = Math.max(...fast.map((e) => e.t));
      const firstSlow = Math.min(...slow.map((e) => e.t));
      assert.ok(lastFast < firstSlow, `every fast call answers before any 2 s call; order (ms): ${order}`);
      for (const e of slow) {
        // The timers start when the server reads the request, after t0.
        assert.ok(e.t >= 1990, `#${e.i} ${e.kind} answered after ${Math.round(e.t)} ms, before its 2 s`);
      }
      assert.ok(wall < 6000, `the 2 s calls ran side by side: all 50 took ${Math.round(wall)} ms; order: ${order}`);
    }));

  it('a 30 s wait cancelled through an AbortSignal ends at once and is never answered', () =>
    withSession(async (s) => {
      const { client } = s;
      const ac = new AbortController();
      const from = s.sent.length;
      const pending = client.callTool({ name: 'wait', arguments: { duration: 30 } }, undefined, { signal: ac.signal });
      const outcome = pending.then(
        (r) => ({ r, t: performance.now() }),
        (err) => ({ err, t: performance.now() }),
      );
      const id = findRequestId(s, (m) => m.method === 'tools/call' && m.params?.name === 'wait', from);

      // The server reads in order: once the ping is answered, the wait runs.
      await client.ping();
      assert.deepEqual(responsesFor(s, id).map((e) => e.msg), [], 'the wait has not answered before the cancel');

      const tAbort = performance.now();
      ac.abort('test cancels the wait');
      const { r, err, t } = await within(outcome, 5000, 'the cancelled call');
      assert.ok(err, `the cancelled call rejects; it resolved with ${JSON.stringify(r)}`);
      assert.ok(t - tAbort < 1000, `the call rejected ${Math.round(t - tAbort)} ms after the abort`);
      assert.ok(
        s.sent.some((e) => e.msg.method === 'notifications/cancelled' && e.msg.params?.requestId === id),
        'the SDK sent notifications/cancelled for the wait',
      );

      // The server goes on serving, and a later wait outlasts any answer a
      // cancel might still have produced.
      assert.deepEqual(await client.ping(), {});
      const w = await callOk(client, 'wait', { duration: 1 }, 'wait 1 s after the cancel');
      assert.equal(resultText(w), 'waited 1s');

      // Closing stdin ends a wait still in progress with an isError answer
      // (docs/protocol.md, "wait"): if the cancel had not stopped the wait,
      // that answer would show here. The server must exit 0 at once.
      const closed = new Promise((resolve) => s.serverProc.once('close', (code, signal) => resolve({ code, signal })));
      const tEof = performance.now();
      s.serverProc.stdin.end();
      const { code, signal } = await within(closed, 5000, 'server exit after stdin EOF');
      assert.equal(signal, null, 'server exit signal');
      assert.equal(code, 0, 'server exit code');
      assert.ok(performance.now() - tEof < 2000, `server took ${Math.round(performance.now() - tEof)} ms to exit`);

      assert.deepEqual(
        responsesFor(s, id).map((e) => e.msg),
        [],
        'no response ever arrives for the cancelled wait',
      );
      assert.deepEqual(strayErrors(s), [], 'the SDK saw no response for an unknown id');
    }));

  it('a 3 s wait with onprogress gets rising progress with total 3, and none after its answer', () =>
    withSession(async (s) => {
      const { client } = s;
      const progress = [];
      const from = s.sent.length;
      const t0 = performance.now();
      const result = await client.callTool({ name: 'wait', arguments: { duration: 3 } }, undefined, {
        onprogress: (p) => progress.push({ ...p, t: performance.now() - t0 }),
      });
      assertOk(result, 'wait 3 s');
      assert.equal(resultText(result), 'waited 3s');
      const id = findRequestId(s, (m) => m.method === 'tools/call', from);

      const seen = JSON.stringify(progress);
      assert.ok(progress.length >= 2, `at least 2 progress notifications: ${seen}`);
      for (let k = 0; k < progress.length; k++) {
        const p = progress[k];
        assert.equal(typeof p.progress, 'number', `progress is a number: ${seen}`);
        assert.equal(p.total, 3, `total is 3: ${seen}`);
        if (k > 0) assert.ok(p.progress > progress[k - 1].progress, `progress rises: ${seen}`);
      }
      assert.ok(progress[0].t >= 900, `the first progress comes about 1 s after the call: ${seen}`);

      // Ping: anything the server wrote before its answer has arrived by then.
      await client.ping();
      const answer = s.received.findIndex((e) => e.msg.id === id && !e.msg.method);
      const late = s.received
        .slice(answer + 1)
        .filter((e) => e.msg.method === 'notifications/progress' && e.msg.params?.progressToken === id);
      assert.deepEqual(late.map((e) => e.msg.params), [], 'no progress after the answer');
      assert.deepEqual(strayErrors(s), [], 'the SDK saw no progress for an unknown token');
    }));

  it('tools/list: titles, annotations, readOnlyHint and outputSchema as documented', () =>
    withSession(async ({ client }) => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), EXPECTED_TOOLS);
      for (const t of tools) {
        assert.equal(typeof t.title, 'string', `${t.name}: title`);
        assert.ok(t.title.length > 0, `${t.name}: title is not empty`);
        assert.equal(typeof t.annotations, 'object', `${t.name}: annotations`);
        for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
          assert.equal(typeof t.annotations[hint], 'boolean', `${t.name}: annotations.${hint}`);
        }
        if (t.outputSchema) {
          assert.equal(t.outputSchema.type, 'object', `${t.name}: outputSchema.type`);
        }
      }
      assert.deepEqual(
        tools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name).sort(),
        [...READ_ONLY_TOOLS].sort(),
        'readOnlyHint true exactly for these tools',
      );
      assert.deepEqual(
        tools.filter((t) => t.outputSchema).map((t) => t.name).sort(),
        [...OUTPUT_SCHEMA_TOOLS].sort(),
        'outputSchema exactly for these tools',
      );
    }));

  it('structuredContent passes the SDK client\'s outputSchema validation', () =>
    withSession(async (s) => {
      const { client } = s;
      // listTools caches the output schemas; callTool validates against them.
      const { tools } = await client.listTools();
      for (const name of OUTPUT_SCHEMA_TOOLS) {
        assert.ok(client.getToolOutputValidator(name), `the SDK cached an output validator for ${name}`);
      }
      const schemaTools = new Set(tools.filter((t) => t.outputSchema).map((t) => t.name));
      const structured = (r, name) => {
        assert.ok(schemaTools.has(name), `${name} has an outputSchema`);
        assert.equal(typeof r.structuredContent, 'object', `${name}: structuredContent present`);
        assert.ok(r.structuredContent, `${name}: structuredContent is not null`);
        return r.structuredContent;
      };
      const scale = SCREEN_WIDTH / EXPECTED_WIDTH;

      const shot = await callOk(client, 'screenshot');
      checkScreenshotResult(shot);
      const sc = structured(shot, 'screenshot');
      assert.deepEqual(sc.image, { width: EXPECTED_WIDTH, height: EXPECTED_HEIGHT }, 'screenshot: image');
      assert.deepEqual(sc.device, { x: 0, y: 0, width: SCREEN_WIDTH, height: SCREEN_HEIGHT }, 'screenshot: device');
      assert.ok(Math.abs(sc.scale - scale) < 1e-3, `screenshot: scale ${sc.scale}, want ${scale}`);
      assert.equal(sc.saved_to, undefined, 'screenshot: no saved_to without save_to_disk');

      const saved = await callOk(client, 'screenshot', { save_to_disk: true }, 'screenshot save_to_disk');
      const ssc = structured(saved, 'screenshot');
      assert.equal(typeof ssc.saved_to, 'string', 'screenshot save_to_disk: saved_to');
      assert.ok(resultText(saved).includes(ssc.saved_to), 'screenshot save_to_disk: the text names saved_to');
      await access(ssc.saved_to);

      const region = [0, 0, 683, 384];
      const zoom = await callOk(client, 'zoom', { region });
      const zc = structured(zoom, 'zoom');
      assert.deepEqual(zc.region, region, 'zoom: region');
      assert.equal(zc.scale, 1, 'zoom: scale');
      assert.equal(zc.device.x, 0, 'zoom: device.x');
      assert.equal(zc.device.y, 0, 'zoom: device.y');
      assert.ok(Math.abs(zc.device.width - region[2] * scale) <= 2, `zoom: device.width ${zc.device.width}`);
      assert.ok(Math.abs(zc.device.height - region[3] * scale) <= 2, `zoom: device.height ${zc.device.height}`);
      assert.deepEqual(zc.image, { width: zc.device.width, height: zc.device.height }, 'zoom: image is device-sized');

      const cur = await callOk(client, 'cursor_position');
      const m = resultText(cur).match(CURSOR_TEXT);
      assert.ok(m, `cursor_position: text stays [x, y]: ${resultText(cur)}`);
      assert.deepEqual(structured(cur, 'cursor_position'), { x: Number(m[1]), y: Number(m[2]) });

      const sameAsText = async (name, args) => {
        const r = await callOk(client, name, args);
        const text = JSON.parse(r.content[0].text);
        assert.deepEqual(structured(r, name), text, `${name}: structuredContent is the JSON text`);
        return text;
      };
      const granted = await sameAsText('request_access', { apps: ['xterm'], reason: 'sdk test' });
      assert.deepEqual(granted.grantedApplications, ['xterm'], 'request_access: grantedApplications');
      const list = await sameAsText('list_granted_applications', {});
      assert.deepEqual(list.applications, ['xterm'], 'list_granted_applications: applications');
      const sw = await sameAsText('switch_display', { display: s.display });
      assert.equal(sw.switched, false, `switch_display to its own display ${s.display} is a no-op`);

      const batch = await callOk(client, 'computer_batch', {
        actions: [{ name: 'cursor_position' }, { name: 'list_granted_applications', arguments: {} }],
      });
      const summary = JSON.parse(batch.content[0].text);
      assert.deepEqual(structured(batch, 'computer_batch'), summary, 'computer_batch: the summary block');
      assert.deepEqual(summary, {
        batch: {
          total: 2,
          succeeded: 2,
          failed: 0,
          skipped: 0,
          stopped_at: null,
          steps: [
            { index: 0, name: 'cursor_position', ok: true },
            { index: 1, name: 'list_granted_applications', ok: true },
          ],
        },
      });
      assert.match(batch.content[1]?.text ?? '', /^\[step 0 · cursor_position\] /, 'computer_batch: step 0 text');
    }));

  it('logging: after setLevel debug, a tools/call arrives as notifications/message', () =>
    withSession(async (s) => {
      const { client } = s;
      assert.ok(client.getServerCapabilities()?.logging, 'the server advertises logging');
      const messages = [];
      let notify;
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        messages.push(n.params);
        notify?.();
      });
      const logged = (pred, what) =>
        within(
          new Promise((resolve) => {
            notify = () => messages.some(pred) && resolve();
            notify();
          }),
          3000,
          `${what}; messages: ${JSON.stringify(messages)}`,
        );

      // Nothing is sent before setLevel.
      await callOk(client, 'list_granted_applications');
      await client.ping();
      assert.deepEqual(messages, [], 'no notifications/message before logging/setLevel');

      assert.deepEqual(await client.setLoggingLevel('debug'), {}, 'logging/setLevel answers {}');
      const from = s.sent.length;
      await callOk(client, 'list_granted_applications');
      const id = findRequestId(s, (m) => m.method === 'tools/call', from);
      const want = `tools/call list_granted_applications (id ${id})`;
      await logged((p) => typeof p.data === 'string' && p.data.includes(want), `a message with "${want}"`);
      const p = messages.find((q) => typeof q.data === 'string' && q.data.includes(want));
      assert.equal(p.level, 'debug', 'level');
      assert.equal(p.logger, 'computer-use', 'logger');

      // An unknown level is -32602.
      await assert.rejects(
        client.request({ method: 'logging/setLevel', params: { level: 'verbose' } }, EmptyResultSchema),
        (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams,
        'logging/setLevel "verbose" gets -32602',
      );

      // Above debug, calls are no longer logged.
      assert.deepEqual(await client.setLoggingLevel('error'), {});
      const n = messages.length;
      const from2 = s.sent.length;
      await callOk(client, 'list_granted_applications');
      const id2 = findRequestId(s, (m) => m.method === 'tools/call', from2);
      await client.ping();
      assert.deepEqual(
        messages.slice(n).filter((q) => q.level === 'debug' || String(q.data).includes(`(id ${id2})`)),
        [],
        'nothing below error is sent at level error',
      );
    }));

  it('initialize negotiates a supported protocol version; capabilities tools and logging', () =>
    withSession(async (s) => {
      const { client } = s;
      const init = s.sent.find((e) => e.msg.method === 'initialize');
      assert.ok(init, 'the SDK sent initialize');
      const answer = s.received.find((e) => e.msg.id === init.msg.id);
      assert.ok(answer?.msg.result, `initialize answered: ${JSON.stringify(answer?.msg)}`);
      const { protocolVersion } = answer.msg.result;
      const requested = init.msg.params.protocolVersion;
      assert.equal(requested, LATEST_PROTOCOL_VERSION);
      assert.ok(SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion), `the SDK supports ${protocolVersion}`);
      assert.equal(
        protocolVersion,
        SERVER_VERSIONS.includes(requested) ? requested : '2025-11-25',
        `the server echoes ${requested} when it knows it`,
      );

      const info = client.getServerVersion();
      assert.equal(info?.name, 'computer-use');
      const caps = client.getServerCapabilities();
      assert.deepEqual(caps?.tools, { listChanged: false }, 'capabilities.tools');
      assert.equal(typeof caps?.logging, 'object', `capabilities.logging: ${JSON.stringify(caps)}`);
      assert.ok(caps.logging, 'capabilities.logging is not null');
    }));
});

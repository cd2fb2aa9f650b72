// The server against the official MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client) in the modern era of MCP 2026-07-28, pinned
// with no fallback: no initialize is ever sent, every request carries its
// version and capabilities in _meta, and every result must come back in the
// 2026-07-28 shape. Discovery, listing, calls side by side, cancellation,
// progress and the client's own outputSchema validation (docs/protocol.md,
// "Eras and state").

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import {
  BINARY,
  EXPECTED_TOOLS,
  checkBinary,
  checkScreenshotResult,
  resultText,
  serverEnv,
  startXvfb,
  stopXvfb,
  trackFailures,
} from './harness.mjs';

const MODERN = '2026-07-28';
const ALL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', MODERN];
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

describe('computer-use-mcp with the MCP SDK v2 client pinned to 2026-07-28', { timeout: 120000 }, () => {
  let xvfb;
  let tmp;
  let client;
  let transport;
  let serverStderr = '';
  const sent = [];
  const received = [];
  const { noteFailure, test, failed } = trackFailures();

  // The answers that came back for request id so far.
  const answersFor = (id) => received.filter((m) => m.id === id && ('result' in m || 'error' in m));
  // The id of the last request sent that matches pred.
  const lastRequest = (pred) => {
    const m = [...sent].reverse().find((x) => x.id !== undefined && pred(x));
    assert.ok(m, 'the request was sent');
    return m.id;
  };
  // Resolves once a message matching pred is in list (sent or received):
  // the client sends a call only after its own asynchronous checks.
  const seen = (list, pred) =>
    new Promise((resolve) => {
      const look = () => {
        const m = list.find(pred);
        if (m) resolve(m);
        else setImmediate(look);
      };
      look();
    });
  const arrival = (pred) => seen(received, pred);

  before(noteFailure(async () => {
    await checkBinary();
    xvfb = await startXvfb();
    tmp = await mkdtemp(join(tmpdir(), 'cu-modern-test-'));
    transport = new StdioClientTransport({
      command: BINARY,
      args: [],
      env: { ...process.env, ...serverEnv(xvfb.display, tmp) },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => {
      serverStderr += d;
    });
    const send = transport.send.bind(transport);
    transport.send = (msg, opts) => {
      sent.push(msg);
      return send(msg, opts);
    };
    client = new Client(
      { name: 'computer-use-modern-test', version: '0.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(transport);
    // Every message the client is given passes through the handler it set.
    const handle = transport.onmessage;
    transport.onmessage = (msg, extra) => {
      received.push(msg);
      handle?.(msg, extra);
    };
  }));

  after(async () => {
    try {
      await client?.close();
    } catch {
      // Already closed.
    }
    await stopXvfb(xvfb?.proc);
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (serverStderr.trim() && (failed() || process.env.CU_SDK_SHOW_STDERR)) {
      process.stderr.write(`--- server stderr ---\n${serverStderr}\n`);
    }
  });

  test('connects in the modern era at 2026-07-28 without any initialize', () => {
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    assert.deepEqual(sent.filter((m) => m.method === 'initialize'), [], 'no initialize was sent');
    assert.equal(client.getServerVersion()?.name, 'computer-use');
  });

  test('server/discover names every version served and the tools capability', async () => {
    const d = await client.discover();
    assert.deepEqual(d.supportedVersions, ALL_VERSIONS);
    assert.ok(d.capabilities?.tools, 'the tools capability');
    const raw = answersFor(lastRequest((m) => m.method === 'server/discover')).at(-1);
    assert.equal(raw.result.resultType, 'complete');
    assert.equal(raw.result._meta['io.modelcontextprotocol/serverInfo'].name, 'computer-use');
  });

  test('lists the 24 tools, the list in the 2026-07-28 shape', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), EXPECTED_TOOLS);
    const req = sent.find((m) => m.method === 'tools/list');
    assert.ok(req, 'tools/list was sent');
    assert.equal(req.params._meta[VERSION_KEY], MODERN);
    assert.equal(typeof req.params._meta[CAPABILITIES_KEY], 'object');
    const raw = answersFor(req.id).at(-1);
    assert.equal(raw.result.resultType, 'complete');
    assert.ok(Number.isInteger(raw.result.ttlMs) && raw.result.ttlMs >= 0, 'ttlMs');
    assert.ok(['public', 'private'].includes(raw.result.cacheScope), 'cacheScope');
  });

  test('a screenshot comes back whole, with resultType complete', async () => {
    const r = await client.callTool({ name: 'screenshot', arguments: {} });
    checkScreenshotResult(r);
    const raw = answersFor(lastRequest((m) => m.method === 'tools/call')).at(-1);
    assert.equal(raw.result.resultType, 'complete');
  });

  test('concurrent calls are all answered, each to its own request', async () => {
    const results = await Promise.all([
      client.callTool({ name: 'screenshot', arguments: {} }),
      client.callTool({ name: 'cursor_position', arguments: {} }),
      client.callTool({ name: 'wait', arguments: { duration: 0.2 } }),
      client.callTool({ name: 'screenshot', arguments: {} }),
    ]);
    checkScreenshotResult(results[0], 'screenshot #1');
    assert.equal(results[1].isError, false, resultText(results[1]));
    assert.equal(resultText(results[2]), 'waited 0.2s');
    checkScreenshotResult(results[3], 'screenshot #2');
  });

  test('a wait cancelled through an AbortSignal is never answered, and the next call is', async () => {
    const ac = new AbortController();
    const pending = client.callTool({ name: 'wait', arguments: { duration: 30 } }, { signal: ac.signal });
    const outcome = pending.then((r) => ({ r }), (err) => ({ err }));
    const { id } = await seen(sent, (m) => m.method === 'tools/call' && m.params?.arguments?.duration === 30);
    // The server reads in order: once this call is answered, the wait runs.
    await client.callTool({ name: 'cursor_position', arguments: {} });
    assert.deepEqual(answersFor(id), [], 'no answer before the cancel');
    ac.abort('the test cancels the wait');
    const { r, err } = await outcome;
    assert.ok(err, `the cancelled call rejects; it resolved with ${JSON.stringify(r)}`);
    assert.ok(
      sent.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === id),
      'the client sent notifications/cancelled',
    );
    const w = await client.callTool({ name: 'wait', arguments: { duration: 1 } });
    assert.equal(resultText(w), 'waited 1s');
    assert.deepEqual(answersFor(id), [], 'the cancelled wait was never answered');
  });

  test('a 2 s wait with onprogress gets rising progress, then its answer', async () => {
    const progress = [];
    const r = await client.callTool(
      { name: 'wait', arguments: { duration: 2 } },
      { onprogress: (p) => progress.push(p) },
    );
    assert.equal(resultText(r), 'waited 2s');
    assert.ok(progress.length >= 1, `progress arrived: ${JSON.stringify(progress)}`);
    for (let k = 1; k < progress.length; k++) {
      assert.ok(progress[k].progress > progress[k - 1].progress, `progress rises: ${JSON.stringify(progress)}`);
    }
  });

  test('structuredContent passes the v2 client\'s outputSchema validation', async () => {
    const { tools } = await client.listTools();
    const withSchema = new Set(tools.filter((t) => t.outputSchema).map((t) => t.name));
    for (const name of ['screenshot', 'cursor_position']) {
      assert.ok(withSchema.has(name), `${name} has an outputSchema`);
      const r = await client.callTool({ name, arguments: {} });
      assert.equal(r.isError, false, `${name}: ${resultText(r)}`);
      assert.equal(typeof r.structuredContent, 'object', `${name}: structuredContent`);
    }
  });

  test('a modern caller and a legacy initialize on the same pipe both keep their shapes', async () => {
    // A legacy caller's initialize and its plain request, sent on the same
    // pipe as the modern client's own traffic.
    await transport.send({ jsonrpc: '2.0', id: 'legacy-init', method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '0' } } });
    await transport.send({ jsonrpc: '2.0', id: 'legacy-call', method: 'tools/call',
      params: { name: 'cursor_position', arguments: {} } });
    const r = await client.callTool({ name: 'cursor_position', arguments: {} });
    assert.equal(r.isError, false);
    const init = await arrival((m) => m.id === 'legacy-init');
    assert.equal(init.result.protocolVersion, '2025-11-25');
    const legacy = await arrival((m) => m.id === 'legacy-call');
    assert.equal(legacy.result.resultType, undefined, 'a legacy result has no resultType');
    const modern = answersFor(lastRequest((m) => m.method === 'tools/call')).at(-1);
    assert.equal(modern.result.resultType, 'complete', 'the modern result after it still has one');
  });
});

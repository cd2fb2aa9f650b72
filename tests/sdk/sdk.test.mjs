// End-to-end test of computer-use-mcp with the official MCP TypeScript SDK
// client. Starts a private Xvfb, spawns the real server binary over stdio and
// drives it through @modelcontextprotocol/sdk.
//
// Run: npm install && CU_BINARY=/path/to/computer-use-mcp npm test

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import {
  BINARY,
  EXPECTED_TOOLS,
  checkBinary,
  checkScreenshotResult,
  serverEnv,
  startXvfb,
  stopProcess,
  stopXvfb,
  trackFailures,
} from './harness.mjs';

describe('computer-use-mcp with the MCP TypeScript SDK client', { timeout: 120000 }, () => {
  let xvfb;
  let tmp;
  let client;
  let transport;
  let serverProc;
  let serverExit; // Promise<{ code, signal }>
  let serverStderr = '';

  // Logs are printed at the end only if a test or hook failed.
  const { noteFailure, test, failed } = trackFailures();

  before(noteFailure(async () => {
    await checkBinary();
    xvfb = await startXvfb();
    tmp = await mkdtemp(join(tmpdir(), 'cu-sdk-test-'));

    transport = new StdioClientTransport({
      command: BINARY,
      args: [],
      env: { ...process.env, ...serverEnv(xvfb.display, tmp) },
      stderr: 'pipe',
    });
    // The PassThrough exists before start(), so no early output is lost.
    transport.stderr.on('data', (d) => {
      serverStderr += d;
    });

    client = new Client({ name: 'computer-use-sdk-test', version: '0.0.0' }, { capabilities: {} });
    await client.connect(transport);

    // StdioClientTransport exposes only the pid; keep the ChildProcess (a
    // private field) so the exit status can be checked after close().
    serverProc = transport._process;
    assert.ok(serverProc, 'transport has a child process after connect');
    serverExit = new Promise((resolve) => {
      if (serverProc.exitCode !== null || serverProc.signalCode !== null) {
        resolve({ code: serverProc.exitCode, signal: serverProc.signalCode });
      } else {
        serverProc.once('exit', (code, signal) => resolve({ code, signal }));
      }
    });
  }));

  after(async () => {
    try {
      await client?.close();
    } catch {
      // already closed
    }
    if (serverProc) await stopProcess(serverProc);
    await stopXvfb(xvfb?.proc);
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (serverStderr.trim() && (failed() || process.env.CU_SDK_SHOW_STDERR)) {
      process.stderr.write(`--- server stderr ---\n${serverStderr}\n`);
    }
  });

  test('initializes with server name "computer-use"', () => {
    const info = client.getServerVersion();
    assert.ok(info, 'server returned serverInfo');
    assert.equal(info.name, 'computer-use');
    assert.equal(typeof info.version, 'string');
    const caps = client.getServerCapabilities();
    assert.ok(caps?.tools, 'server advertises the tools capability');
  });

  test('lists exactly the 24 tools in order, each with an object inputSchema', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      EXPECTED_TOOLS,
    );
    for (const t of tools) {
      assert.equal(typeof t.inputSchema, 'object', `${t.name}: inputSchema present`);
      assert.equal(t.inputSchema.type, 'object', `${t.name}: inputSchema.type`);
    }
  });

  test('screenshot returns a 1366x768 PNG image', async () => {
    const result = await client.callTool({ name: 'screenshot', arguments: {} });
    checkScreenshotResult(result);
  });

  test('two concurrent screenshots both succeed', async () => {
    const [a, b] = await Promise.all([
      client.callTool({ name: 'screenshot', arguments: {} }),
      client.callTool({ name: 'screenshot', arguments: {} }),
    ]);
    checkScreenshotResult(a, 'screenshot #1');
    checkScreenshotResult(b, 'screenshot #2');
  });

  test('an unknown tool yields an isError result naming the tool', async () => {
    const name = 'no_such_tool_xyzzy';
    let result;
    try {
      result = await client.callTool({ name, arguments: {} });
    } catch (e) {
      assert.fail(`expected a CallToolResult with isError, got a JSON-RPC error: ${e.message}`);
    }
    assert.equal(result.isError, true, `isError; result: ${JSON.stringify(result)}`);
    const text = (result.content ?? [])
      .filter((c) => c.type === 'text')
      .map((c) => c.text)
      .join('\n');
    assert.ok(text.includes(name), `error text mentions "${name}": ${JSON.stringify(text)}`);
  });

  test('client.close() ends the server, which exits 0 on stdin EOF', async () => {
    const t0 = Date.now();
    await client.close();
    const { code, signal } = await serverExit;
    const elapsed = Date.now() - t0;
    assert.equal(signal, null, `server was killed by ${signal} (did not exit on stdin EOF)`);
    assert.equal(code, 0, 'server exit code');
    // The SDK sends SIGTERM after 2 s; exiting before that means EOF did it.
    assert.ok(elapsed < 2000, `server took ${elapsed} ms to exit after stdin EOF`);
  });
});

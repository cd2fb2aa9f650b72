// End-to-end test of computer-use-mcp with the official MCP TypeScript SDK
// client. Starts a private Xvfb, spawns the real server binary over stdio and
// drives it through @modelcontextprotocol/sdk.
//
// Run: npm install && CU_BINARY=/path/to/computer-use-mcp npm test

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, access, constants } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

// Default: the repository's own build directory.
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BINARY = process.env.CU_BINARY || join(REPO, 'build', 'computer-use-mcp');

const EXPECTED_TOOLS = [
  'screenshot',
  'zoom',
  'left_click',
  'right_click',
  'middle_click',
  'double_click',
  'triple_click',
  'mouse_move',
  'left_click_drag',
  'scroll',
  'left_mouse_down',
  'left_mouse_up',
  'type',
  'key',
  'hold_key',
  'read_clipboard',
  'write_clipboard',
  'request_access',
  'list_granted_applications',
  'open_application',
  'switch_display',
  'computer_batch',
  'wait',
  'cursor_position',
];

// The server scales the 1920x1080 framebuffer to this size for the model.
const EXPECTED_WIDTH = 1366;
const EXPECTED_HEIGHT = 768;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// Xvfb runs under a small sh watchdog holding a pipe from this process on its
// stdin: when the pipe closes -- after() ends it, or this process dies in any
// way, even SIGKILL or an EPIPE on stdout -- Xvfb is killed, so no run leaves
// an Xvfb behind. sh exits when Xvfb does, with its status. (The server needs
// no such care: it exits on stdin EOF when this process goes.)
// (A background job's stdin is /dev/null in sh, hence the copy on fd 4.)
const XVFB_WATCHDOG =
  'exec 4<&0; Xvfb "$@" 4<&- & x=$!; (exec 3>&-; read _ <&4; kill $x 2>/dev/null) & wait $x';

/**
 * Starts Xvfb with -displayfd 3 and resolves with { proc, display } once it
 * has written its display number to fd 3. `proc` is the watchdog sh.
 */
function startXvfb(timeoutMs = 15000) {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      'sh',
      ['-c', XVFB_WATCHDOG, 'sh', '-displayfd', '3', '-screen', '0', '1920x1080x24', '-nolisten', 'tcp'],
      { stdio: ['pipe', 'ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let out = '';
    let settled = false;
    const finish = (err, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        proc.stdin.destroy();
        reject(err);
      } else {
        resolve(value);
      }
    };
    const timer = setTimeout(
      () => finish(new Error(`Xvfb did not report a display within ${timeoutMs} ms; stderr:\n${stderr}`)),
      timeoutMs,
    );
    proc.stderr.on('data', (d) => {
      stderr += d;
    });
    proc.on('error', (e) => finish(new Error(`cannot start Xvfb: ${e.message}`)));
    proc.on('exit', (code, signal) =>
      finish(new Error(`Xvfb exited early (code ${code}, signal ${signal}); stderr:\n${stderr}`)),
    );
    proc.stdio[3].on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        const n = out.slice(0, nl).trim();
        if (!/^\d+$/.test(n)) {
          finish(new Error(`unexpected -displayfd output: ${JSON.stringify(out)}`));
          return;
        }
        proc.stdio[3].destroy();
        finish(null, { proc, display: `:${n}` });
      }
    });
  });
}

/** Stops Xvfb by closing the watchdog's stdin, and waits for it to go. */
async function stopXvfb(proc, timeoutMs = 5000) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.stdin.end();
  const t = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(t);
}

async function stopProcess(proc, timeoutMs = 5000) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(t);
}

/** Asserts `buf` is a PNG and returns its IHDR { width, height }. */
function pngSize(buf) {
  assert.ok(buf.length >= 33, `PNG too short (${buf.length} bytes)`);
  assert.deepEqual(buf.subarray(0, 8), PNG_SIGNATURE, 'PNG signature');
  assert.equal(buf.readUInt32BE(8), 13, 'IHDR chunk length');
  assert.equal(buf.subarray(12, 16).toString('latin1'), 'IHDR', 'first chunk is IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/** Checks a screenshot tool result and returns the decoded PNG. */
function checkScreenshotResult(result, label = 'screenshot') {
  assert.ok(
    result.isError === false || result.isError === undefined,
    `${label}: isError is ${result.isError}; content: ${JSON.stringify(result.content).slice(0, 500)}`,
  );
  assert.ok(Array.isArray(result.content) && result.content.length >= 1, `${label}: content is non-empty`);
  const img = result.content[0];
  assert.equal(img.type, 'image', `${label}: content[0].type`);
  assert.equal(img.mimeType, 'image/png', `${label}: content[0].mimeType`);
  assert.equal(typeof img.data, 'string', `${label}: content[0].data is a string`);
  assert.match(img.data, /^[A-Za-z0-9+/]+={0,2}$/, `${label}: content[0].data is base64`);
  const png = Buffer.from(img.data, 'base64');
  const { width, height } = pngSize(png);
  assert.equal(width, EXPECTED_WIDTH, `${label}: PNG width`);
  assert.equal(height, EXPECTED_HEIGHT, `${label}: PNG height`);
  return png;
}

describe('computer-use-mcp with the MCP TypeScript SDK client', { timeout: 120000 }, () => {
  let xvfb;
  let tmp;
  let client;
  let transport;
  let serverProc;
  let serverExit; // Promise<{ code, signal }>
  let serverStderr = '';
  let failed = false; // server stderr is printed at the end if a test failed

  // Wraps a test or hook body so that after() knows whether to show stderr.
  const noteFailure = (fn) => async (t) => {
    try {
      await fn(t);
    } catch (e) {
      failed = true;
      throw e;
    }
  };
  const test = (name, fn) => it(name, noteFailure(fn));

  before(noteFailure(async () => {
    try {
      await access(BINARY, constants.X_OK);
    } catch {
      throw new Error(`server binary not found or not executable: ${BINARY} (set CU_BINARY)`);
    }
    xvfb = await startXvfb();
    tmp = await mkdtemp(join(tmpdir(), 'cu-sdk-test-'));

    transport = new StdioClientTransport({
      command: BINARY,
      args: [],
      env: {
        ...process.env,
        DISPLAY: xvfb.display,
        CU_LOCK_PATH: join(tmp, 'computer-use.lock'),
        CU_SAVE_DIR: join(tmp, 'save'),
        CU_SCREENSHOT_DELAY: '0',
      },
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
    if (serverStderr.trim() && (failed || process.env.CU_SDK_SHOW_STDERR)) {
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

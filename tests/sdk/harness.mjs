// Shared helpers of the SDK and Inspector tests: a private Xvfb, the server
// binary, and a connected MCP TypeScript SDK client that records the raw
// JSON-RPC traffic.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, access, constants } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

// Default: the repository's own build directory.
export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const BINARY = process.env.CU_BINARY || join(REPO, 'build', 'computer-use-mcp');

// Every toolset's tool names in tools/list order, as build/tools/gen-manifest
// writes them from the registry (the manifest suite keeps the file current).
export const TOOL_NAMES = JSON.parse(readFileSync(join(REPO, 'tests', 'tool-names.json'), 'utf8'));
// The default toolset's 24.
export const EXPECTED_TOOLS = TOOL_NAMES.computer;

// The server scales the 1920x1080 framebuffer to this size for the model.
export const SCREEN_WIDTH = 1920;
export const SCREEN_HEIGHT = 1080;
export const EXPECTED_WIDTH = 1366;
export const EXPECTED_HEIGHT = 768;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// Xvfb runs under a small sh watchdog holding a pipe from this process on its
// stdin: when the pipe closes -- stopXvfb() ends it, or this process dies in
// any way, even SIGKILL or an EPIPE on stdout -- Xvfb is killed, so no run
// leaves an Xvfb behind. sh exits when Xvfb does, with its status. (The server
// needs no such care: it exits on stdin EOF when this process goes.)
// (A background job's stdin is /dev/null in sh, hence the copy on fd 4.)
const XVFB_WATCHDOG =
  'exec 4<&0; Xvfb "$@" 4<&- & x=$!; (exec 3>&-; read _ <&4; kill $x 2>/dev/null) & wait $x';

/**
 * Starts Xvfb with -displayfd 3 and resolves with { proc, display } once it
 * has written its display number to fd 3. `proc` is the watchdog sh.
 */
export function startXvfb(timeoutMs = 15000) {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      'sh',
      ['-c', XVFB_WATCHDOG, 'sh', '-displayfd', '3', '-screen', '0',
        `${SCREEN_WIDTH}x${SCREEN_HEIGHT}x24`, '-nolisten', 'tcp'],
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
export async function stopXvfb(proc, timeoutMs = 5000) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.stdin.end();
  const t = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(t);
}

export async function stopProcess(proc, timeoutMs = 5000) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(t);
}

/** Throws unless the server binary exists and is executable. */
export async function checkBinary() {
  try {
    await access(BINARY, constants.X_OK);
  } catch {
    throw new Error(`server binary not found or not executable: ${BINARY} (set CU_BINARY)`);
  }
}

/** The environment the server runs with: the private display, lock and save dir. */
export function serverEnv(display, tmp) {
  return {
    DISPLAY: display,
    CU_LOCK_PATH: join(tmp, 'computer-use.lock'),
    CU_SAVE_DIR: join(tmp, 'save'),
    CU_SCREENSHOT_DELAY: '0',
  };
}

/** Asserts `buf` is a PNG and returns its IHDR { width, height }. */
export function pngSize(buf) {
  assert.ok(buf.length >= 33, `PNG too short (${buf.length} bytes)`);
  assert.deepEqual(buf.subarray(0, 8), PNG_SIGNATURE, 'PNG signature');
  assert.equal(buf.readUInt32BE(8), 13, 'IHDR chunk length');
  assert.equal(buf.subarray(12, 16).toString('latin1'), 'IHDR', 'first chunk is IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/** Asserts a tool result is not an error; `label` names it in messages. */
export function assertOk(result, label) {
  assert.ok(
    result && (result.isError === false || result.isError === undefined),
    `${label}: isError is ${result?.isError}; content: ${JSON.stringify(result?.content).slice(0, 500)}`,
  );
}

/**
 * Calls a tool that must succeed; a rejection by the SDK client (e.g.
 * structuredContent that does not match the tool's outputSchema) fails with
 * the tool's name. Returns the result.
 */
export async function callOk(client, name, args = {}, label = name) {
  let result;
  try {
    result = await client.callTool({ name, arguments: args });
  } catch (e) {
    assert.fail(`${label}: the SDK client rejected the call: ${e.message}`);
  }
  assertOk(result, label);
  return result;
}

/** The text blocks of a tool result, joined by newlines. */
export function resultText(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/** Checks a screenshot tool result and returns the decoded PNG. */
export function checkScreenshotResult(result, label = 'screenshot') {
  assertOk(result, label);
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

/**
 * Starts a private Xvfb and the server, and connects an SDK client to it.
 * `env` adds to (or, with a value of undefined, removes from) the server's
 * environment, after this process's own and serverEnv().
 * Resolves with a session object:
 *   client, transport, display, tmp, serverProc, serverExit (Promise),
 *   stderr() (the server's stderr so far),
 *   received / sent: every JSON-RPC message in each direction, in order,
 *     as { t (ms, performance.now()), msg },
 *   errors: every Error the SDK reported through client.onerror,
 *   close(): closes the client, stops the server and Xvfb, removes tmp.
 */
export async function startSession({ name = 'computer-use-sdk-test', env = {} } = {}) {
  await checkBinary();
  const xvfb = await startXvfb();
  const tmp = await mkdtemp(join(tmpdir(), 'cu-sdk-test-'));
  let stderr = '';
  const received = [];
  const sent = [];
  const errors = [];

  const serverEnvironment = { ...process.env, ...serverEnv(xvfb.display, tmp), ...env };
  for (const [key, value] of Object.entries(serverEnvironment)) {
    if (value === undefined) delete serverEnvironment[key];
  }
  const transport = new StdioClientTransport({
    command: BINARY,
    args: [],
    env: serverEnvironment,
    stderr: 'pipe',
  });
  // The PassThrough exists before start(), so no early output is lost.
  transport.stderr.on('data', (d) => {
    stderr += d;
  });

  // Record the raw traffic. The client's Protocol keeps a handler set before
  // connect() and calls it first for every message, the initialize response
  // included.
  transport.onmessage = (msg) => {
    received.push({ t: performance.now(), msg });
  };
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    sent.push({ t: performance.now(), msg });
    return send(msg, opts);
  };

  const client = new Client({ name, version: '0.0.0' }, { capabilities: {} });
  client.onerror = (e) => {
    errors.push(e);
  };

  const session = {
    client,
    transport,
    display: xvfb.display,
    tmp,
    serverProc: undefined,
    serverExit: undefined,
    stderr: () => stderr,
    received,
    sent,
    errors,
    async close() {
      try {
        await client.close();
      } catch {
        // already closed
      }
      if (session.serverProc) await stopProcess(session.serverProc);
      await stopXvfb(xvfb.proc);
      await rm(tmp, { recursive: true, force: true });
    },
  };

  try {
    await client.connect(transport);
  } catch (e) {
    await session.close();
    throw new Error(`connect failed: ${e.message}\n--- server stderr ---\n${stderr}`);
  }

  // StdioClientTransport exposes only the pid; keep the ChildProcess (a
  // private field) so the exit status can be checked after close().
  const proc = transport._process;
  session.serverProc = proc;
  if (proc) {
    session.serverExit = new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        resolve({ code: proc.exitCode, signal: proc.signalCode });
      } else {
        proc.once('exit', (code, signal) => resolve({ code, signal }));
      }
    });
  }
  return session;
}

/**
 * Runs `fn(session)` against a fresh session, closes it afterwards, and
 * prints the server's stderr when `fn` throws (or always with
 * CU_SDK_SHOW_STDERR=1).
 */
export async function withSession(fn, opts) {
  const session = await startSession(opts);
  let failed = false;
  try {
    return await fn(session);
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await session.close();
    const s = session.stderr();
    if (s.trim() && (failed || process.env.CU_SDK_SHOW_STDERR)) {
      process.stderr.write(`--- server stderr ---\n${s}\n`);
    }
  }
}

/**
 * Test and hook wrappers that remember whether anything failed, so that an
 * after() hook can print the logs only then: `noteFailure(fn)` wraps a hook
 * body, `test(name, fn)` is it() with the same wrapping, `failed()` tells.
 */
export function trackFailures() {
  let failed = false;
  const noteFailure = (fn) => async (t) => {
    try {
      await fn(t);
    } catch (e) {
      failed = true;
      throw e;
    }
  };
  return { noteFailure, test: (name, fn) => it(name, noteFailure(fn)), failed: () => failed };
}

// The marks toolset's `since` (docs/marks-since.md) through the official MCP
// TypeScript SDK v2 client (@modelcontextprotocol/client, pinned to
// 2026-07-28 as in modern.test.mjs), with CU_TOOLSETS=marks: tools/list
// shows screenshot taking `since`; a screenshot is a look and names its id;
// after an xterm on the private Xvfb prints a word (written to the FIFO its
// cat reads), a screenshot since that look answers crops only, far fewer
// bytes than the whole image, each answer validated by the client against
// the tool's outputSchema (the tools are listed first, so the client
// compiled them). The change is waited for by asking again (every 50 ms,
// 10 s at most), never by a fixed sleep; each question that finds nothing
// changed is a look equal to the one it named, so the next asks since it
// (the kept looks are the last 16). xterm draws the word and then its
// cursor, and on a busy machine a look can fall between the two, so the
// asking goes on until a look shows nothing more drawn, and the answer
// checked is the one since the last look before the word.
//
// Run: npm install && CU_BINARY=/path/to/computer-use-mcp node --test marks-since.test.mjs

import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import {
  BINARY,
  callOk,
  checkBinary,
  checkScreenshotResult,
  resultText,
  serverEnv,
  startXvfb,
  stopProcess,
  stopXvfb,
  trackFailures,
} from './harness.mjs';

const MODERN = '2026-07-28';
const POLL_MS = 50;
const WAIT_MS = 10000;

// The bytes of a result's image blocks (their base64 as sent).
const imageBytes = (r) =>
  (r.content ?? []).filter((c) => c.type === 'image').reduce((n, c) => n + c.data.length, 0);
const images = (r) => (r.content ?? []).filter((c) => c.type === 'image');

describe('since (the marks toolset) through the MCP SDK v2 client', { timeout: 120000 }, () => {
  let xvfb;
  let tmp;
  let client;
  let term;
  let fifo;
  let serverStderr = '';
  const { noteFailure, test, failed } = trackFailures();

  before(noteFailure(async () => {
    await checkBinary();
    xvfb = await startXvfb();
    tmp = await mkdtemp(join(tmpdir(), 'cu-marks-since-test-'));
    fifo = join(tmp, 'term-in');
    execFileSync('mkfifo', [fifo]);
    // Geometry in character cells: a small terminal in the screen's middle,
    // printing what the test writes to the FIFO.
    term = spawn('xterm', ['-geometry', '40x6+800+450', '-e', 'sh', '-c', `while :; do cat ${fifo}; done`], {
      env: { ...process.env, DISPLAY: xvfb.display },
      stdio: 'ignore',
    });
    const transport = new StdioClientTransport({
      command: BINARY,
      args: [],
      env: { ...process.env, ...serverEnv(xvfb.display, tmp), CU_TOOLSETS: 'marks' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => {
      serverStderr += d;
    });
    client = new Client(
      { name: 'computer-use-marks-since-test', version: '0.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(transport);
  }));

  after(async () => {
    try {
      await client?.close();
    } catch {
      // Already closed.
    }
    await stopProcess(term);
    await stopXvfb(xvfb?.proc);
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (serverStderr.trim() && (failed() || process.env.CU_SDK_SHOW_STDERR)) {
      process.stderr.write(`--- server stderr ---\n${serverStderr}\n`);
    }
  });

  test('screenshot takes since and says it answers looks, in and out', async () => {
    const { tools } = await client.listTools();
    const shot = tools.find((t) => t.name === 'screenshot');
    assert.equal(shot.inputSchema.properties.since.type, 'integer');
    assert.equal(shot.outputSchema.properties.look.type, 'integer');
    assert.ok(shot.outputSchema.properties.changed, 'changed in the output schema');
    const map = tools.find((t) => t.name === 'screenshot_marks');
    assert.equal(map.inputSchema.properties.since.type, 'integer');
  });

  test('a small change since a look comes back as crops only, far below the whole image', async (t) => {
    // The FIFO opens once the terminal's cat opens it, so the terminal is
    // up and runs its shell; then wait until a look since the previous
    // one shows nothing changed.
    const pipe = await open(fifo, 'w');
    let first = await callOk(client, 'screenshot', {});
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const again = await callOk(client, 'screenshot', { since: first.structuredContent.look });
      if (images(again).length === 0) break;
      assert.ok(Date.now() < deadline, 'the screen to be still');
      first = await callOk(client, 'screenshot', {});
      await delay(POLL_MS);
    }
    checkScreenshotResult(first, 'the first look');
    let look = first.structuredContent.look;
    assert.ok(Number.isInteger(look) && look >= 1, 'the first look has an id');
    const wholeBytes = imageBytes(first);

    await pipe.write('since\n');
    await pipe.close();
    // Until something was drawn and then a look shows nothing more: the
    // word and the cursor after it are both on screen.
    let drawn = false;
    for (let last = look; ;) {
      const r = await callOk(client, 'screenshot', { since: last });
      const changed = images(r).length > 0;
      if (drawn && !changed) break;
      // Nothing yet: this look is the screen before the word again.
      if (!drawn && !changed) look = r.structuredContent.look;
      drawn ||= changed;
      last = r.structuredContent.look;
      assert.ok(Date.now() < deadline + WAIT_MS, 'the word to be drawn');
      await delay(POLL_MS);
    }
    const since = await callOk(client, 'screenshot', { since: look });
    const s = since.structuredContent;
    assert.equal(s.since, look);
    assert.equal(s.full, false, resultText(since));
    assert.ok(s.look > look, 'the since answer is a look of its own');
    assert.equal(images(since).length, s.changed.length, 'one image block per crop');
    for (const c of s.changed) {
      assert.equal(c.box.length, 4);
      assert.ok(c.box[2] * c.box[3] < (1366 * 768) / 10, `a small crop: ${c.box}`);
    }
    assert.match(resultText(since), new RegExp(`the rest is as in look ${look}`));
    const sinceBytes = imageBytes(since);
    t.diagnostic(`whole image ${wholeBytes} base64 bytes, since look ${sinceBytes}`);
    assert.ok(sinceBytes * 4 < wholeBytes, `since ${sinceBytes} bytes, whole ${wholeBytes}`);

    // Nothing drawn since that look: no image at all.
    const still = await callOk(client, 'screenshot', { since: s.look });
    assert.equal(images(still).length, 0);
    assert.deepEqual(still.structuredContent.changed, []);
  });

  test('a look not kept is refused, naming the kept ones', async () => {
    const r = await client.callTool({ name: 'screenshot', arguments: { since: 999999 } });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /look 999999 is not kept/);
  });
});

// The MCP Inspector's CLI mode (`inspector --cli`, pinned in package.json and
// run from node_modules/.bin, never fetched at test time) against the real
// server on a private Xvfb: tools/list and tools/call.
//
// Run: npm install && CU_BINARY=/path/to/computer-use-mcp node --test inspector.test.mjs

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, access, constants } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  BINARY,
  EXPECTED_HEIGHT,
  EXPECTED_TOOLS,
  EXPECTED_WIDTH,
  checkBinary,
  pngSize,
  serverEnv,
  startXvfb,
  stopXvfb,
} from './harness.mjs';

const INSPECTOR = fileURLToPath(new URL('node_modules/.bin/inspector', import.meta.url));

describe('computer-use-mcp with the MCP Inspector CLI', { timeout: 60000 }, () => {
  let xvfb;
  let tmp;
  let failed = false;
  const stderrs = [];

  /**
   * Runs `inspector --cli -e ... BINARY ARGS...` and resolves with
   * { code, stdout, stderr }; the server gets its environment through -e.
   */
  function inspector(args, timeoutMs = 30000) {
    const env = Object.entries(serverEnv(xvfb.display, tmp)).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    return new Promise((resolve) => {
      execFile(
        INSPECTOR,
        ['--cli', ...env, BINARY, ...args],
        {
          timeout: timeoutMs,
          maxBuffer: 64 * 1024 * 1024,
          // The CLI would otherwise create its catalog in ~/.mcp-inspector.
          env: { ...process.env, MCP_CATALOG_PATH: join(tmp, 'mcp-catalog.json') },
        },
        (err, stdout, stderr) => {
          stderrs.push(`$ inspector --cli ... ${args.join(' ')}\n${stderr}`);
          resolve({ code: err ? (err.code ?? err.signal) : 0, stdout, stderr });
        },
      );
    });
  }

  const test = (name, fn) =>
    it(name, async (t) => {
      try {
        await fn(t);
      } catch (e) {
        failed = true;
        throw e;
      }
    });

  before(async () => {
    await checkBinary();
    try {
      await access(INSPECTOR, constants.X_OK);
    } catch {
      throw new Error(`${INSPECTOR} is missing: run npm install in tests/sdk`);
    }
    xvfb = await startXvfb();
    tmp = await mkdtemp(join(tmpdir(), 'cu-inspector-test-'));
  });

  after(async () => {
    await stopXvfb(xvfb?.proc);
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (failed || process.env.CU_SDK_SHOW_STDERR) {
      process.stderr.write(`--- inspector stderr ---\n${stderrs.join('\n')}\n`);
    }
  });

  /** Runs a method and parses the JSON the CLI prints on stdout. */
  async function run(args) {
    const { code, stdout, stderr } = await inspector(args);
    assert.equal(code, 0, `inspector ${args.join(' ')} exited ${code}; stdout: ${stdout.slice(0, 1000)}; stderr: ${stderr.slice(-2000)}`);
    try {
      return JSON.parse(stdout);
    } catch (e) {
      assert.fail(`inspector ${args.join(' ')} printed no JSON (${e.message}): ${stdout.slice(0, 1000)}`);
    }
  }

  test('--method tools/list lists the 24 tools', async () => {
    const { tools } = await run(['--method', 'tools/list']);
    assert.ok(Array.isArray(tools), 'tools is an array');
    assert.equal(tools.length, 24, 'number of tools');
    assert.deepEqual(tools.map((t) => t.name), EXPECTED_TOOLS);
    for (const t of tools) assert.equal(t.inputSchema?.type, 'object', `${t.name}: inputSchema.type`);
  });

  test('--strict finds no error-severity tool-schema portability problem', async () => {
    // Exit 6 would mean an error-severity problem; warnings go to stderr only.
    const { code, stdout, stderr } = await inspector(['--method', 'tools/list', '--strict']);
    const report = stderr.split('\n').filter((l) => !l.startsWith('computer-use-mcp:')).join('\n');
    assert.equal(code, 0, `exit status ${code}; report:\n${report}`);
    assert.equal(JSON.parse(stdout).tools.length, 24, 'number of tools');
    // A clean report prints nothing; one with findings counts them.
    assert.doesNotMatch(report, /\b[1-9]\d* errors?\b/, `the report counts errors:\n${report}`);
    assert.doesNotMatch(report, /\b[1-9]\d* warnings?\b/, `the report counts warnings:\n${report}`);
  });

  test('--method tools/call --tool-name screenshot returns a 1366x768 PNG', async () => {
    const result = await run(['--method', 'tools/call', '--tool-name', 'screenshot']);
    assert.ok(!result.isError, `isError: ${JSON.stringify(result).slice(0, 500)}`);
    const img = result.content?.[0];
    assert.equal(img?.type, 'image', 'content[0].type');
    assert.equal(img.mimeType, 'image/png', 'content[0].mimeType');
    const { width, height } = pngSize(Buffer.from(img.data, 'base64'));
    assert.equal(width, EXPECTED_WIDTH, 'PNG width');
    assert.equal(height, EXPECTED_HEIGHT, 'PNG height');
  });

  test('--tool-arg passes typed arguments: screenshot save_to_disk=true', async () => {
    const result = await run(['--method', 'tools/call', '--tool-name', 'screenshot', '--tool-arg', 'save_to_disk=true']);
    assert.ok(!result.isError, `isError: ${JSON.stringify(result).slice(0, 500)}`);
    assert.equal(result.content?.[0]?.type, 'image', 'content[0].type');
    const text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    const saveDir = serverEnv(xvfb.display, tmp).CU_SAVE_DIR;
    assert.ok(text.includes(saveDir), `a text block names the file in ${saveDir}: ${JSON.stringify(text)}`);
  });

  test('--tool-args-json: computer_batch answers its summary as structuredContent', async () => {
    const args = { actions: [{ name: 'screenshot' }, { name: 'cursor_position' }] };
    const result = await run(['--method', 'tools/call', '--tool-name', 'computer_batch', '--tool-args-json', JSON.stringify(args)]);
    assert.ok(!result.isError, `isError: ${JSON.stringify(result).slice(0, 500)}`);
    assert.deepEqual(result.content?.map((c) => c.type), ['text', 'image', 'text'], 'content block types');
    assert.deepEqual(result.structuredContent, JSON.parse(result.content[0].text), 'structuredContent is the summary');
    assert.deepEqual(result.structuredContent.batch, {
      total: 2,
      succeeded: 2,
      failed: 0,
      skipped: 0,
      stopped_at: null,
      steps: [
        { index: 0, name: 'screenshot', ok: true },
        { index: 1, name: 'cursor_position', ok: true },
      ],
    });
  });

  test('a tool error exits non-zero with the result on stdout', async () => {
    // A fresh server has no screenshot session, so a click fails.
    const { code, stdout } = await inspector([
      '--method', 'tools/call', '--tool-name', 'left_click', '--tool-args-json', '{"coordinate":[10,10]}',
    ]);
    assert.notEqual(code, 0, `exit status; stdout: ${stdout.slice(0, 500)}`);
    assert.match(stdout, /"isError": true/, 'the result is printed');
    assert.match(stdout, /take a screenshot first/, 'the server\'s explanation is printed');
  });
});

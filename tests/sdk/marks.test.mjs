// Acting by mark (the `marks` toolset, docs/marks-acting.md) through the
// official MCP TypeScript SDK client, on the GTK program of the x11 a11y
// tests (tests/x11/data/gtk_a11y.py), which prints every click it takes.
// This file runs under tools/lib/a11y-session.sh (tools/run-tests does so,
// as for a11y.test.mjs), so this process, the server and the program share
// one session bus with the AT-SPI bus on it.
//
// The program's stdout is read line by line; a line "geometry" on its stdin
// is a round trip (its answer comes after every click it took), so whether
// a click reached it is known without a sleep. The map is waited for by
// polling screenshot_marks (every 50 ms, 20 s at most).
//
// Run: npm install && CU_BINARY=/path/to/computer-use-mcp \
//   ../../tools/lib/a11y-session.sh -- node --test marks.test.mjs

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { REPO, callOk, resultText, stopProcess, withSession } from './harness.mjs';

const MARKS_ON = { CU_TOOLSETS: 'marks' };
const POLL_MS = 50;
const WAIT_MS = 20000;
const POINTER_TOOLS = ['left_click', 'right_click', 'middle_click', 'double_click', 'triple_click',
  'mouse_move', 'scroll', 'left_click_drag'];

/** gtk_a11y.py on `display`, with its stdout as lines and a round trip. */
async function startApp(display) {
  const proc = spawn('/usr/bin/python3', [join(REPO, 'tests/x11/data/gtk_a11y.py'), '60', '40'], {
    env: { ...process.env, DISPLAY: display },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = [];
  let partial = '';
  let wake = () => {};
  proc.stdout.on('data', (d) => {
    partial += d;
    const parts = partial.split('\n');
    partial = parts.pop();
    lines.push(...parts);
    wake();
  });
  const app = {
    proc,
    lines,
    /** Waits for the line `line` and returns (and forgets) those before it. */
    async until(line) {
      const deadline = performance.now() + WAIT_MS;
      for (;;) {
        const i = lines.indexOf(line);
        if (i >= 0) return lines.splice(0, i + 1).slice(0, i);
        assert.ok(performance.now() < deadline, `the program to print "${line}": ${lines.join('|')}`);
        await new Promise((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200);
        });
      }
    },
    /** The event lines (not geometry) the program printed before a round trip. */
    async events() {
      proc.stdin.write('geometry\n');
      return (await app.until('geom-end')).filter((l) => !l.startsWith('geom '));
    },
    move(x, y) {
      proc.stdin.write(`move ${x} ${y}\n`);
    },
  };
  await app.until('ready');
  await app.until('geom-end');
  return app;
}

/** A map of the window's controls, once the program is on the bus. */
async function mapControls(client) {
  const deadline = performance.now() + WAIT_MS;
  for (;;) {
    const r = await callOk(client, 'screenshot_marks', { sources: ['a11y'] });
    const marks = r.structuredContent.marks;
    if (marks.some((m) => m.name === 'Apply' && m.source === 'a11y')) return marks;
    assert.ok(performance.now() < deadline, `the controls to be marked: ${resultText(r)}`);
    await delay(POLL_MS);
  }
}

function markOf(marks, role, name) {
  const m = marks.find((k) => k.role === role && k.name === name);
  assert.ok(m, `a mark for ${role} "${name}": ${JSON.stringify(marks)}`);
  return m.n;
}

async function withApp(fn) {
  return withSession(async (s) => {
    const { tools } = await s.client.listTools();
    const app = await startApp(s.display);
    try {
      return await fn(s, tools, app);
    } finally {
      await stopProcess(app.proc);
    }
  }, { env: MARKS_ON });
}

describe('acting by mark through the SDK client', () => {
  it('lists mark on the eight pointer tools, with coordinate no longer required', async () => {
    await withApp(async (s, tools) => {
      for (const name of POINTER_TOOLS) {
        const t = tools.find((k) => k.name === name);
        assert.equal(t.inputSchema.properties.mark?.type, 'integer', `${name}: mark`);
        assert.ok(!(t.inputSchema.required ?? []).includes('coordinate'), `${name}: coordinate optional`);
      }
      const drag = tools.find((k) => k.name === 'left_click_drag');
      assert.equal(drag.inputSchema.properties.start_mark?.type, 'integer');
    });
  });

  it('maps, clicks a button by its mark (the program takes the click), and refuses a stale mark', async () => {
    await withApp(async (s, tools, app) => {
      const marks = await mapControls(s.client);
      const apply = markOf(marks, 'push button', 'Apply');
      const remove = markOf(marks, 'push button', 'Remove Apply');
      const add = markOf(marks, 'push button', 'Add Extra');

      const click = await callOk(s.client, 'left_click', { mark: apply });
      assert.match(resultText(click), new RegExp(`mark ${apply} \\(push button "Apply"\\)`));
      assert.deepEqual(await app.events(), ['clicked Apply']);

      // "Remove Apply" takes Apply away: the buttons below it move up.
      await callOk(s.client, 'left_click', { mark: remove });
      assert.deepEqual(await app.events(), ['removed Apply']);
      // Add Extra's place was drawn on: found again where it went, and clicked there.
      const moved = await callOk(s.client, 'left_click', { mark: add });
      assert.match(resultText(moved), /moved to/);
      assert.deepEqual(await app.events(), ['added Extra']);
      // Apply is gone: its mark is refused, and nothing is pressed.
      const stale = await s.client.callTool({ name: 'left_click', arguments: { mark: apply } });
      assert.equal(stale.isError, true);
      assert.match(resultText(stale), /is stale: the screen changed there since look \d+ and the element is not found; take a new screenshot_marks/);
      assert.deepEqual(await app.events(), []);

      // A number past the map names its range.
      const past = await s.client.callTool({ name: 'left_click', arguments: { mark: 999 } });
      assert.equal(past.isError, true);
      assert.match(resultText(past), /has marks 1 to \d+, got 999/);
    });
  });
});

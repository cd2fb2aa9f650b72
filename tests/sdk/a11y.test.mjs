// The `a11y` toolset (docs/a11y.md) through the official MCP TypeScript SDK
// client, on a real GTK 3 program (gtk3-widget-factory) started on the
// session's private Xvfb. This file runs under tools/lib/a11y-session.sh
// (tools/run-tests does so), so this process, the server and the program
// share one session bus with the AT-SPI bus launcher and registry on it.
//
// A passing callTool means the structuredContent matched the tool's
// outputSchema: the SDK validates it for tools listed first (see the note at
// the top of windows.test.mjs), so every session lists the tools first.
//
// The program is waited for by polling list_apps (every 50 ms, 20 s at most),
// never by a fixed sleep; it is killed when each test ends, before its Xvfb.
//
// Run: npm install && CU_BINARY=/path/to/computer-use-mcp \
//   ../../tools/lib/a11y-session.sh -- node --test a11y.test.mjs

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';

import {
  EXPECTED_TOOLS,
  TOOL_NAMES,
  assertOk,
  callOk as callResult,
  pngSize,
  resultText,
  stopProcess,
  withSession,
} from './harness.mjs';

const A11Y_TOOLS = TOOL_NAMES.a11y;
const A11Y_ON = { CU_TOOLSETS: 'a11y' };
const APP = 'gtk3-widget-factory';
const POLL_MS = 50;
const WAIT_MS = 20000;

/** Calls a tool that must succeed with structuredContent; returns the result. */
async function callOk(client, name, args = {}, label = name) {
  const result = await callResult(client, name, args, label);
  assert.ok(result.structuredContent && typeof result.structuredContent === 'object',
    `${label}: structuredContent present`);
  return result;
}

/** Starts gtk3-widget-factory on `display` and polls list_apps until it is there. */
async function startApp(client, display) {
  const proc = spawn(APP, [], { env: { ...process.env, DISPLAY: display }, stdio: 'ignore' });
  const deadline = performance.now() + WAIT_MS;
  for (;;) {
    const r = await callOk(client, 'list_apps', {}, 'list_apps while waiting for the program');
    const app = r.structuredContent.apps.find((a) => a.name === APP && a.pid === proc.pid);
    // Listed with its window: its tree is there to read.
    if (app && app.windows.length > 0) return { proc, app };
    if (proc.exitCode !== null || performance.now() > deadline) {
      await stopProcess(proc);
      assert.fail(`${APP} (pid ${proc.pid}) not on the accessibility bus: ${JSON.stringify(r.structuredContent)}`);
    }
    await delay(POLL_MS);
  }
}

/** A session with the a11y toolset and gtk3-widget-factory listed. */
async function withApp(fn) {
  return withSession(async (s) => {
    const { tools } = await s.client.listTools();
    let app;
    try {
      app = await startApp(s.client, s.display);
      return await fn(s, tools, app);
    } finally {
      if (app) await stopProcess(app.proc);
    }
  }, { env: A11Y_ON });
}

describe('the a11y toolset through the SDK client', () => {
  it('lists its nine tools after the 24, each with an outputSchema; scroll stays the default one', async () => {
    await withApp(async (s, tools, { app }) => {
      const names = tools.map((t) => t.name);
      assert.deepEqual(names.slice(0, 24), EXPECTED_TOOLS);
      assert.deepEqual(names.slice(24), A11Y_TOOLS);
      for (const t of tools.slice(24)) {
        assert.equal(t.outputSchema?.type, 'object', `${t.name}: outputSchema`);
        assert.equal(t.inputSchema.additionalProperties, false, `${t.name}: the seed's closed schema`);
      }
      const scroll = tools.find((t) => t.name === 'scroll');
      assert.ok(scroll.inputSchema.properties.coordinate, 'scroll is the default toolset\'s');
      assert.ok(app.bus_name.startsWith(':'), 'a bus name');
      assert.equal(app.answering, true);
    });
  });

  it('get_app_state answers the tree, an image of the window and structuredContent that matches its schema', async () => {
    await withApp(async (s) => {
      const r = await callOk(s.client, 'get_app_state', { app: APP });
      const st = r.structuredContent;
      assert.equal(st.app.name, APP);
      assert.ok(st.elements.length > 100, `elements: ${st.elements.length}`);
      assert.equal(st.elements[0].role, 'application');
      assert.ok(st.window && /^0x[0-9a-f]+$/.test(st.window.id), 'the window captured');
      assert.equal(r.content.length, 2, 'text and image');
      const text = resultText(r);
      assert.match(text, /^App: gtk3-widget-factory \(pid \d+\)\n/);
      assert.match(text, /\n0 application "gtk3-widget-factory"\n/);
      assert.equal(r.content[1].type, 'image');
      const size = pngSize(Buffer.from(r.content[1].data, 'base64'));
      assert.deepEqual(size, { width: st.image.width, height: st.image.height });
      // Frames are in the image's pixels: every shown element of the window lies in it.
      const shown = st.elements.filter((e) => e.frame && e.states.includes('showing') && e.depth >= 1);
      assert.ok(shown.length > 20);
      for (const e of shown) {
        assert.ok(e.frame.x >= -1 && e.frame.y >= -1 && e.frame.x + e.frame.width <= st.image.width + 1 &&
          e.frame.y + e.frame.height <= st.image.height + 1, `element ${e.index} in the image: ${JSON.stringify(e.frame)}`);
      }
      // A second snapshot has a new id.
      const again = await callOk(s.client, 'get_app_state', { app: APP, max_nodes: 10 });
      assert.ok(again.structuredContent.snapshot > st.snapshot);
      assert.equal(again.structuredContent.elements.length, 10);
      assert.equal(again.structuredContent.truncated, true);
    });
  });

  it('acts by index: set_value on an entry, click on a radio button; refuses what it cannot do', async () => {
    await withApp(async (s) => {
      const st = (await callOk(s.client, 'get_app_state', { app: APP })).structuredContent;
      const entry = st.elements.find((e) => e.role === 'text' && e.states.includes('editable') &&
        e.states.includes('enabled') && e.states.includes('showing'));
      assert.ok(entry, 'an editable entry');
      const set = await callOk(s.client, 'set_value', { app: APP, element_index: entry.index, value: 'from the SDK' });
      assert.equal(set.structuredContent.method, 'editable_text');
      assert.equal(set.structuredContent.value, 'from the SDK');
      const after = (await callOk(s.client, 'get_app_state', { app: APP })).structuredContent;
      assert.equal(after.elements[entry.index].value, 'from the SDK', 'the tree reads the new text');

      const page2 = after.elements.find((e) => e.role === 'radio button' && e.name === 'Page 2');
      assert.ok(page2 && !page2.states.includes('checked'));
      const click = await callOk(s.client, 'click', { app: APP, element_index: page2.index });
      assert.equal(click.structuredContent.method, 'action');
      assert.equal(click.structuredContent.element.name, 'Page 2');
      const now = (await callOk(s.client, 'get_app_state', { app: APP, max_nodes: 40 })).structuredContent;
      assert.ok(now.elements.find((e) => e.name === 'Page 2').states.includes('checked'), 'Page 2 is checked');

      const button = now.elements.find((e) => e.role === 'push button' && e.actions.includes('click'));
      const refused = await s.client.callTool({ name: 'set_value', arguments: { app: APP, element_index: button.index, value: 'x' } });
      assert.equal(refused.isError, true);
      assert.match(resultText(refused), /is not settable/);
      const unknown = await s.client.callTool({ name: 'get_app_state', arguments: { app: 'no-such-app' } });
      assert.equal(unknown.isError, true);
      assert.match(resultText(unknown), /the applications are: .*gtk3-widget-factory/);
    });
  });

  it('answers calls in flight at once, and a cancelled get_app_state is never answered', async () => {
    await withApp(async (s) => {
      const [state, shot, apps] = await Promise.all([
        callOk(s.client, 'get_app_state', { app: APP }),
        s.client.callTool({ name: 'screenshot', arguments: {} }),
        callOk(s.client, 'list_apps'),
      ]);
      assert.ok(state.structuredContent.elements.length > 100);
      assertOk(shot, 'screenshot');
      assert.ok(apps.structuredContent.apps.some((a) => a.name === APP));

      const abort = new AbortController();
      const cancelled = s.client.callTool({ name: 'get_app_state', arguments: { app: APP } }, undefined,
        { signal: abort.signal });
      abort.abort();
      await assert.rejects(cancelled);
      // The server goes on: the next call is answered, and nothing answered the cancelled one.
      const next = await callOk(s.client, 'list_apps');
      assert.ok(next.structuredContent.apps.length >= 1);
      const cancelId = s.sent.find((m) => m.msg.method === 'notifications/cancelled')?.msg.params.requestId;
      assert.notEqual(cancelId, undefined, 'a notifications/cancelled was sent');
      assert.equal(s.received.filter((m) => m.msg.id === cancelId).length, 0, 'no answer to the cancelled call');
    });
  });
});

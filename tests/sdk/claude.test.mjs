// computer-use-mcp as an MCP server of the real Claude Code CLI
// (@anthropic-ai/claude-code, pinned in package.json): `claude mcp add` and
// `claude mcp list` / `get`, which start each configured server and check
// that it answers. No login or API key is needed for these subcommands.
//
// Claude Code runs with a private HOME (and XDG directories inside it) in a
// temporary project directory, with the environment scrubbed of ANTHROPIC_*,
// CLAUDE*, MCP_*, CU_* and DISPLAY, so that the only display a server gets is
// the one its configuration names: a private Xvfb.
//
// Run: npm install && CU_BINARY=/path/to/computer-use-mcp node --test claude.test.mjs

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { access, constants, mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { BINARY, REPO, checkBinary, startXvfb, stopXvfb, trackFailures } from './harness.mjs';
import { codeBlocks } from './markdown.mjs';

const CLAUDE = fileURLToPath(new URL('./node_modules/.bin/claude', import.meta.url));
const CLAUDE_PACKAGE = new URL('./node_modules/@anthropic-ai/claude-code/package.json', import.meta.url);
const SERVE = join(REPO, 'tools', 'serve');
const HOSTS_MD = join(REPO, 'docs', 'hosts.md');

// A guard only: each of these commands takes well under a second.
const CLAUDE_TIMEOUT_MS = 60000;

// `claude mcp list` prints one line per server, `<name>: <command> - <status>`,
// the status being `✔ Connected` (older versions: `✓ Connected`).
const CONNECTED = /^(?:[✓✔]\s*)?Connected$/u;

/** The status of server `name` in `claude mcp list` output, or undefined. */
function listStatus(output, name) {
  const line = output
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .find((l) => l.startsWith(`${name}: `));
  if (line === undefined) return undefined;
  return line.slice(line.lastIndexOf(' - ') + 3).trim();
}

describe('computer-use-mcp in Claude Code (claude mcp)', { timeout: 300000 }, () => {
  let xvfb;
  let tmp;
  let home;
  let project; // the directory `claude mcp add` (local scope) runs in
  let env;
  const live = new Set(); // claude processes still running
  const transcript = []; // every claude run, printed if a test fails (or with CU_SDK_SHOW_STDERR=1)

  // Logs are printed at the end only if a test or hook failed.
  const { noteFailure, test, failed } = trackFailures();

  /** Runs the pinned claude; resolves with { code, signal, stdout, stderr }. */
  function claude(args, { cwd = project } = {}) {
    return new Promise((resolvePromise, reject) => {
      const proc = spawn(CLAUDE, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      live.add(proc);
      let stdout = '';
      let stderr = '';
      let settled = false;
      const record = (result) =>
        transcript.push(`$ claude ${args.join(' ')}   (in ${cwd})\n${stdout}${stderr ? `[stderr]\n${stderr}` : ''}` +
          `[${result}]`);
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        proc.kill('SIGKILL');
        record('timed out');
        reject(new Error(`claude ${args.join(' ')}: no exit within ${CLAUDE_TIMEOUT_MS} ms\n` +
          `stdout:\n${stdout}\nstderr:\n${stderr}`));
      }, CLAUDE_TIMEOUT_MS);
      proc.stdout.on('data', (d) => {
        stdout += d;
      });
      proc.stderr.on('data', (d) => {
        stderr += d;
      });
      proc.on('error', (e) => {
        live.delete(proc);
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(new Error(`cannot run ${CLAUDE}: ${e.message} (npm install in tests/sdk)`));
      });
      proc.on('close', (code, signal) => {
        live.delete(proc);
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        record(`exit ${code ?? signal}`);
        resolvePromise({ code, signal, stdout, stderr });
      });
    });
  }

  async function claudeConfig() {
    return JSON.parse(await readFile(join(home, '.claude.json'), 'utf8'));
  }

  before(noteFailure(async () => {
    await checkBinary();
    try {
      await access(CLAUDE, constants.X_OK);
    } catch {
      throw new Error(`${CLAUDE} not found: run npm install in tests/sdk`);
    }
    xvfb = await startXvfb();
    // realpath: Claude Code keys local-scope servers by the real project path.
    tmp = await realpath(await mkdtemp(join(tmpdir(), 'cu-claude-test-')));
    home = join(tmp, 'home');
    project = join(tmp, 'project');
    await mkdir(home);
    await mkdir(project);
    env = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (/^(ANTHROPIC_|CLAUDE|MCP_|CU_|XDG_)/.test(k) || k === 'DISPLAY') continue;
      env[k] = v;
    }
    Object.assign(env, {
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_CACHE_HOME: join(home, '.cache'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_STATE_HOME: join(home, '.local', 'state'),
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      NO_COLOR: '1',
      MCP_TIMEOUT: '30000', // the server start-up timeout of `claude mcp list`
    });
  }));

  after(async () => {
    for (const proc of live) proc.kill('SIGKILL');
    await stopXvfb(xvfb?.proc);
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (transcript.length && (failed() || process.env.CU_SDK_SHOW_STDERR)) {
      process.stderr.write(`--- claude runs ---\n${transcript.join('\n\n')}\n`);
    }
  });

  test('the pinned claude runs without a login (claude --version)', async () => {
    const { version } = JSON.parse(await readFile(CLAUDE_PACKAGE, 'utf8'));
    const r = await claude(['--version']);
    assert.equal(r.code, 0, `exit status; stderr: ${r.stderr}`);
    assert.ok(r.stdout.startsWith(`${version} `), `version ${version}: ${JSON.stringify(r.stdout)}`);
  });

  test('claude mcp add refuses the name computer-use as reserved', async () => {
    const r = await claude(['mcp', 'add', 'computer-use', '-e', `DISPLAY=${xvfb.display}`, '--', BINARY]);
    assert.notEqual(r.code, 0, 'exit status');
    assert.match(
      r.stdout + r.stderr,
      /Cannot add MCP server "computer-use": this name is reserved\./,
      'the refusal names the reserved name',
    );
    const g = await claude(['mcp', 'get', 'computer-use']);
    assert.notEqual(g.code, 0, `claude mcp get computer-use finds nothing: ${g.stdout}`);
  });

  test('claude mcp add desktop -e DISPLAY -e CU_LOCK_PATH -- <binary>', async () => {
    const lock = join(tmp, 'desktop.lock');
    const r = await claude([
      'mcp', 'add', 'desktop', '-e', `DISPLAY=${xvfb.display}`, '-e', `CU_LOCK_PATH=${lock}`, '--', BINARY,
    ]);
    assert.equal(r.code, 0, `exit status; stderr: ${r.stderr}`);
    assert.match(r.stdout, /Added stdio MCP server desktop with command: .* to local config/);
    const config = await claudeConfig();
    assert.deepEqual(config.projects?.[project]?.mcpServers?.desktop, {
      type: 'stdio',
      command: BINARY,
      args: [],
      env: { DISPLAY: xvfb.display, CU_LOCK_PATH: lock },
    });
  });

  test('claude mcp add desktop-serve ... -- <checkout>/tools/serve', async () => {
    const lock = join(tmp, 'desktop-serve.lock');
    const extra = [];
    // tools/serve runs the checkout's build/; another binary is passed on.
    if (resolve(BINARY) !== join(REPO, 'build', 'computer-use-mcp')) extra.push('-e', `CU_BINARY=${BINARY}`);
    const r = await claude([
      'mcp', 'add', 'desktop-serve', '-e', `DISPLAY=${xvfb.display}`, '-e', `CU_LOCK_PATH=${lock}`, ...extra,
      '--', SERVE,
    ]);
    assert.equal(r.code, 0, `exit status; stderr: ${r.stderr}`);
    assert.match(r.stdout, /Added stdio MCP server desktop-serve with command: .* to local config/);
    const entry = (await claudeConfig()).projects?.[project]?.mcpServers?.['desktop-serve'];
    assert.equal(entry?.command, SERVE);
    assert.equal(entry?.env?.DISPLAY, xvfb.display);
  });

  test('claude mcp list starts both and reports them Connected', async () => {
    const r = await claude(['mcp', 'list']);
    assert.equal(r.code, 0, `exit status; stderr: ${r.stderr}`);
    for (const name of ['desktop', 'desktop-serve']) {
      const status = listStatus(r.stdout, name);
      assert.ok(status !== undefined, `no line for ${name}:\n${r.stdout}`);
      assert.match(status, CONNECTED, `${name}:\n${r.stdout}`);
      // The server takes its lock at start-up, with the configured environment.
      await stat(join(tmp, `${name}.lock`));
    }
    assert.equal(listStatus(r.stdout, 'computer-use'), undefined, 'no computer-use server');
  });

  test('claude mcp get desktop shows it Connected, with the DISPLAY given', async () => {
    const r = await claude(['mcp', 'get', 'desktop']);
    assert.equal(r.code, 0, `exit status; stderr: ${r.stderr}`);
    const out = r.stdout.replace(/\x1b\[[0-9;]*m/g, '');
    assert.match(out, /^\s*Status: (?:[✓✔]\s*)?Connected\s*$/mu, out);
    assert.match(out, new RegExp(`^\\s*DISPLAY=${xvfb.display}\\s*$`, 'm'), out);
  });

  test("the .mcp.json of docs/hosts.md's Claude Code section connects", async () => {
    const blocks = codeBlocks(await readFile(HOSTS_MD, 'utf8'))
      .filter((b) => b.section === 'Claude Code' && b.lang === 'json');
    assert.equal(blocks.length, 1, 'one JSON block in the Claude Code section');
    const doc = JSON.parse(blocks[0].text);
    const names = Object.keys(doc.mcpServers);
    assert.ok(names.length >= 1, 'at least one server');
    // As pasted, but for this machine: the binary under test, the private
    // display and lock. The rest (type, args, the name) stays as written.
    for (const name of names) {
      const entry = doc.mcpServers[name];
      entry.command = BINARY;
      entry.env = { ...entry.env, DISPLAY: xvfb.display, CU_LOCK_PATH: join(tmp, `project-${name}.lock`) };
    }
    const dir = join(tmp, 'shared-project');
    await mkdir(dir);
    await writeFile(join(dir, '.mcp.json'), `${JSON.stringify(doc, null, 2)}\n`);
    // Project servers wait for approval; a user setting gives it up front.
    await mkdir(join(home, '.claude'), { recursive: true });
    await writeFile(join(home, '.claude', 'settings.json'), '{ "enableAllProjectMcpServers": true }\n');
    const r = await claude(['mcp', 'list'], { cwd: dir });
    assert.equal(r.code, 0, `exit status; stderr: ${r.stderr}`);
    for (const name of names) {
      const status = listStatus(r.stdout, name);
      assert.ok(status !== undefined, `no line for ${name}:\n${r.stdout}`);
      assert.match(status, CONNECTED, `${name}:\n${r.stdout}`);
      await stat(join(tmp, `project-${name}.lock`));
    }
  });
});

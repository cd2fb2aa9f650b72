// The host configuration snippets of docs/hosts.md and of README.md's
// "Connecting a host" section (between <!-- hosts --> and <!-- /hosts -->):
// every ```json block parses, every server entry has a command and
// env.DISPLAY, and no server is named computer-use (Claude Code refuses that
// name). The `claude mcp add` lines of the ```sh blocks keep to the same rules.
// The SideButton block is the repository's plugin.json, unchanged.
//
// Run: node --test hosts.test.mjs (needs no server, display or npm install)

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { codeBlocks } from './markdown.mjs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Splits a shell command line into words (plain words and "double-quoted" ones). */
function shellWords(line) {
  const words = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) words.push(m[1] ?? m[2]);
  return words;
}

async function sources() {
  const hosts = await readFile(join(REPO, 'docs', 'hosts.md'), 'utf8');
  const readme = await readFile(join(REPO, 'README.md'), 'utf8');
  const start = readme.indexOf('<!-- hosts -->\n');
  const end = readme.indexOf('<!-- /hosts -->');
  assert.ok(start >= 0 && end > start, 'README.md has <!-- hosts --> ... <!-- /hosts -->');
  const section = readme.slice(start + '<!-- hosts -->\n'.length, end);
  return [
    { name: 'docs/hosts.md', blocks: codeBlocks(hosts), text: hosts },
    // The README section has no headings of its own: its blocks are "README".
    { name: 'README.md hosts section', blocks: codeBlocks(section).map((b) => ({ ...b, section: 'README' })), text: section },
  ];
}

// Which top-level key each section's JSON uses.
const SERVERS_KEY = {
  'Claude Code': 'mcpServers',
  'Claude Desktop': 'mcpServers',
  Cursor: 'mcpServers',
  'VS Code': 'servers',
  README: 'mcpServers',
};

/** Checks one server entry of a host configuration. */
function checkEntry(where, name, entry, { vscode }) {
  assert.notEqual(name, 'computer-use', `${where}: the name computer-use (Claude Code refuses it)`);
  assert.match(name, /^[A-Za-z0-9_-]+$/, `${where}: server name ${JSON.stringify(name)}`);
  assert.equal(typeof entry, 'object', `${where}: ${name} is an object`);
  assert.equal(typeof entry.command, 'string', `${where}: ${name}.command`);
  assert.ok(
    entry.command === 'computer-use-mcp' || /^\/.*\/tools\/serve$/.test(entry.command),
    `${where}: ${name}.command is computer-use-mcp or an absolute tools/serve: ${entry.command}`,
  );
  if (entry.args !== undefined) {
    assert.ok(Array.isArray(entry.args) && entry.args.every((a) => typeof a === 'string'), `${where}: ${name}.args`);
  }
  assert.equal(typeof entry.env, 'object', `${where}: ${name}.env`);
  assert.match(String(entry.env?.DISPLAY), /^[\w.-]*:\d+(\.\d+)?$/, `${where}: ${name}.env.DISPLAY`);
  for (const [k, v] of Object.entries(entry.env)) {
    assert.equal(typeof v, 'string', `${where}: ${name}.env.${k} is a string`);
  }
  if (vscode) assert.equal(entry.type, 'stdio', `${where}: ${name}.type (VS Code needs "stdio")`);
  else if (entry.type !== undefined) assert.equal(entry.type, 'stdio', `${where}: ${name}.type`);
}

describe('host configuration snippets', () => {
  it('docs/hosts.md has a JSON snippet for every host', async () => {
    const [hosts] = await sources();
    for (const section of ['Claude Code', 'Claude Desktop', 'Cursor', 'VS Code', 'SideButton']) {
      assert.ok(
        hosts.blocks.some((b) => b.section === section && b.lang === 'json'),
        `a json block in the "${section}" section`,
      );
    }
  });

  it("README.md's hosts section has the Claude Code line, a JSON example and the pointer", async () => {
    const [, readme] = await sources();
    assert.ok(!readme.text.includes('snippets to come'), 'the placeholder is gone');
    assert.ok(readme.blocks.some((b) => b.lang === 'json'), 'a json block');
    assert.ok(readme.blocks.some((b) => b.lang === 'sh' && /^claude mcp add /m.test(b.text)), 'a claude mcp add line');
    assert.ok(readme.text.includes('(docs/hosts.md)'), 'a link to docs/hosts.md');
  });

  it('every JSON block parses; every server has a command and env.DISPLAY; none is named computer-use', async () => {
    const plugin = JSON.parse(await readFile(join(REPO, 'plugin.json'), 'utf8'));
    let entries = 0;
    for (const source of await sources()) {
      for (const block of source.blocks.filter((b) => b.lang === 'json')) {
        const where = `${source.name}:${block.line} (${block.section})`;
        let doc;
        try {
          doc = JSON.parse(block.text);
        } catch (e) {
          assert.fail(`${where}: not JSON: ${e.message}`);
        }
        if (block.section === 'SideButton') {
          assert.deepEqual(doc, plugin, `${where}: the repository's plugin.json, as it is`);
          assert.equal(doc.runtime, 'service', `${where}: runtime`);
          assert.equal(doc.service?.command, 'tools/serve', `${where}: service.command`);
          continue;
        }
        const key = SERVERS_KEY[block.section];
        assert.ok(key, `${where}: a JSON block in an unexpected section`);
        assert.deepEqual(Object.keys(doc), [key], `${where}: the one top-level key is ${key}`);
        const servers = doc[key];
        assert.ok(servers && typeof servers === 'object' && Object.keys(servers).length >= 1, `${where}: servers`);
        for (const [name, entry] of Object.entries(servers)) {
          checkEntry(where, name, entry, { vscode: key === 'servers' });
          entries += 1;
        }
      }
    }
    assert.ok(entries >= 5, `server entries checked: ${entries}`);
  });

  it('every claude mcp add line names a server other than computer-use and sets DISPLAY', async () => {
    let lines = 0;
    for (const source of await sources()) {
      for (const block of source.blocks.filter((b) => b.lang === 'sh')) {
        for (const line of block.text.split('\n').filter((l) => /^claude mcp add\b/.test(l))) {
          const where = `${source.name}:${block.line}: ${line}`;
          const words = shellWords(line).slice(3);
          const dash = words.indexOf('--');
          assert.ok(dash > 0 && dash < words.length - 1, `${where}: -- and then the command`);
          const options = words.slice(0, dash);
          const command = words[dash + 1];
          assert.ok(
            command === 'computer-use-mcp' || command.endsWith('/tools/serve'),
            `${where}: the command is computer-use-mcp or tools/serve`,
          );
          // The name is the first word that is neither an option nor its
          // value; -e takes every value up to the next option or --, so the
          // name must come before it.
          let name;
          for (let i = 0; i < options.length && name === undefined; i += 1) {
            const w = options[i];
            if (w === '-e' || w === '--env') {
              assert.fail(`${where}: -e before the server name would take the name as a variable`);
            } else if (w.startsWith('-')) {
              if (!w.includes('=')) i += 1; // -s user, -t stdio, ...
            } else {
              name = w;
            }
          }
          assert.ok(name, `${where}: a server name`);
          assert.notEqual(name, 'computer-use', `${where}: the name computer-use (Claude Code refuses it)`);
          const envs = [];
          for (let i = options.indexOf(name) + 1; i < options.length; i += 1) {
            if (options[i] === '-e' || options[i] === '--env') {
              while (i + 1 < options.length && !options[i + 1].startsWith('-')) envs.push(options[++i]);
            }
          }
          assert.ok(envs.some((e) => /^DISPLAY=[\w.-]*:\d+(\.\d+)?$/.test(e)), `${where}: -e DISPLAY=...`);
          lines += 1;
        }
      }
    }
    assert.ok(lines >= 3, `claude mcp add lines checked: ${lines}`);
  });
});

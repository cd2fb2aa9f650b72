// Counts test cases across the runners that tools/run-tests used and prints
// the closing line "N passed, N failed".
//
//   node count-results.mjs LABEL=meson-testlog.json ... LABEL=node-test-output.tap ...
//
// Meson runs Catch2 executables: each one's summary line gives its test-case
// counts; an executable that ended without a summary (a crash, a timeout)
// counts as one failure; any other test (a script) counts as one. Node's test runner prints "# pass N" / "# fail N";
// so does tests/fuzz/run-fuzz for the fuzz step (a crash, leak or timeout: # fail 1).
// Plain TAP without those lines is counted by its ok / not ok lines, and its
// failed lines are printed with the comment lines under them.
import { readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;

function countMeson(label, path) {
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const t = JSON.parse(line);
    const out = `${t.stdout ?? ''}\n${t.stderr ?? ''}`;
    let p = 0;
    let f = 0;
    const all = out.match(/All tests passed \(\d+ assertions? in (\d+) test cases?\)/);
    const mixed = out.match(/test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed/);
    if (all && t.result === 'OK') {
      p = Number(all[1]);
    } else if (mixed) {
      p = Number(mixed[2]);
      f = Math.max(1, Number(mixed[3]));
    } else if (!/Catch v\d/.test(out) && !/test cases?:/.test(out)) {
      // Not a Catch2 executable (a script such as tests/package/check-man):
      // one test, passed when meson says so.
      if (t.result === 'OK') p = 1;
      else f = 1;
    } else {
      f = 1;
    }
    console.log(`${label} ${t.name}: ${p} passed, ${f} failed (${t.result})`);
    passed += p;
    failed += f;
  }
}

function countNode(label, path) {
  const text = readFileSync(path, 'utf8');
  const p = text.match(/^# pass (\d+)$/m);
  const f = text.match(/^# fail (\d+)$/m);
  let np = p ? Number(p[1]) : 0;
  let nf = f ? Number(f[1]) : 1;  // No summary at all: the run itself broke.
  if (!p && !f) {
    // Plain TAP (tests/package, .ci/smoke-run): count the result lines, and
    // a plan that promised more than came is one more failure.
    const plan = text.match(/^1\.\.(\d+)$/m);
    np = (text.match(/^ok \d+/gm) ?? []).length;
    nf = (text.match(/^not ok \d+/gm) ?? []).length;
    if (!plan || np + nf < Number(plan[1])) nf += 1;
  }
  console.log(`${label}: ${np} passed, ${nf} failed`);
  if (!p && !f && nf > 0) {
    // Why, for a check whose detail went elsewhere: each failed line and the
    // comment lines under it.
    let under = false;
    for (const line of text.split('\n')) {
      if (/^not ok \d+/.test(line)) under = true;
      else if (!line.startsWith('#')) under = false;
      if (under) console.log(`  ${line}`);
    }
  }
  passed += np;
  failed += nf;
}

for (const arg of process.argv.slice(2)) {
  const [label, path] = arg.split('=');
  try {
    if (path.endsWith('.json')) countMeson(label, path);
    else countNode(label, path);
  } catch (e) {
    console.log(`${label}: no results (${e.message})`);
    failed += 1;
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

// Drives `ndb dap` over stdio with @vscode/debugadapter-testsupport's
// DebugClient, the client VS Code's own debug adapters are tested with, on
// the real engine (the tracer, with reverse stepping) and on the model engine
// (the embedded default model). Run by scripts/dap-e2e.sh; NDB_BIN names the
// ndb binary (default: bin/ndb of the repository).
'use strict';

const { describe, test } = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const fs = require('node:fs');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const root = path.resolve(__dirname, '..', '..');
const ndb = path.resolve(root, process.env.NDB_BIN || 'bin/ndb');
// A copy of examples/vowels.py, so that edits to the example do not move
// the lines checked here.
const program = path.join(__dirname, 'vowels.py');
// Each step of the model engine is a prediction on the CPU of a shared machine.
const timeout = 60000;

//  1 def f(text, n):
//  2     out = []
//  3     for ch in text:
//  4         if ch in 'aeiou':
//  ...
//  8     return ''.join(out[:n])
// 11 if __name__ == "__main__":
// 12     print(f("banana", 4))
const BP = 2;

// start returns a DebugClient serving `ndb dap` on stdio.
async function start() {
  assert.ok(fs.existsSync(ndb), `no ndb binary at ${ndb} (set NDB_BIN)`);
  const dc = new DebugClient(ndb, 'dap', 'ndb', { cwd: root }, !!process.env.NDB_E2E_STDERR);
  dc.defaultTimeout = timeout;
  await dc.start();
  return dc;
}

// stop ends the adapter: the end of stdin ends `ndb dap` (it does not end
// on SIGTERM while it waits for a request on stdio); SIGKILL if it is
// still there after 5 s.
async function stop(dc) {
  const p = dc._adapterProcess;
  if (p) {
    p.stdin.end();
    const t = setTimeout(() => p.kill('SIGKILL'), 5000);
    await new Promise((resolve) => (p.exitCode !== null || p.signalCode !== null ? resolve() : p.once('exit', resolve)));
    clearTimeout(t);
  }
}

// move sends a stepping request and returns the stopped event that follows
// it (listening before the request is sent, so that it cannot be missed).
async function move(dc, command) {
  const stopped = dc.waitForEvent('stopped');
  await dc.send(command, { threadId: 1 });
  return stopped;
}

async function top(dc) {
  const st = await dc.stackTraceRequest({ threadId: 1 });
  assert.ok(st.body.stackFrames.length > 0, 'empty stack');
  return st.body.stackFrames;
}

// locals returns the Locals scope of a frame as {name: value}.
async function locals(dc, frameId) {
  const sc = await dc.scopesRequest({ frameId });
  const loc = sc.body.scopes.find((s) => s.name === 'Locals');
  assert.ok(loc, `no Locals scope in ${JSON.stringify(sc.body.scopes)}`);
  const vs = await dc.variablesRequest({ variablesReference: loc.variablesReference });
  return Object.fromEntries(vs.body.variables.map((v) => [v.name, v]));
}

// session: initialize, launch, a breakpoint at line 2 of f,
// configurationDone, the breakpoint's stop with its stack and locals, then the
// engine's steps (before), continue to the end, the engine's checks there
// (atEnd), one malformed request, disconnect.
async function session(engine, { before, atEnd }) {
  const dc = await start();
  const stdout = [];
  dc.on('output', (e) => e.body.category === 'stdout' && stdout.push(e.body.output));
  try {
    const initialized = dc.waitForEvent('initialized');
    const init = await dc.initializeRequest();
    assert.strictEqual(init.body.supportsConfigurationDoneRequest, true);
    assert.strictEqual(init.body.supportsStepBack, true);

    // VS Code's order: initialize, launch, (initialized) breakpoints, configurationDone.
    const stopped = dc.waitForEvent('stopped');
    await dc.launchRequest({ program, engine, stopOnEntry: false });
    await initialized;
    const bps = await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: BP }] });
    assert.strictEqual(bps.body.breakpoints.length, 1);
    assert.strictEqual(bps.body.breakpoints[0].verified, true);
    assert.strictEqual(bps.body.breakpoints[0].line, BP);
    await dc.configurationDoneRequest();

    const ev = await stopped;
    assert.strictEqual(ev.body.reason, 'breakpoint', JSON.stringify(ev.body));
    const th = await dc.threadsRequest();
    assert.strictEqual(th.body.threads.length, 1);

    const frames = await top(dc);
    assert.strictEqual(frames[0].name, 'f', JSON.stringify(frames));
    assert.strictEqual(frames[0].line, BP);
    assert.strictEqual(path.resolve(frames[0].source.path), program);
    assert.strictEqual(frames[1] && frames[1].name, '<module>', JSON.stringify(frames));
    const vars = await locals(dc, frames[0].id);
    assert.strictEqual(vars.text && vars.text.value, "'banana'");
    assert.strictEqual(vars.n && vars.n.value, '4');

    await before(dc);

    // continue to the end: exited with the exit code, then a stop (reason
    // exit) that keeps the session, where a further continue is an error
    // (no second stop).
    const exited = dc.waitForEvent('exited');
    const end = await move(dc, 'continue');
    assert.strictEqual(end.body.reason, 'exit', JSON.stringify(end.body));
    assert.strictEqual((await exited).body.exitCode, 0);
    assert.strictEqual((await top(dc))[0].name, '<program ended>');
    await assert.rejects(dc.continueRequest({ threadId: 1 }), /exited/);

    await atEnd(dc, stdout.join(''));

    // One malformed request (an argument of the wrong JSON type) and an
    // unknown command: error responses, and the adapter still serves.
    await assert.rejects(dc.customRequest('next', { threadId: '1' }), /threadId|unmarshal/);
    await assert.rejects(dc.customRequest('noSuchCommand'), /noSuchCommand/);
    const th2 = await dc.threadsRequest();
    assert.strictEqual(th2.body.threads.length, 1);
    assert.ok((await top(dc))[0].line > 0);

    await dc.disconnectRequest({});
  } finally {
    await stop(dc);
  }
}

describe('ndb dap over stdio (@vscode/debugadapter-testsupport)', () => {
  test('real engine: breakpoint, stack, variables, stepIn, next, stepBack, continue to the end, stepBack from it', { timeout: 4 * timeout }, () =>
    session('real', {
      before: async (dc) => {
        let ev = await move(dc, 'stepIn');
        assert.strictEqual(ev.body.reason, 'step');
        assert.strictEqual((await top(dc))[0].line, 3);
        ev = await move(dc, 'next');
        assert.strictEqual(ev.body.reason, 'step');
        const f = await top(dc);
        assert.strictEqual(f[0].line, 4);
        const vars = await locals(dc, f[0].id);
        assert.strictEqual(vars.ch && vars.ch.value, "'b'");
        assert.strictEqual(vars.out && vars.out.value, '[]');
        // The live program waits here: expressions (watch, hover) and the
        // debug console's statements run in its frame.
        let r = await dc.evaluateRequest({ expression: 'text[:3] + ch', context: 'watch', frameId: f[0].id });
        assert.strictEqual(r.body.result, "'banb'");
        r = await dc.evaluateRequest({ expression: 'n2 = n * 2', context: 'repl', frameId: f[0].id });
        assert.strictEqual(r.body.result, '');
        r = await dc.evaluateRequest({ expression: 'n2', context: 'hover', frameId: f[0].id });
        assert.strictEqual(r.body.result, '8');
        await assert.rejects(dc.evaluateRequest({ expression: 'nope', context: 'watch', frameId: f[0].id }), /NameError/);
        ev = await move(dc, 'stepBack');
        assert.strictEqual(ev.body.reason, 'step');
        assert.strictEqual((await top(dc))[0].line, 3);
        await move(dc, 'next');
        assert.strictEqual((await top(dc))[0].line, 4);
      },
      atEnd: async (dc, out) => {
        // The program's printed output, as an output event (category stdout).
        assert.strictEqual(out, 'bAnA\n');
        const ev = await move(dc, 'stepBack');
        assert.strictEqual(ev.body.reason, 'step');
        const f = await top(dc);
        assert.notStrictEqual(f[0].name, '<program ended>');
        assert.ok(f[0].line > 0);
      },
    }));

  // pause: a continue that runs an endless loop stops where the program is
  // (the live program), and evaluates there.
  test('real engine: pause an endless loop, evaluate there', { timeout: timeout }, async () => {
    const dc = await start();
    try {
      await dc.initializeRequest();
      await dc.launchRequest({ program: path.join(__dirname, 'endless.py'), engine: 'real' });
      await dc.configurationDoneRequest(); // answered at once: the program runs
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stopped = dc.waitForEvent('stopped');
      await dc.pauseRequest({ threadId: 1 });
      const ev = await stopped;
      assert.strictEqual(ev.body.reason, 'pause', JSON.stringify(ev.body));
      const f = await top(dc);
      assert.strictEqual(f[0].name, '<module>');
      const r = await dc.evaluateRequest({ expression: 'n > 0', context: 'watch', frameId: f[0].id });
      assert.strictEqual(r.body.result, 'True');
      await dc.disconnectRequest({});
    } finally {
      await stop(dc);
    }
  });

  // A model predicts every state: the checks are those of the protocol (a
  // stop at the breakpoint with the call's arguments, one line per step), not
  // of the predicted values past the first ones.
  test('model engine (embedded default model): breakpoint, stack, variables, stepIn, next, continue to the end', { timeout: 4 * timeout }, () =>
    session('model', {
      before: async (dc) => {
        // Watch expressions over the predicted values (literals), evaluated
        // in the sandbox: the breakpoint's locals are the call's arguments.
        const r = await dc.evaluateRequest({ expression: 'text[:3] + str(n)', context: 'watch', frameId: 1 });
        assert.strictEqual(r.body.result, "'ban4'");
        let ev = await move(dc, 'stepIn');
        assert.strictEqual(ev.body.reason, 'step');
        assert.match(ev.body.description, /predicted/);
        assert.strictEqual((await top(dc))[0].line, 3);
        ev = await move(dc, 'next');
        assert.strictEqual(ev.body.reason, 'step');
        const f = await top(dc);
        assert.strictEqual(f[0].line, 4);
        const vars = await locals(dc, f[0].id);
        assert.ok('ch' in vars, `no ch in ${Object.keys(vars)}`);
        // A predicted loop may come back to the breakpoint: clear it, as a
        // user would, so that continue runs to the predicted end.
        const bps = await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
        assert.strictEqual(bps.body.breakpoints.length, 0);
      },
      atEnd: async () => {},
    }));
});

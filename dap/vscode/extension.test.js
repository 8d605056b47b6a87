// Tests of extension.js without VS Code (node --test; run by
// scripts/vsce-package.sh): the ndb binary is found from the setting or
// PATH, a missing one is an error at once that names the setting, and the
// factory starts `ndb dap` (or connects to debugServer).
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const Module = require('module');

// A stand-in for the vscode module: records what the extension does.
const shown = [];
const registered = {};
const vscode = {
  DebugAdapterExecutable: class { constructor(command, args, options) { Object.assign(this, { command, args, options }); } },
  DebugAdapterServer: class { constructor(port, host) { Object.assign(this, { port, host }); } },
  debug: {
    registerDebugAdapterDescriptorFactory: (type, f) => { registered.factory = f; return { dispose() {} }; },
    registerDebugConfigurationProvider: (type, p) => { registered.provider = p; return { dispose() {} }; },
  },
  window: { showErrorMessage: (msg) => { shown.push(msg); return Promise.resolve(undefined); }, activeTextEditor: undefined },
  commands: { executeCommand: () => {} },
  workspace: { getConfiguration: () => ({ get: (k) => settings[k] }) },
};
let settings = {};
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? vscode : load.call(this, request, ...rest); };
const ext = require('./extension.js');
ext.activate({ subscriptions: [] });

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndb-ext-'));
const bin = path.join(dir, 'ndb');
fs.writeFileSync(bin, '#!/bin/sh\n', { mode: 0o755 });
const notExe = path.join(dir, 'plain');
fs.writeFileSync(notExe, '', { mode: 0o644 });
const session = (configuration) => ({ configuration, workspaceFolder: { uri: { fsPath: dir } } });

test('the setting names the binary', () => {
  settings = { path: bin, args: ['--model', 'm.ndb'] };
  const d = registered.factory.createDebugAdapterDescriptor(session({ type: 'ndb', program: 'x.py' }));
  assert.strictEqual(d.command, bin);
  assert.deepStrictEqual(d.args, ['dap', '--model', 'm.ndb']);
  assert.strictEqual(d.options.cwd, dir);
});

test('a missing binary is an error at once, naming the setting', () => {
  for (const p of [path.join(dir, 'nope'), notExe, dir]) {
    settings = { path: p };
    shown.length = 0;
    const t0 = Date.now();
    assert.throws(() => registered.factory.createDebugAdapterDescriptor(session({ type: 'ndb', program: 'x.py' })), /ndb\.path/);
    assert.ok(Date.now() - t0 < 1000);
    assert.strictEqual(shown.length, 1);
    assert.match(shown[0], /not an executable file/);
  }
  assert.throws(() => ext.findNdb('', path.join(dir, 'empty')), /no ndb binary on PATH/);
});

test('PATH is searched when the setting is empty', () => {
  assert.strictEqual(ext.findNdb('', ['/nonexistent', dir].join(path.delimiter)), bin);
});

test('debugServer connects to a running server', () => {
  settings = {};
  const d = registered.factory.createDebugAdapterDescriptor(session({ type: 'ndb', program: 'x.py', debugServer: 4711, token: 't' }));
  assert.strictEqual(d.port, 4711);
  assert.strictEqual(d.host, '127.0.0.1');
});

test('a launch without program is refused', async () => {
  shown.length = 0;
  const c = await registered.provider.resolveDebugConfiguration(undefined, { type: 'ndb', request: 'launch', name: 'x' });
  assert.strictEqual(c, undefined);
  assert.match(shown[0], /"program"/);
});

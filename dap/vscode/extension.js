// The ndb extension's code: it starts `ndb dap` on stdio for each debug
// session of type "ndb" (or connects to a server named by debugServer),
// with the binary of the setting ndb.path, else `ndb` on PATH. A missing
// binary is an error message at once, with a button to the setting,
// instead of a client waiting 30 s for an adapter that never started.
// Plain JavaScript: nothing to build.
'use strict';

const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

// findNdb returns the ndb binary to run, or throws an Error that says what
// is missing and how to fix it.
function findNdb(setting, envPath) {
  const exe = (p) => {
    try {
      const st = fs.statSync(p);
      fs.accessSync(p, fs.constants.X_OK);
      return st.isFile();
    } catch (e) {
      return false;
    }
  };
  if (setting) {
    if (exe(setting)) return setting;
    throw new Error(`ndb: the setting ndb.path names "${setting}", which is not an executable file. Build ndb (make build: bin/ndb) or point ndb.path at it.`);
  }
  for (const dir of (envPath || '').split(path.delimiter)) {
    if (dir && exe(path.join(dir, 'ndb'))) return path.join(dir, 'ndb');
  }
  throw new Error('ndb: no ndb binary on PATH. Build it (make build: bin/ndb) and set ndb.path to it, or add its folder to PATH.');
}

class Factory {
  createDebugAdapterDescriptor(session) {
    const cfg = session.configuration;
    if (cfg.debugServer) {
      // A running `ndb dap --listen 127.0.0.1:PORT`; the token is a launch argument.
      return new vscode.DebugAdapterServer(Number(cfg.debugServer), cfg.host || '127.0.0.1');
    }
    const conf = vscode.workspace.getConfiguration('ndb', session.workspaceFolder);
    let bin;
    try {
      bin = findNdb(conf.get('path'), process.env.PATH);
    } catch (e) {
      vscode.window.showErrorMessage(e.message, 'Open Settings').then((pick) => {
        if (pick) vscode.commands.executeCommand('workbench.action.openSettings', 'ndb.path');
      });
      throw e;
    }
    const args = ['dap', ...(conf.get('args') || [])];
    const cwd = session.workspaceFolder ? session.workspaceFolder.uri.fsPath : undefined;
    return new vscode.DebugAdapterExecutable(bin, args, { cwd });
  }
}

// Provider fills a configuration when there is no launch.json (F5 on a
// Python file): the real engine on the current file.
class Provider {
  resolveDebugConfiguration(folder, config) {
    if (!config.type && !config.request && !config.name) {
      const editor = vscode.window.activeTextEditor;
      if (editor && editor.document.languageId === 'python') {
        return { type: 'ndb', name: 'ndb: real run', request: 'launch', program: '${file}', engine: 'real', stopOnEntry: true };
      }
    }
    if (!config.program) {
      return vscode.window.showErrorMessage('ndb: the launch configuration needs "program" (a Python file).').then(() => undefined);
    }
    return config;
  }
}

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('ndb', new Factory()),
    vscode.debug.registerDebugConfigurationProvider('ndb', new Provider()),
  );
}

function deactivate() {}

module.exports = { activate, deactivate, findNdb };

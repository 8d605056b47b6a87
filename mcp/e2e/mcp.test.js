// Drives `ndb mcp` with the official MCP TypeScript SDK client, over stdio
// and over Streamable HTTP (scripts/mcp-e2e.sh runs it; NDB_BIN is the
// binary). Each transport: list the tools, start a session on prog.py with
// a breakpoint (one call reaches it), evaluate there, continue, end. Over
// HTTP also: the token is required, and a session outlives the client that
// started it (one-shot clients). Over stdio the client offers MCP roots,
// and a program outside them is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import os from 'node:os';
import fs from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ndb = process.env.NDB_BIN;
assert.ok(ndb, 'NDB_BIN must name the ndb binary');
const prog = path.join(here, 'prog.py');

const tools = ['debug_breakpoint', 'debug_context', 'debug_continue', 'debug_end', 'debug_restart', 'debug_sessions',
  'debug_source', 'debug_start', 'debug_step', 'evaluate', 'predict_input', 'predict_output'];

function newClient(roots) {
  const client = new Client({ name: 'ndb-e2e', version: '0.0.0' }, { capabilities: roots ? { roots: {} } : {} });
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((r) => ({ uri: pathToFileURL(r).href, name: path.basename(r) })),
    }));
  }
  return client;
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name} ${JSON.stringify(args)}: ${res.content?.[0]?.text}`);
  return res;
}

// debugScript: the same walk on any transport; returns the session id.
async function debugScript(client) {
  const listed = (await client.listTools()).tools;
  assert.deepEqual(listed.map((t) => t.name).sort(), tools);
  const start = listed.find((t) => t.name === 'debug_start');
  assert.deepEqual(start.inputSchema.properties.engine.enum, ['real', 'model', 'openai', 'cwm']);
  assert.equal(listed.find((t) => t.name === 'debug_context').annotations.readOnlyHint, true);
  assert.ok(!JSON.stringify(listed).includes('"type":["'), 'no nullable type arrays in the schemas');

  let res = await call(client, 'debug_start', {
    program: prog, engine: 'real', args: ['3', '4', '5'], stdin: 'hello\n',
    breakpoints: [{ line: 5, condition: 'k == 2' }],
  });
  let st = res.structuredContent;
  assert.equal(st.function, 'scale');
  assert.equal(st.line, 5);
  assert.deepEqual(st.locals, { x: '5', k: '2' });
  assert.deepEqual(st.stack, ['<module>:17', 'main:12', 'scale:5']);
  const id = st.session;

  res = await call(client, 'evaluate', { session: id, code: 'x * k + 1' });
  assert.equal(res.structuredContent.result, '11');
  res = await call(client, 'debug_source', { session: id, context: 1 });
  assert.match(res.content[0].text, /^ {3}5 B> {5}y = x \* k$/m);
  res = await call(client, 'debug_breakpoint', { session: id, line: 5, clear: true });
  assert.deepEqual(res.structuredContent.breakpoints, []);
  res = await call(client, 'debug_continue', { session: id });
  assert.equal(res.structuredContent.exit, 'normal');
  assert.equal(res.structuredContent.output, 'hello 14\n');
  return id;
}

async function endSession(client, id) {
  const res = await call(client, 'debug_end', { session: id });
  assert.equal(res.structuredContent.ended, true);
  const again = await client.callTool({ name: 'debug_context', arguments: { session: id } });
  assert.equal(again.isError, true);
}

test('stdio: tools, a breakpoint in one call, evaluate, continue, end; MCP roots confine programs', async () => {
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'ndb-e2e-'));
  const secret = path.join(outside, 'secret.py');
  fs.writeFileSync(secret, 'TOPSECRET = 1\n');
  const transport = new StdioClientTransport({ command: ndb, args: ['mcp', '--engine', 'real'], cwd: outside, stderr: 'pipe' });
  const client = newClient([here]);
  await client.connect(transport);
  try {
    assert.match(client.getInstructions(), /debug_start/);
    const id = await debugScript(client);
    await endSession(client, id);
    const res = await client.callTool({ name: 'debug_start', arguments: { program: secret } });
    assert.equal(res.isError, true);
    assert.match(res.content[0].text, /outside the workspace roots/);
    assert.ok(!res.content[0].text.includes('TOPSECRET'));
  } finally {
    await client.close();
    fs.rmSync(outside, { recursive: true, force: true });
  }
});

// startHTTP runs `ndb mcp --http 127.0.0.1:0` and reads its URL and token.
function startHTTP() {
  const proc = spawn(ndb, ['mcp', '--engine', 'real', '--http', '127.0.0.1:0', '--root', here], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no URL and token from ndb mcp --http: ${err}`)), 30000);
    proc.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (\S+)\nndb mcp: token ([0-9a-f]+) /.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: new URL(m[1]), token: m[2] });
      }
    });
    proc.on('exit', (code) => reject(new Error(`ndb mcp --http exited (${code}): ${err}`)));
  });
}

async function httpClient(url, token) {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

test('Streamable HTTP: the token is required; sessions outlive one-shot clients', async () => {
  const { proc, url, token } = await startHTTP();
  try {
    const bad = newClient();
    await assert.rejects(bad.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: 'Bearer wrong' } } })));

    let client = await httpClient(url, token);
    await debugScript(client);
    // A session started by one client, continued by the next ones.
    let res = await call(client, 'debug_start', { program: prog, engine: 'real', args: ['1'], breakpoints: [{ function: 'scale' }] });
    const id = res.structuredContent.session;
    assert.deepEqual(res.structuredContent.locals, { x: '1', k: '0' });
    await client.close();

    client = await httpClient(url, token);
    res = await call(client, 'debug_sessions', {});
    assert.ok(res.structuredContent.sessions.some((s) => s.session === id && s.location === 'scale:5'));
    res = await call(client, 'evaluate', { session: id, code: 'x + 41' });
    assert.equal(res.structuredContent.result, '42');
    await client.close();

    client = await httpClient(url, token);
    res = await call(client, 'debug_step', { session: id, mode: 'out' });
    assert.equal(res.structuredContent.event, 'return');
    assert.equal(res.structuredContent.value, '0');
    await endSession(client, id);
    await client.close();
  } finally {
    proc.kill('SIGTERM');
  }
});

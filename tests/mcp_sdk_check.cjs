#!/usr/bin/env node
// A check of POST /v1/mcp with the reference MCP client, the TypeScript SDK
// (@modelcontextprotocol/sdk), over its Streamable HTTP transport. The SDK is pinned in
// tests/clients/package-lock.json and installed there by tests/deps.sh (`npm ci`), never
// fetched at test time; MCP_SDK_DIR names another folder it resolves from. tests/
// integration/mcp.sh runs this and counts each line as a check; without the SDK it is a
// failure in CI (CI=true) and a visible skip elsewhere.
//
// Usage: NODE_EXTRA_CA_CERTS=CACERT [MCP_SDK_DIR=DIR] SANDBOX_TOKEN=... node mcp_sdk_check.cjs URL
// Prints one line per check ("ok - ..." / "not ok - ...") and exits 1 if any failed.
'use strict';
const path = require('path');
const { createRequire } = require('module');

const url = process.argv[2];
const token = process.env.SANDBOX_TOKEN || '';
const sdk = createRequire(path.join(process.env.MCP_SDK_DIR || path.join(__dirname, 'clients'), 'index.js'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');

// SANDBOX_TIME_SCALE (tests/integration/lib.sh): scaled, the tool calls get the SDK's
// 60 s request timeout times it (a slow guest); none given at scale 1 (the default).
const scale = parseInt(process.env.SANDBOX_TIME_SCALE || '1', 10) || 1;
const opts = scale > 1 ? { timeout: 60000 * scale } : undefined;

let failed = 0;
function check(name, cond, got) {
  if (cond) {
    console.log('ok - ' + name);
  } else {
    failed++;
    console.log('not ok - ' + name + ' (got ' + JSON.stringify(got).slice(0, 400) + ')');
  }
}

async function main() {
  const client = new Client({ name: 'sandbox-sdk-check', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: 'Bearer ' + token } },
  });
  // connect: initialize, notifications/initialized, then the SDK's optional GET for an
  // SSE stream, which our 405 must turn down quietly.
  await client.connect(transport);
  const info = client.getServerVersion();
  check('initialize: serverInfo.name', info && info.name === 'sandbox-api', info);
  check('initialize: tools capability', !!(client.getServerCapabilities() || {}).tools,
        client.getServerCapabilities());
  await client.ping();
  check('ping', true);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  for (const want of ['run_command', 'session_exec', 'session_command_status',
                      'session_command_output', 'list_runtimes']) {
    check('tools/list has ' + want, names.includes(want), names);
  }
  let r = await client.callTool({ name: 'run_command', arguments: { command: 'echo sdk-ok' } },
                               undefined, opts);
  check('run_command: text', r.content && r.content[0] && r.content[0].text === 'sdk-ok\n', r);
  check('run_command: isError false', r.isError === false, r.isError);
  r = await client.callTool({ name: 'run_command', arguments: { command: 'exit 5' } },
                           undefined, opts);
  check('run_command failing: isError, exit code 5',
        r.isError === true && r.structuredContent && r.structuredContent.exit_code === 5, r);
  r = await client.callTool({ name: 'list_runtimes', arguments: {} });
  check('list_runtimes: runtimes array',
        Array.isArray(r.structuredContent && r.structuredContent.runtimes), r);
  let err = null;
  try {
    await client.callTool({ name: 'run_command', arguments: { command: 'true', wait_seconds: 99 } });
  } catch (e) {
    err = e;
  }
  check('invalid params: an McpError -32602', err && err.code === -32602, err && err.message);
  await client.close();
}

main().then(() => {
  console.log(failed ? failed + ' failed' : 'all passed');
  process.exit(failed ? 1 : 0);
}, (e) => {
  console.log('not ok - the SDK client failed: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});

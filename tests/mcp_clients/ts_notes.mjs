// The official TypeScript MCP client 2.x (`@modelcontextprotocol/client`, pinned in
// .ci/package.json) uses the notes service's resources, prompts and completions, and runs its
// export as a task through the official tasks support (`@modelcontextprotocol/ext-tasks`).
//
//   node ts_notes.mjs MCP_URL TOKEN NOTE_ID MODE
//
// MODE is `legacy` (the 2025 initialize handshake) or `auto` (the 2026-07-28 revision through
// server/discover). Lists the resources and templates, reads the note NOTE_ID through its
// template, gets the prompt that embeds it, completes a label, and runs `notes.export` as a task
// (2025-11-25's tasks in `legacy` mode, the 2026-07-28 tasks extension in `auto`), then lists
// the tasks. Prints one JSON summary line; exits 1 naming what differed.
// Environment: SPECWRIGHT_MCP_CLIENT_NODE_MODULES, the node_modules folder holding the client.

import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [url, token, noteId, mode] = process.argv.slice(2);
const modules = process.env.SPECWRIGHT_MCP_CLIENT_NODE_MODULES;
if (!url || !token || !noteId || !['legacy', 'auto'].includes(mode) || !modules) {
  console.error('usage: SPECWRIGHT_MCP_CLIENT_NODE_MODULES=… node ts_notes.mjs MCP_URL TOKEN NOTE_ID legacy|auto');
  process.exit(2);
}
const sdk = await import(pathToFileURL(path.join(modules, '@modelcontextprotocol/client/dist/index.mjs')).href);
const { Client, StreamableHTTPClientTransport } = sdk;
const tasksSupport = await import(
  pathToFileURL(path.join(modules, '@modelcontextprotocol/ext-tasks/dist/client/index.js')).href
);
const { createTaskSessionFromClient, resultFromTaskOutcome, toolDeclarationFromMcpTool } = tasksSupport;
const check = (cond, what) => {
  if (!cond) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
};

const options = mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {};
const client = new Client({ name: 'specwright-e2e-ts-notes', version: '1.0.0' }, options);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
const caps = client.getServerCapabilities() ?? {};
check(caps.resources && caps.prompts && caps.completions, `capabilities: ${JSON.stringify(caps)}`);

const { resources } = await client.listResources();
check(resources.some((r) => r.uri === 'notes://tags'), `resources: ${JSON.stringify(resources)}`);
const { resourceTemplates } = await client.listResourceTemplates();
check(resourceTemplates.some((t) => t.uriTemplate === 'notes://notes/{id}'), 'the note template');

const read = await client.readResource({ uri: `notes://notes/${noteId}` });
const note = JSON.parse(read.contents[0].text);
check(note.id === noteId, `read: ${JSON.stringify(read)}`);

const prompt = await client.getPrompt({ name: 'summarize_note', arguments: { id: noteId } });
const embedded = prompt.messages.find((m) => m.content.type === 'resource');
check(embedded && JSON.parse(embedded.content.resource.text).id === noteId, `prompt: ${JSON.stringify(prompt)}`);

const completed = await client.complete({
  ref: { type: 'ref/prompt', name: 'review_label' },
  argument: { name: 'label', value: 'w' },
});
// The export as a task. On 2026-07-28 the tasks package sends its task requests itself, with
// the revision's framing (its documented host-owned dispatch: the SDK's typed surface has no task
// methods); on 2025-11-25 it goes through the client.
const REVISION_2026 = '2026-07-28';
let nextId = 1000;
async function rawDispatch(request, options = {}) {
  const id = nextId++;
  const headers = {
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': REVISION_2026,
    'Mcp-Method': request.method,
  };
  const name = request.method === 'tools/call' ? request.params.name : request.params?.taskId;
  if (name !== undefined) headers['Mcp-Name'] = name;
  const resp = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id, ...request }),
    signal: options.signal,
  });
  const text = await resp.text();
  const stream = (resp.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const messages = stream
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)))
    : [JSON.parse(text)];
  const message = messages.filter((m) => m.id === id).pop();
  check(message, `no answer to ${request.method} (HTTP ${resp.status}): ${text}`);
  return message.error ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result };
}
const framing = {
  protocolVersion: REVISION_2026,
  clientInfo: { name: 'specwright-e2e-ts-notes', version: '1.0.0' },
  clientCapabilities: {},
};
const session = createTaskSessionFromClient(client, {
  endpointId: 'notes',
  ...(mode === 'auto' ? { rawDispatch, v2RequestFraming: framing } : {}),
});
const { tools } = await client.listTools();
const exportTool = tools.find((t) => t.name === 'notes.export');
check(exportTool, `tools: ${JSON.stringify(tools.map((t) => t.name))}`);
const execution = await session.callTool(
  'notes.export',
  {},
  { declaration: toolDeclarationFromMcpTool(exportTool), task: { preference: 'require' } },
);
check(execution.kind === 'task', `the export was not a task: ${execution.kind}`);
const { outcome, lastTask } = await execution.settle();
const exported = resultFromTaskOutcome(outcome);
check(exported.structuredContent?.state === 'done', `export: ${JSON.stringify(exported)}`);
let listed = null;
if (session.capabilities.inventory === 'server-list') {
  const page = await session.listTasks();
  listed = page.tasks.some((t) => t.taskId === execution.handle.taskId);
}
await session.close();

console.log(
  JSON.stringify({
    mode,
    protocol: transport.protocolVersion ?? null,
    resources: resources.length,
    templates: resourceTemplates.length,
    title: note.title,
    messages: prompt.messages.length,
    labels: completed.completion.values,
    task: { inventory: session.capabilities.inventory, status: lastTask?.status ?? null, listed },
  }),
);
await client.close();

// The official TypeScript MCP client 2.x (`@modelcontextprotocol/client`, pinned in
// .ci/package.json) uses the notes service's resources, prompts and completions.
//
//   node ts_notes.mjs MCP_URL TOKEN NOTE_ID MODE
//
// MODE is `legacy` (the 2025 initialize handshake) or `auto` (the 2026-07-28 revision through
// server/discover). Lists the resources and templates, reads the note NOTE_ID through its
// template, gets the prompt that embeds it, and completes a label. Prints one JSON summary line;
// exits 1 naming what differed.
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
console.log(
  JSON.stringify({
    mode,
    protocol: transport.protocolVersion ?? null,
    resources: resources.length,
    templates: resourceTemplates.length,
    title: note.title,
    messages: prompt.messages.length,
    labels: completed.completion.values,
  }),
);
await client.close();

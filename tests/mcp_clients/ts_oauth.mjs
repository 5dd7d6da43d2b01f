// The official TypeScript MCP client 2.x (`@modelcontextprotocol/client`, pinned in
// .ci/package.json) signs in to the vault's MCP endpoint on its own.
//
//   node ts_oauth.mjs MCP_URL USER PASSWORD MODE
//
// MODE is `legacy` (the 2025 initialize handshake, the client's default) or `auto` (the client
// negotiates the 2026-07-28 revision through server/discover). MCP_URL is the server's public URL
// followed by /api/mcp; when that URL has a path, every page, form and redirect must stay under it.
// Environment: SPECWRIGHT_MCP_CLIENT_NODE_MODULES, the node_modules folder holding the client.
//
// No token is made beforehand: the client's OAuth support gets the 401, discovers the resource and
// authorization server metadata, registers, and sends the user to our authorization endpoint; a
// headless "browser" (fetch with its cookie kept by hand, no redirect followed on its own) signs in
// and approves; the client redeems the code. Then a read tool works, a write tool answers 403
// insufficient_scope and the client steps up (consent shown again), and the call succeeds.
// Prints one JSON summary line; exits 1 naming what differed.

import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [url, user, password, mode] = process.argv.slice(2);
const modules = process.env.SPECWRIGHT_MCP_CLIENT_NODE_MODULES;
if (!url || !user || !password || !['legacy', 'auto'].includes(mode) || !modules) {
  console.error('usage: SPECWRIGHT_MCP_CLIENT_NODE_MODULES=… node ts_oauth.mjs MCP_URL USER PASSWORD legacy|auto');
  process.exit(2);
}
const sdk = await import(pathToFileURL(path.join(modules, '@modelcontextprotocol/client/dist/index.mjs')).href);
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = sdk;

const REDIRECT_URI = 'http://127.0.0.1:47214/callback';
const COOKIE = 'specwright_session';
const basePath = new URL(url).pathname.replace(/\/api\/mcp\/?$/, '');
const check = (cond, what) => {
  if (!cond) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
};

/** The client's OAuth provider: everything in memory, the authorization URL handed to the browser. */
class Provider {
  constructor() {
    this.saved = {};
    this.pending = null;
    this.registrations = 0;
  }
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: 'specwright-e2e-ts',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      scope: 'vault:read',
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(info) {
    this.saved.client = info;
    this.registrations += 1;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(authorizationUrl) {
    this.pending = authorizationUrl;
  }
  saveCodeVerifier(verifier) {
    this.saved.verifier = verifier;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
  saveDiscoveryState(state) {
    this.saved.discovery = state;
  }
  discoveryState() {
    return this.saved.discovery;
  }
}

/** The user at a browser: signs in and approves, seeing every hop. */
class Browser {
  constructor() {
    this.session = null;
    this.consents = 0;
    this.scopes = [];
  }
  async get(target) {
    const headers = this.session ? { cookie: `${COOKIE}=${this.session}` } : {};
    return fetch(target, { redirect: 'manual', headers });
  }
  async post(target, fields) {
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      origin: new URL(target).origin,
      ...(this.session ? { cookie: `${COOKIE}=${this.session}` } : {}),
    };
    return fetch(target, { method: 'POST', redirect: 'manual', headers, body: new URLSearchParams(fields) });
  }
  hidden(html, action) {
    const form = html.split(`action="${action}"`)[1];
    check(form, `the consent form posts to ${action}: ${html.slice(0, 400)}`);
    const unescape = (s) =>
      s.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
    return [...form.split('</form>')[0].matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [
      unescape(m[1]),
      unescape(m[2]),
    ]);
  }
  /** From the authorization URL to the parameters of the redirect that carries the code. */
  async authorize(authorizationUrl) {
    this.scopes.push(authorizationUrl.searchParams.get('scope'));
    let at = authorizationUrl.href;
    let resp = await this.get(at);
    if (resp.status === 302 && new URL(resp.headers.get('location'), at).pathname === `${basePath}/login`) {
      const login = new URL(resp.headers.get('location'), at);
      const page = await this.get(login.href);
      check(page.status === 200, `sign-in page: ${page.status}`);
      const done = await this.post(new URL(`${basePath}/login`, login).href, {
        username: user,
        password,
        next: login.searchParams.get('next'),
      });
      check(done.status === 303, `sign-in answers 303, got ${done.status}`);
      const cookie = (done.headers.getSetCookie() || []).find((c) => c.startsWith(`${COOKIE}=`));
      check(cookie, 'sign-in sets the session cookie');
      this.session = cookie.split(';')[0].slice(COOKIE.length + 1);
      at = new URL(done.headers.get('location'), login).href;
      resp = await this.get(at);
    }
    if (resp.status === 200) {
      const action = `${basePath}/oauth/authorize`;
      const fields = this.hidden(await resp.text(), action);
      this.consents += 1;
      resp = await this.post(new URL(action, at).href, [...fields, ['decision', 'approve']]);
      check(resp.status === 303, `approval answers 303, got ${resp.status}`);
    }
    const location = resp.headers.get('location') || '';
    check(location.startsWith(`${REDIRECT_URI}?`), `redirect to the client: ${location}`);
    const back = new URL(location);
    check(!back.searchParams.get('error'), `authorization error: ${location}`);
    // What the client application hands back: the callback's parameters (the SDK checks `iss`).
    return back.searchParams;
  }
}

const provider = new Provider();
const browser = new Browser();
const options = mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {};
let client;
let transport;

/** Connects, signing in when the server asks. */
async function connect() {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    client = new Client({ name: 'specwright-e2e-ts', version: '1.0.0' }, options);
    transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    try {
      await client.connect(transport);
      return;
    } catch (e) {
      check(e instanceof UnauthorizedError && provider.pending, `connect: ${e}`);
      const callback = await browser.authorize(provider.pending);
      provider.pending = null;
      await transport.finishAuth(callback);
    }
  }
  check(false, 'connected after signing in');
}

/** Calls a tool, stepping up when the server answers 403 insufficient_scope. */
async function call(name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (e) {
    check(e instanceof UnauthorizedError && provider.pending, `${name}: ${e}`);
    const callback = await browser.authorize(provider.pending);
    provider.pending = null;
    await transport.finishAuth(callback);
    await connect();
    return client.callTool({ name, arguments: args });
  }
}

await connect();
const tools = (await client.listTools()).tools.map((t) => t.name);
check(tools.includes('vault.store_credential'), `vault tools listed: ${tools}`);
check(browser.consents === 1, `one consent so far: ${browser.consents}`);
const listed = await call('vault.list_credentials', {});
check(!listed.isError, `a read token lists: ${JSON.stringify(listed)}`);
const key = `ts-oauth-${Math.random().toString(16).slice(2, 10)}`;
const stored = await call('vault.store_credential', { key, value: 'from-the-ts-client' });
check(!stored.isError, `store succeeded after step-up: ${JSON.stringify(stored)}`);
check(stored.structuredContent?.data?.key === key, `structured content of store: ${JSON.stringify(stored)}`);
check(browser.consents === 2, `the consent screen is shown again for the wider scope: ${browser.consents}`);
const scope = provider.saved.tokens.scope.split(' ');
check(scope.includes('vault:write'), `the stored token has vault:write: ${provider.saved.tokens.scope}`);
const version = transport.protocolVersion ?? client.getNegotiatedProtocolVersion?.() ?? null;
await client.close();
console.log(
  JSON.stringify({
    mode,
    protocol_version: version,
    tools: tools.length,
    consents: browser.consents,
    requested_scopes: browser.scopes,
    registrations: provider.registrations,
    stored_scope: provider.saved.tokens.scope,
  }),
);

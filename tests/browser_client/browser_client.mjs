// A browser-based MCP client in headless Chromium (playwright-core, Debian's chromium): the page
// tests/browser_client/app.html, served from an origin of its own, connects to the vault's MCP
// endpoint on another origin: the 401 challenge read through CORS, discovery, registration, a
// top-level redirect to sign in and consent, the code redeemed and tools listed and called with
// fetch. The same page served from an origin the server does not allow is refused by the browser.
//
//   node browser_client.mjs MCP_URL APP_ORIGIN STRANGER_ORIGIN USER PASSWORD
//
// Environment: SPECWRIGHT_PLAYWRIGHT_NODE_MODULES, CHROMIUM. Prints the page's results as one
// JSON line; exits 1 naming the step that failed.

import { createRequire } from 'node:module';
import path from 'node:path';

const [mcpUrl, app, stranger, user, password] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { chromium } = require(path.join(process.env.SPECWRIGHT_PLAYWRIGHT_NODE_MODULES, 'playwright-core'));
let step = 'starting';

async function result(page) {
  const el = page.locator('#result[data-done="true"]');
  await el.waitFor();
  return JSON.parse(await el.textContent());
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true });
try {
  const page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(15000);

  step = 'the page starts the flow and is sent to sign in';
  await page.goto(`${app}/?mcp=${encodeURIComponent(mcpUrl)}`);
  await page.waitForURL((u) => u.pathname.endsWith('/login'));

  step = 'sign in on the server';
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: /sign in/i }).click();

  step = 'approve on the consent screen';
  await page.getByRole('button', { name: 'Allow' }).click();

  step = 'back on the application, the code redeemed and the tools called';
  await page.waitForURL((u) => u.origin === app && u.pathname === '/callback');
  const allowed = await result(page);

  step = 'the same page from an origin the server does not allow';
  const other = await (await browser.newContext()).newPage();
  await other.goto(`${stranger}/?mcp=${encodeURIComponent(mcpUrl)}`);
  const refused = await result(other);
  console.log(JSON.stringify({ allowed, refused }));
} catch (e) {
  console.error(`FAILED at step "${step}": ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}

// The web console in a real headless browser: Debian's chromium driven by playwright-core.
//
//   node console.mjs BASE_URL USER PASSWORD OUTPUT_DIR
//
// BASE_URL is the server's public URL; when it has a path (a deployment under a prefix behind a
// reverse proxy), every page the browser lands on must be under that path.
//
// Environment: SPECWRIGHT_PLAYWRIGHT_NODE_MODULES (the node_modules folder holding playwright-core),
// CHROMIUM (default /usr/bin/chromium), CONSOLE_ADMIN_TOKEN (a vault:admin access token of the same
// user, to check through the API what the console did). The server holds folder /prod with the
// credential prod-db-password (whose secret is CONSOLE_CANARY) and grants (run by tests/tests/console.rs).
//
// Signs in, screenshots every console page into OUTPUT_DIR, creates a vault personal token and a
// prospector API token (each shown once, working, gone after a reload, revoked in the UI, then
// refused by the API), adds a folder grant, signs out. Exits 1 naming the step that failed.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const [base, user, password, outDir] = process.argv.slice(2);
if (!base || !user || !password || !outDir) {
  console.error('usage: node console.mjs BASE_URL USER PASSWORD OUTPUT_DIR');
  process.exit(2);
}
const modules = process.env.SPECWRIGHT_PLAYWRIGHT_NODE_MODULES;
if (!modules) {
  console.error('SPECWRIGHT_PLAYWRIGHT_NODE_MODULES is not set');
  process.exit(2);
}
// The public URL's path ('' at the root of a host): the sign-in page is `${basePath}/login`.
const basePath = new URL(base).pathname.replace(/\/$/, '');
const require = createRequire(import.meta.url);
const { chromium } = require(path.join(modules, 'playwright-core'));
const adminToken = process.env.CONSOLE_ADMIN_TOKEN || '';
const canary = process.env.CONSOLE_CANARY || '';
fs.mkdirSync(outDir, { recursive: true });

let step = 'starting';
const log = (msg) => console.log(`[console] ${msg}`);
function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function api(method, urlPath, token) {
  const resp = await fetch(base + urlPath, { method, headers: token ? { Authorization: `Bearer ${token}` } : {} });
  const text = await resp.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: resp.status, body };
}

const problems = []; // script errors, CSP violations, requests leaving the server
let page;

async function shot(name) {
  const file = path.join(outDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  log(`screenshot ${file}`);
}

// Every visible form control has a label (or an accessible name).
async function labelled() {
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
      .filter((el) => el.offsetParent !== null)
      .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.textContent.trim())
      .map((el) => el.outerHTML.slice(0, 120)));
  check(unlabelled.length === 0, `controls without a label: ${unlabelled.join(' | ')}`);
}

// Create a token in the section `kind` ('vault' or 'prospector'), returning the secret shown once.
async function createToken(kind, name, prefix) {
  const form = page.getByTestId(`${kind}-create-form`);
  await form.getByTestId(`${kind}-name`).fill(name);
  await form.getByTestId(`${kind}-create`).click();
  const secret = (await page.getByTestId(`${kind}-token-secret`).textContent()).trim();
  check(secret.startsWith(prefix), `the ${kind} secret shown is not a ${prefix} token: ${secret}`);
  // It is listed (by its prefix, never in full).
  const row = page.getByTestId(`${kind}-token-row`).filter({ hasText: name });
  await row.waitFor();
  check((await row.textContent()).includes(secret.slice(0, 8)), `the ${kind} token's row does not show its prefix`);
  check(!(await row.textContent()).includes(secret), `the ${kind} token's row shows the secret`);
  return secret;
}

async function reloadTokensPage() {
  await page.reload();
  await page.getByTestId('vault-token-list').waitFor();
  await page.getByTestId('prospector-token-list').waitFor();
}

async function revokeInUi(kind, name) {
  const row = page.getByTestId(`${kind}-token-row`).filter({ hasText: name });
  page.once('dialog', (d) => d.accept());
  await row.getByTestId(`${kind}-revoke`).click();
  await page.getByTestId(`${kind}-list-status`).filter({ hasText: 'revoked' }).waitFor();
  await row.waitFor({ state: 'detached' });
}

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-GB', timezoneId: 'UTC' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(base).origin });
    page = await context.newPage();
    page.setDefaultTimeout(15000);
    page.on('pageerror', (e) => problems.push(`script error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) problems.push(`console error: ${m.text()}`);
    });
    page.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(base) && !u.startsWith('data:')) problems.push(`request leaving the server: ${u}`);
    });

    step = 'an unsigned visit goes to the sign-in form';
    await page.goto(`${base}/console/`);
    check(new URL(page.url()).pathname === `${basePath}/login`, `expected the sign-in page, got ${page.url()}`);
    check(new URL(page.url()).searchParams.get('next') === '/console/', `next is not /console/: ${page.url()}`);
    await shot('01-sign-in');

    step = 'sign in';
    await page.getByLabel('User name').fill(user);
    await page.getByLabel('Password').fill(password);
    let sentOrigin = '(none)';
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url() === `${base}/login`) r.allHeaders().then((hs) => { sentOrigin = hs.origin || '(none)'; });
    });
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/$|\/login$/);
    if (page.url() !== `${base}/console/`) {
      const text = (await page.locator('main').innerText()).replace(/\s+/g, ' ').trim();
      throw new Error(`signing in led to ${page.url()}, not /console/: "${text}" (the browser sent Origin: ${sentOrigin})`);
    }
    const who = await page.getByTestId('overview-who').textContent();
    check(who.includes(user) && who.includes('acme'), `the overview does not name the user and tenant: ${who}`);
    check((await page.getByTestId('signed-in-as').textContent()).includes(user), 'the header does not name the user');
    await page.getByTestId('count-folders').filter({ hasText: /\d/ }).waitFor();
    await shot('02-overview');

    step = 'the folders page';
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Folders' }).click();
    await page.waitForURL(`${base}/console/folders`);
    await page.getByTestId('folder-row').first().waitFor();
    check(await page.getByRole('link', { name: 'Folders' }).first().getAttribute('aria-current') === 'page', 'the nav does not mark the current page');
    await labelled();
    await shot('03-folders');

    step = 'a folder with its credentials and grants';
    await page.getByRole('link', { name: '/prod', exact: true }).click();
    await page.waitForURL(/\/console\/folders\/[^/]+$/);
    const folderId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop());
    check((await page.getByTestId('folder-path').textContent()) === '/prod', 'the folder page is not /prod');
    await page.getByTestId('credential-row').filter({ hasText: 'prod-db-password' }).waitFor();
    await page.getByTestId('grant-row').filter({ hasText: 'bob' }).waitFor();
    await labelled();

    step = 'add a folder grant in the UI (keyboard only)';
    const grants = page.getByTestId('folder-grants');
    await grants.getByTestId('grant-principal').focus();
    await page.keyboard.type('dave');
    await page.keyboard.press('Tab'); // canRead (checked by default)
    await page.keyboard.press('Tab'); // canReveal
    await page.keyboard.press('Space');
    await grants.getByTestId('grant-principal').press('Enter'); // submits the form
    await page.getByTestId('folder-grants-status').filter({ hasText: 'dave now has' }).waitFor();
    await grants.getByTestId('grant-row').filter({ hasText: 'dave' }).waitFor();
    const listed = await api('GET', `/api/v1/folders/${encodeURIComponent(folderId)}/grants`, adminToken);
    check(listed.status === 200, `listing the folder's grants through the API: ${listed.status} ${JSON.stringify(listed.body)}`);
    const dave = listed.body.data.find((g) => g.principal === 'dave');
    check(dave, `the API does not list dave's grant: ${JSON.stringify(listed.body)}`);
    check(JSON.stringify([...dave.permissions].sort()) === JSON.stringify(['canRead', 'canReveal']), `dave's permissions: ${dave.permissions}`);
    await shot('04-folder');

    step = 'a credential: metadata and grants, never the secret';
    await page.getByRole('link', { name: 'prod-db-password', exact: true }).click();
    await page.waitForURL(`${base}/console/credentials/prod-db-password`);
    await page.getByTestId('credential-meta').waitFor();
    await page.getByTestId('credential-grants').getByTestId('grant-row').filter({ hasText: 'carol' }).waitFor();
    check(!canary || !(await page.content()).includes(canary), 'the credential page contains the secret');
    await shot('05-credential');

    step = 'the credentials list';
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Credentials' }).click();
    await page.getByTestId('credential-row').first().waitFor();
    await shot('06-credentials');

    step = 'the API tokens page';
    await page.getByRole('link', { name: 'Settings: API tokens' }).click();
    await page.waitForURL(`${base}/console/tokens`);
    await page.getByTestId('vault-token-list').waitFor();
    await page.getByTestId('prospector-token-list').waitFor();
    await labelled();
    await shot('07-tokens');

    step = 'create a vault personal token (vault:read): shown once';
    check(await page.getByTestId('vault-scope-vault:read').isChecked(), 'vault:read is not checked by default');
    const vaultSecret = await createToken('vault', 'console-test-read', 'swp_');
    await page.getByTestId('vault-copy').click();
    await page.getByTestId('vault-copy-status').filter({ hasText: /Copied|Selected/ }).waitFor();
    await shot('08-token-shown-once');

    step = 'the vault token works against the API';
    let r = await api('GET', '/api/v1/credentials', vaultSecret);
    check(r.status === 200, `GET /api/v1/credentials with the new token: ${r.status} ${JSON.stringify(r.body)}`);

    step = 'after a reload the vault secret is shown nowhere';
    await reloadTokensPage();
    await page.getByTestId('vault-token-row').filter({ hasText: 'console-test-read' }).waitFor();
    check(!(await page.content()).includes(vaultSecret), 'the page still contains the vault secret after a reload');
    check((await page.getByTestId('vault-new-token').count()) === 0, 'the secret box is still there after a reload');

    step = 'revoke the vault token in the UI; the API refuses it';
    await revokeInUi('vault', 'console-test-read');
    r = await api('GET', '/api/v1/credentials', vaultSecret);
    check(r.status === 401, `the revoked vault token got ${r.status}, not 401`);

    step = 'a prospector plan above the account is refused, with the API message shown';
    await page.getByTestId('prospector-name').fill('too-big');
    await page.getByTestId('prospector-plan').selectOption('team');
    await page.getByTestId('prospector-create').click();
    const refusal = page.getByTestId('prospector-form-status');
    await refusal.filter({ hasText: 'not created' }).waitFor();
    const refusalText = await refusal.textContent();
    check(/forbidden/.test(refusalText) && /plan/i.test(refusalText), `the refusal does not show the API's message: ${refusalText}`);
    check((await page.getByTestId('prospector-new-token').count()) === 0, 'a refused token shows a secret box');

    step = 'create a prospector API token: shown once';
    await page.getByTestId('prospector-plan').selectOption('starter');
    await page.getByTestId('prospector-expiry').selectOption('date');
    const inTenDays = new Date(Date.now() + 10 * 86400000).toISOString().slice(0, 10);
    await page.getByTestId('prospector-expiry-date').fill(inTenDays);
    const prospectorSecret = await createToken('prospector', 'console-test-crm', 'prs_');
    await shot('09-prospector-token-shown-once');

    step = 'the prospector token works against the API';
    r = await api('GET', '/v1/prospector/leads', prospectorSecret);
    check(r.status === 200, `GET /v1/prospector/leads with the new token: ${r.status} ${JSON.stringify(r.body)}`);

    step = 'after "Done" and a reload the prospector secret is shown nowhere';
    await page.getByTestId('prospector-done').click();
    check((await page.getByTestId('prospector-new-token').count()) === 0, '"Done" did not hide the secret');
    check(!(await page.content()).includes(prospectorSecret), 'the page still contains the prospector secret after "Done"');
    await reloadTokensPage();
    await page.getByTestId('prospector-token-row').filter({ hasText: 'console-test-crm' }).waitFor();
    check(!(await page.content()).includes(prospectorSecret), 'the page contains the prospector secret after a reload');
    await shot('10-tokens-listed');

    step = 'revoke the prospector token in the UI; the API refuses it';
    await revokeInUi('prospector', 'console-test-crm');
    r = await api('GET', '/v1/prospector/leads', prospectorSecret);
    check(r.status === 401, `the revoked prospector token got ${r.status}, not 401`);

    step = 'revoked vault tokens are listed on request';
    await page.getByTestId('vault-show-all').check();
    await page.getByTestId('vault-token-row').filter({ hasText: 'console-test-read' }).filter({ hasText: 'revoked' }).waitFor();
    await shot('11-tokens-revoked');

    step = 'connected applications: the approved application is listed, then revoked in the UI';
    await page.getByRole('link', { name: 'Connected applications' }).click();
    await page.waitForURL(`${base}/console/applications`);
    const appRow = page.getByTestId('application-row').filter({ hasText: 'console-test-app' });
    await appRow.waitFor();
    check((await appRow.textContent()).includes('registered'), 'the application is shown as registered');
    await shot('12-applications');
    page.once('dialog', (d) => d.accept());
    await appRow.getByTestId('revoke-application').click();
    await page.getByTestId('applications-status').filter({ hasText: 'revoked' }).waitFor();
    await appRow.waitFor({ state: 'detached' });

    step = 'an unknown console page says so';
    await page.goto(`${base}/console/nowhere`);
    await page.getByTestId('page-error').waitFor();

    step = 'sign out';
    await page.goto(`${base}/console/`);
    await page.getByTestId('sign-out').click();
    await page.waitForURL(/\/login$/);
    const session = await page.request.get(`${base}/console/session`);
    check(session.status() === 401, `/console/session after signing out: ${session.status()}`);
    await page.goto(`${base}/console/tokens`);
    check(new URL(page.url()).pathname === `${basePath}/login`, `after signing out /console/tokens shows ${page.url()}`);
    check(new URL(page.url()).searchParams.get('next') === '/console/tokens', `next is not /console/tokens: ${page.url()}`);

    step = 'no script errors, no CSP violations, nothing from the network';
    check(problems.length === 0, problems.join('\n'));
    log('all steps passed');
    console.log(JSON.stringify({ ok: true, screenshots: fs.readdirSync(outDir).filter((f) => f.endsWith('.png')).sort() }));
  } catch (e) {
    if (page) {
      const file = path.join(outDir, 'failure.png');
      await page.screenshot({ path: file, fullPage: true }).then(() => log(`the page at the failure: ${file} (${page.url()})`), () => {});
    }
    throw e;
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(`[console] FAILED at step "${step}": ${e.message}`);
  if (problems.length) console.error(`[console] also seen:\n${problems.join('\n')}`);
  process.exit(1);
});

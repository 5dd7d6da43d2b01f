// Smoke test of the generated TypeScript SDKs (openapi-typescript types + openapi-fetch) against a
// live Specwright server.
//
//   node smoke.js BASE_URL WRITE_TOKEN READ_TOKEN PROSPECTOR_TOKEN
//
// BASE_URL is the server's origin (http://127.0.0.1:8080); WRITE_TOKEN carries vault:write for a
// tenant administrator, READ_TOKEN only vault:read, PROSPECTOR_TOKEN prospector. Prints a one-line
// JSON summary, or names the failed expectation on standard error and exits 1. How it is
// type-checked, compiled and run: tsconfig.json and tests/tests/sdk.rs.
import {
  createApiClient as createProspectorClient,
  type ErrorResponse as ProspectorError,
} from "../../../../target/sdk/typescript/prospector/index.js";
import {
  createApiClient as createVaultClient,
  type ErrorResponse as VaultError,
} from "../../../../target/sdk/typescript/vault/index.js";

// The one Node global used; declared here so the program needs no @types/node (only the DOM
// library's fetch types, which openapi-fetch uses too).
declare const process: { argv: string[]; exitCode?: number };

const MIN_SCORE = 50;

class Failed extends Error {}

function ensure(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Failed(message);
}

function headerInt(headers: Headers, name: string): number {
  const value = headers.get(name);
  ensure(value !== null, `no ${name} header`);
  ensure(/^\d+$/.test(value), `${name} header ${JSON.stringify(value)} is not a whole number`);
  return Number(value);
}

async function smoke(base: string, write: string, read: string, prospectorToken: string) {
  const vaultUrl = `${base}/api/v1`;
  const key = `sdk-smoke-typescript-${Date.now()}`;

  // (a) The write token stores a credential, and the list shows it.
  const writer = createVaultClient(vaultUrl, write);
  const stored = await writer.POST("/credentials", { body: { key, value: "s3cret-from-typescript", tags: ["smoke"] } });
  ensure(stored.response.status === 201, `store_credential answered ${stored.response.status}, not 201: ${JSON.stringify(stored.error)}`);
  ensure(stored.data !== undefined, `store_credential: no body (${JSON.stringify(stored.error)})`);
  ensure(stored.data.data.key === key, `store_credential returned key ${stored.data.data.key}`);
  const listed = await writer.GET("/credentials", { params: { query: { per_page: 100 } } });
  ensure(listed.data !== undefined, `list_credentials answered ${listed.response.status}: ${JSON.stringify(listed.error)}`);
  ensure(listed.data.data.some((c) => c.key === key), `list_credentials does not show ${key}`);
  const credentialsTotal = listed.data.meta.total;

  // (b) The read token on a write call: a typed 403 naming the scope it needs.
  const reader = createVaultClient(vaultUrl, read);
  const denied = await reader.POST("/credentials", { body: { key: `${key}-denied`, value: "nope" } });
  ensure(denied.response.status === 403, `the read token's store_credential answered ${denied.response.status}`);
  ensure(denied.error !== undefined, "the 403 carries no error body");
  const forbidden: VaultError = denied.error;
  const forbiddenCode = forbidden.error.code;
  const required = forbidden.error.details.required;
  ensure(forbiddenCode === "auth/insufficient-scope", `403 code ${forbiddenCode}`);
  ensure(required === "vault:write", `403 details.required is ${JSON.stringify(required)}, not vault:write`);
  const challenge = denied.response.headers.get("www-authenticate") ?? "";
  ensure(
    challenge.includes('error="insufficient_scope"') && challenge.includes('scope="vault:write"'),
    `WWW-Authenticate ${JSON.stringify(challenge)} does not name insufficient_scope and vault:write`,
  );

  // (c) The prospector: a scan of the sample feed, then one filtered page of leads.
  const leads = createProspectorClient(`${base}/v1/prospector`, prospectorToken);
  const scan = await leads.POST("/leads/scan", { body: {} });
  ensure(scan.data !== undefined, `scan_leads answered ${scan.response.status}: ${JSON.stringify(scan.error)}`);
  const fetched = scan.data.data.sources.reduce((n, s) => n + s.fetched, 0);
  ensure(fetched > 0, `scan_leads fetched nothing: ${JSON.stringify(scan.data.data.sources)}`);
  const page = await leads.GET("/leads", { params: { query: { min_score: MIN_SCORE, page: 1, per_page: 5 } } });
  ensure(page.data !== undefined, `list_leads answered ${page.response.status}: ${JSON.stringify(page.error)}`);
  const meta = page.data.meta;
  ensure(meta.page === 1 && meta.per_page === 5, `list_leads meta ${JSON.stringify(meta)}: page 1, per_page 5 expected`);
  ensure(page.data.data.length <= 5, `list_leads returned ${page.data.data.length} items for per_page=5`);
  ensure(page.data.data.length === Math.min(meta.total, 5), `${page.data.data.length} items, meta.total ${meta.total}`);
  ensure(meta.total > 0, `no lead scores ${MIN_SCORE} or more after the scan: nothing to check`);
  const scores = page.data.data.map((lead) => lead.score.composite);
  ensure(scores.every((s) => s >= MIN_SCORE), `a lead under min_score ${MIN_SCORE}: ${JSON.stringify(scores)}`);

  // (e) Rate-limit headers, from the same response.
  const limit = headerInt(page.response.headers, "x-ratelimit-limit");
  const remaining = headerInt(page.response.headers, "x-ratelimit-remaining");
  const reset = headerInt(page.response.headers, "x-ratelimit-reset");
  const now = Math.floor(Date.now() / 1000);
  ensure(limit > 0 && remaining < limit, `X-RateLimit-Limit ${limit}, X-RateLimit-Remaining ${remaining}`);
  ensure(reset >= now - 1 && reset <= now + 86_400 + 60, `X-RateLimit-Reset ${reset} is not epoch seconds near ${now}`);

  // (d) min_score=150: the typed 422 naming the field.
  const invalid = await leads.GET("/leads", { params: { query: { min_score: 150 } } });
  ensure(invalid.response.status === 422, `list_leads(min_score=150) answered ${invalid.response.status}`);
  ensure(invalid.error !== undefined, "the 422 carries no error body");
  const validation: ProspectorError = invalid.error;
  const invalidCode = validation.error.code;
  const field = validation.error.details.field;
  ensure(invalidCode === "validation_error", `422 code ${invalidCode}, not validation_error`);
  ensure(field === "min_score", `422 details.field is ${JSON.stringify(field)}, not min_score`);

  return {
    sdk: "typescript",
    ok: true,
    credential: key,
    credentials_total: credentialsTotal,
    forbidden: { status: 403, code: forbiddenCode, required, www_authenticate: true },
    scan_fetched: fetched,
    leads: {
      min_score: MIN_SCORE,
      total: meta.total,
      page: meta.page,
      per_page: meta.per_page,
      returned: page.data.data.length,
      scores,
    },
    invalid: { status: 422, code: invalidCode, field },
    rate_limit: { limit, remaining, reset },
  };
}

const args = process.argv.slice(2);
if (args.length !== 4) {
  console.error("usage: node smoke.js BASE_URL WRITE_TOKEN READ_TOKEN PROSPECTOR_TOKEN");
  process.exitCode = 2;
} else {
  const [base = "", write = "", read = "", prospectorToken = ""] = args;
  try {
    console.log(JSON.stringify(await smoke(base.replace(/\/+$/, ""), write, read, prospectorToken)));
  } catch (e) {
    console.error(`typescript SDK smoke failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  }
}

"""The official Python MCP SDK (`mcp` on PyPI) signs in to the vault's MCP endpoint on its own.

Usage: python_oauth.py MCP_URL USERNAME PASSWORD

MCP_URL is the server's public URL followed by `/api/mcp`; when that public URL has a path (a
deployment under a prefix behind a reverse proxy), every page, form and redirect must stay under it.

No token is made beforehand: the SDK's `OAuthClientProvider` gets the 401 challenge, discovers
the Protected Resource Metadata and our authorization server's metadata, registers a client
(RFC 7591), and sends the user to our authorization endpoint with PKCE S256 and `resource`. A
headless "browser" (a plain HTTP client that keeps cookies and follows no redirect by itself)
plays the user: it signs in on our HTML form and approves the consent screen, then hands the
code, state and `iss` back to the SDK, which checks them and redeems the code. What this proves:

  a. the first call gets a `vault:read` token through sign-in and one consent, then lists and
     calls a read tool;
  b. a write tool with that token answers 403 `insufficient_scope`; the SDK steps up on its own
     within the same call (SEP-2350: it asks for the union `vault:read vault:write`), our consent
     screen is shown again because that scope set is new, and the retried call succeeds;
  c. a second connection with a new provider over the same token storage reuses the stored token:
     it lists and calls tools without any authorization.

Prints one JSON summary line; exits non-zero when anything differs from what a user expects.
"""

import asyncio
import base64
import json
import sys
import uuid
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

# Nothing listens here: the "browser" stops at the redirect to it and reads the code off the URL.
REDIRECT_URI = "http://127.0.0.1:47213/callback"
COOKIE = "specwright_session"


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")


class MemoryStorage:
    """The SDK's `TokenStorage`, in memory, recording what it was given."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        self.token_writes = 0
        self.registrations = 0

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens
        self.token_writes += 1

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info
        self.registrations += 1


class ConsentForm(HTMLParser):
    """The hidden fields and decision buttons of the form posting to `action` (the public URL's
    path followed by /oauth/authorize).

    `HTMLParser` unescapes attribute values (&amp; &quot; &lt; &gt; &#39;) itself.
    """

    def __init__(self, action):
        super().__init__(convert_charrefs=True)
        self.action = action
        self.found = False
        self.inside = False
        self.hidden: list[tuple[str, str]] = []
        self.decisions: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("method", "").lower() == "post" and a.get("action") == self.action
            self.found = self.found or self.inside
        elif self.inside and tag == "input" and a.get("type") == "hidden":
            self.hidden.append((a.get("name") or "", a.get("value") or ""))
        elif self.inside and tag == "button" and a.get("name") == "decision":
            self.decisions.append(a.get("value") or "")

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False


class Browser:
    """The user at a browser: signs in and approves, without script and without following redirects
    on its own, so every hop of our authorization server is seen (and checked)."""

    def __init__(self, base_path, username, password):
        self.base_path = base_path
        self.username = username
        self.password = password
        self.http = httpx2.AsyncClient(follow_redirects=False, timeout=httpx2.Timeout(30))
        self.session: str | None = None
        self.authorizations = 0
        self.logins = 0
        self.consents = 0
        self.requested_scopes: list[str] = []
        self.result: AuthorizationCodeResult | None = None

    def headers(self):
        return {"Cookie": f"{COOKIE}={self.session}"} if self.session else {}

    async def get(self, url):
        return await self.http.get(url, headers=self.headers())

    async def post(self, url, fields):
        """A form post (`fields` a dict or a list of pairs, so a repeated name such as `resource` stays)."""
        body = urlencode(list(fields.items()) if isinstance(fields, dict) else fields)
        # What a browser sends with a form of the page: its origin (scheme, host, port; no path).
        target = urlparse(url)
        headers = {
            **self.headers(),
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": f"{target.scheme}://{target.netloc}",
            "Sec-Fetch-Site": "same-origin",
        }
        return await self.http.post(url, content=body.encode(), headers=headers)

    async def sign_in(self, login_url):
        page = await self.get(login_url)
        action = f"{self.base_path}/login"
        check(page.status_code == 200, f"sign-in page: {page.status_code}")
        check(f'action="{action}"' in page.text, f"the sign-in form posts to {action}: {page.text[:500]}")
        next_path = parse_qs(urlparse(login_url).query).get("next", [""])[0]
        check(next_path.startswith("/oauth/authorize?"), f"the sign-in page returns to the request: {next_path}")
        done = await self.post(
            urljoin(login_url, action),
            {"username": self.username, "password": self.password, "next": next_path},
        )
        check(done.status_code == 303, f"sign-in answers 303, got {done.status_code}: {done.text[:300]}")
        cookie = done.cookies.get(COOKIE)
        check(cookie, f"sign-in sets {COOKIE}: {done.headers.get_list('set-cookie')}")
        self.session = cookie
        self.logins += 1
        back = urljoin(login_url, done.headers["location"])
        check(urlparse(back).path == f"{self.base_path}/oauth/authorize", f"sign-in leads back to the request: {back}")
        return back

    async def approve(self, page_url, page):
        action = f"{self.base_path}/oauth/authorize"
        form = ConsentForm(action)
        form.feed(page.text)
        fields = dict(form.hidden)
        check(form.found, f"the consent page has the approval form: {page.text[:500]}")
        check(fields.get("csrf"), "the consent form carries a CSRF token")
        check(sorted(form.decisions) == ["approve", "deny"], f"approve and deny buttons: {form.decisions}")
        self.consents += 1
        return await self.post(urljoin(page_url, action), [*form.hidden, ("decision", "approve")])

    async def authorize(self, authorization_url):
        """The SDK's `redirect_handler`: from the authorization URL to the redirect carrying the code."""
        self.authorizations += 1
        self.requested_scopes.append(parse_qs(urlparse(authorization_url).query).get("scope", [""])[0])
        url = authorization_url
        resp = await self.get(url)
        if resp.status_code == 302 and urlparse(resp.headers["location"]).path == f"{self.base_path}/login":
            url = await self.sign_in(urljoin(url, resp.headers["location"]))
            resp = await self.get(url)
        if resp.status_code == 200:
            resp = await self.approve(url, resp)
            check(resp.status_code == 303, f"approval answers 303, got {resp.status_code}: {resp.text[:300]}")
        else:
            check(resp.status_code == 302, f"an earlier consent redirects at once, got {resp.status_code}: {resp.text[:300]}")
        location = resp.headers.get("location", "")
        check(location.startswith(REDIRECT_URI + "?"), f"redirect to the client: {location}")
        query = parse_qs(urlparse(location).query)
        check("error" not in query, f"authorization error: {query}")
        one = lambda k: query.get(k, [None])[0]  # noqa: E731
        self.result = AuthorizationCodeResult(code=one("code"), state=one("state"), iss=one("iss"))

    async def callback(self):
        """The SDK's `callback_handler`: what the redirect to the client carried."""
        result, self.result = self.result, None
        check(result is not None, "the callback follows a completed authorization")
        return result


def claims(token):
    """The access token's claims (read only to report; the server verifies them)."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def connect(url, storage, browser):
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="specwright-e2e", redirect_uris=[REDIRECT_URI], scope="vault:read"
        ),
        storage=storage,
        redirect_handler=browser.authorize,
        callback_handler=browser.callback,
    )
    http = httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30, read=60))
    return http, Client(streamable_http_client(url, http_client=http))


async def main(url, username, password):
    storage = MemoryStorage()
    path = urlparse(url).path.rstrip("/")
    check(path.endswith("/api/mcp"), f"MCP_URL ends with /api/mcp: {url}")
    browser = Browser(path[: -len("/api/mcp")], username, password)
    summary = {}

    # a. No token: sign in, consent to vault:read, then list and read.
    http, client = connect(url, storage, browser)
    async with http, client as c:
        tools = await c.list_tools()
        names = sorted(t.name for t in tools.tools)
        summary["tools"] = len(names)
        check({"vault.list_credentials", "vault.store_credential"} <= set(names), f"vault tools listed: {names}")
        check(browser.authorizations == 1 and browser.consents == 1, "one authorization with one consent")
        check(browser.requested_scopes == ["vault:read"], f"first request asks vault:read: {browser.requested_scopes}")
        check("vault:write" not in storage.tokens.scope.split(), f"a read token first: {storage.tokens.scope}")
        listed = await c.call_tool("vault.list_credentials", {})
        check(not listed.is_error, f"a read token lists: {listed}")

        # b. A write tool: 403 insufficient_scope, the SDK steps up inside this call and retries.
        key = f"py-oauth-{uuid.uuid4().hex[:8]}"
        stored = await c.call_tool("vault.store_credential", {"key": key, "value": "from-python-oauth"})
        check(not stored.is_error, f"store succeeded after step-up: {stored}")
        check(stored.structured_content["data"]["key"] == key, f"structured content of store: {stored}")
        check(browser.authorizations == 2, f"a second authorization (step-up): {browser.authorizations}")
        check(browser.consents == 2, f"the consent screen is shown again for the new scope set: {browser.consents}")
        asked = set(browser.requested_scopes[1].split())
        check(asked == {"vault:read", "vault:write"}, f"step-up asks the union: {browser.requested_scopes[1]!r}")
        granted = set(storage.tokens.scope.split())
        check({"vault:read", "vault:write"} <= granted, f"the stored token has vault:write: {storage.tokens.scope}")
        listed = await c.call_tool("vault.list_credentials", {})
        check(not listed.is_error, f"the stepped-up token still reads: {listed}")
        keys = [item["key"] for item in listed.structured_content["data"]]
        check(key in keys, f"the stored credential is listed: {keys}")
    summary["stored"] = key

    # c. A new connection and provider over the same storage: no authorization at all.
    before = browser.authorizations
    http, client = connect(url, storage, browser)
    async with http, client as c:
        again = await c.list_tools()
        check(len(again.tools) == summary["tools"], "the second connection lists the same tools")
        listed = await c.call_tool("vault.list_credentials", {})
        check(not listed.is_error, f"the second connection reads: {listed}")
    await browser.http.aclose()
    check(browser.authorizations == before, "the second connection reused the stored token")
    check(storage.registrations == 1, f"one client registration for everything: {storage.registrations}")

    token = claims(storage.tokens.access_token)
    aud = token["aud"] if isinstance(token["aud"], list) else [token["aud"]]
    check(url.rstrip("/") in aud, f"the token's audience names the MCP endpoint: {aud}")
    summary.update(
        {
            "consents": browser.consents,
            "authorizations": browser.authorizations,
            "second_connection_authorizations": browser.authorizations - before,
            "logins": browser.logins,
            "registrations": storage.registrations,
            "requested_scopes": browser.requested_scopes,
            "stored_scope": storage.tokens.scope,
            "audience": aud,
        }
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    asyncio.run(main(*sys.argv[1:4]))

"""Drives the vault's MCP endpoint with the official Python SDK (`mcp` on PyPI).

Usage: python_client.py URL WRITE_TOKEN READ_TOKEN MODE   (MODE: auto | legacy)

With the write token: list tools, store a credential, lease it, redeem the lease, check the
structured results. With the read token: a write tool must fail with our JSON-RPC code. Prints one
JSON summary line; exits non-zero when anything differs from what a user expects.
"""

import asyncio
import json
import sys
import uuid

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

INSUFFICIENT_SCOPE = -31403


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")


async def session(url, token, mode):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=60))
    return http, Client(streamable_http_client(url, http_client=http), mode=mode)


async def main(url, write_token, read_token, mode):
    summary = {"mode": mode}
    http, client = await session(url, write_token, mode)
    async with http, client as c:
        tools = await c.list_tools()
        names = sorted(t.name for t in tools.tools)
        summary["tools"] = len(names)
        check(len(names) == 10, f"ten tools, got {names}")
        for t in tools.tools:
            check("SCOPE: vault:" in (t.description or ""), f"{t.name} has a SCOPE line")
        key = f"py-{uuid.uuid4().hex[:8]}"
        stored = await c.call_tool("vault.store_credential", {"key": key, "value": "from-python"})
        check(not stored.is_error, f"store succeeded: {stored}")
        check(stored.structured_content["data"]["key"] == key, "structured content of store")
        lease = await c.call_tool("vault.lease_credential", {"credential_key": key, "ttl_seconds": 60})
        check(not lease.is_error, f"lease succeeded: {lease}")
        lease_id = lease.structured_content["data"]["id"]
        secret = await c.call_tool("vault.read_credential", {"lease_id": lease_id})
        check(not secret.is_error and secret.structured_content["data"]["value"] == "from-python", f"redeem: {secret}")
        again = await c.call_tool("vault.read_credential", {"lease_id": lease_id})
        check(again.is_error and again.structured_content["error"]["code"] == "lease/unavailable", f"second redeem is a tool error: {again}")
        summary["stored"] = key
    http, client = await session(url, read_token, mode)
    async with http, client as c:
        listed = await c.call_tool("vault.list_credentials", {})
        check(not listed.is_error, "a read token lists")
        try:
            await c.call_tool("vault.store_credential", {"key": "nope", "value": "x"})
            raise SystemExit("FAILED: a write tool with a read token must fail")
        except MCPError as e:
            check(e.code == INSUFFICIENT_SCOPE, f"our JSON-RPC code, got {e.code}: {e}")
            summary["forbidden_code"] = e.code
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))

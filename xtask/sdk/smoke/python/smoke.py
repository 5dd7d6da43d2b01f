"""Smoke test of the generated Python SDKs (openapi-python-client) against a live Specwright server.

    python smoke.py BASE_URL WRITE_TOKEN READ_TOKEN PROSPECTOR_TOKEN

BASE_URL is the server's origin (``http://127.0.0.1:8080``); WRITE_TOKEN carries ``vault:write``
for a tenant administrator, READ_TOKEN only ``vault:read``, PROSPECTOR_TOKEN ``prospector``.
The packages ``specwright_vault_client`` and ``specwright_prospector_client`` must be importable:
put ``target/sdk/python/vault`` and ``target/sdk/python/prospector`` on PYTHONPATH, and run it
with the interpreter ``cargo xtask sdk`` installs (``target/sdk-tools/python/bin/python``, which
has httpx, attrs and python-dateutil). Prints a one-line JSON summary and exits 0, or names the
failed expectation on standard error and exits 1.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from http import HTTPStatus

from specwright_prospector_client import AuthenticatedClient as ProspectorClient
from specwright_prospector_client.api.leads import list_leads, scan_leads
from specwright_prospector_client.models import ErrorResponse as ProspectorError
from specwright_prospector_client.models import LeadPage, ScanLeadsInputBody, ScanReportEnvelope
from specwright_vault_client import AuthenticatedClient as VaultClient
from specwright_vault_client.api.credentials import list_credentials, store_credential
from specwright_vault_client.models import CredentialEnvelope, CredentialSummaryPage, StoreCredentialInput
from specwright_vault_client.models import ErrorResponse as VaultError

MIN_SCORE = 50.0


class Failed(Exception):
    """An expectation the server's answer did not meet."""


def ensure(cond: object, message: str) -> None:
    if not cond:
        raise Failed(message)


def typed_error(response, status, error_type, what):
    """The typed error body of `response`, which must have answered `status`."""
    ensure(response.status_code == status, f"{what} answered {response.status_code}, not {int(status)}")
    ensure(isinstance(response.parsed, error_type), f"the {int(status)} is not a typed ErrorResponse: {response.parsed!r}")
    return response.parsed.error


def header_int(headers: Mapping[str, str], name: str) -> int:
    value = headers.get(name)
    ensure(value is not None, f"no {name} header")
    assert value is not None
    ensure(value.isdigit(), f"{name} header {value!r} is not a whole number")
    return int(value)


def smoke(base: str, write: str, read: str, prospector_token: str) -> dict[str, object]:
    vault_url = f"{base}/api/v1"
    key = f"sdk-smoke-python-{time.time_ns()}"

    # (a) The write token stores a credential, and the list shows it.
    with VaultClient(base_url=vault_url, token=write, raise_on_unexpected_status=True) as writer:
        stored = store_credential.sync_detailed(
            client=writer, body=StoreCredentialInput(key=key, value="s3cret-from-python", tags=["smoke"])
        )
        ensure(stored.status_code == HTTPStatus.CREATED, f"store_credential answered {stored.status_code}, not 201: {stored.content!r}")
        ensure(isinstance(stored.parsed, CredentialEnvelope), f"store_credential parsed as {stored.parsed!r}")
        assert isinstance(stored.parsed, CredentialEnvelope)
        ensure(stored.parsed.data.key == key, f"store_credential returned key {stored.parsed.data.key}")
        listed = list_credentials.sync(client=writer, per_page=100)
        ensure(isinstance(listed, CredentialSummaryPage), f"list_credentials gave {listed!r}")
        assert isinstance(listed, CredentialSummaryPage)
        ensure(any(c.key == key for c in listed.data), f"list_credentials does not show {key}")
        credentials_total = listed.meta.total

    # (b) The read token on a write call: a typed 403 naming the scope it needs.
    with VaultClient(base_url=vault_url, token=read, raise_on_unexpected_status=True) as reader:
        denied = store_credential.sync_detailed(
            client=reader, body=StoreCredentialInput(key=f"{key}-denied", value="nope")
        )
    denied_error = typed_error(denied, HTTPStatus.FORBIDDEN, VaultError, "the read token's store_credential")
    forbidden_code = denied_error.code.value
    required = denied_error.details.required
    ensure(forbidden_code == "auth/insufficient-scope", f"403 code {forbidden_code}")
    ensure(required == "vault:write", f"403 details.required is {required!r}, not vault:write")
    challenge = denied.headers.get("www-authenticate", "")
    ensure(
        'error="insufficient_scope"' in challenge and 'scope="vault:write"' in challenge,
        f"WWW-Authenticate {challenge!r} does not name insufficient_scope and vault:write",
    )

    with ProspectorClient(
        base_url=f"{base}/v1/prospector", token=prospector_token, raise_on_unexpected_status=True
    ) as leads:
        # (c) A scan of the sample feed, then one filtered page of leads.
        scan = scan_leads.sync(client=leads, body=ScanLeadsInputBody())
        ensure(isinstance(scan, ScanReportEnvelope), f"scan_leads gave {scan!r}")
        assert isinstance(scan, ScanReportEnvelope)
        fetched = sum(s.fetched for s in scan.data.sources)
        ensure(fetched > 0, f"scan_leads fetched nothing: {scan.data.sources!r}")
        page_resp = list_leads.sync_detailed(client=leads, min_score=MIN_SCORE, page=1, per_page=5)
        page = page_resp.parsed
        ensure(isinstance(page, LeadPage), f"list_leads answered {page_resp.status_code}: {page!r}")
        assert isinstance(page, LeadPage)
        meta = page.meta
        ensure(meta.page == 1 and meta.per_page == 5, f"list_leads meta {meta!r}: page 1, per_page 5 expected")
        ensure(len(page.data) <= 5, f"list_leads returned {len(page.data)} items for per_page=5")
        ensure(len(page.data) == min(meta.total, 5), f"{len(page.data)} items, meta.total {meta.total}")
        ensure(meta.total > 0, f"no lead scores {MIN_SCORE} or more after the scan: nothing to check")
        scores = [lead.score.composite for lead in page.data]
        ensure(all(s >= MIN_SCORE for s in scores), f"a lead under min_score {MIN_SCORE}: {scores}")

        # (e) Rate-limit headers, from the same response.
        limit = header_int(page_resp.headers, "x-ratelimit-limit")
        remaining = header_int(page_resp.headers, "x-ratelimit-remaining")
        reset = header_int(page_resp.headers, "x-ratelimit-reset")
        now = int(time.time())
        ensure(limit > 0 and remaining < limit, f"X-RateLimit-Limit {limit}, X-RateLimit-Remaining {remaining}")
        ensure(now - 1 <= reset <= now + 86_400 + 60, f"X-RateLimit-Reset {reset} is not epoch seconds near {now}")

        # (d) min_score=150: the typed 422 naming the field.
        invalid = list_leads.sync_detailed(client=leads, min_score=150)
    invalid_error = typed_error(invalid, HTTPStatus.UNPROCESSABLE_ENTITY, ProspectorError, "min_score=150")
    invalid_code = invalid_error.code.value
    field = invalid_error.details.field
    ensure(invalid_code == "validation_error", f"422 code {invalid_code}, not validation_error")
    ensure(field == "min_score", f"422 details.field is {field!r}, not min_score")

    return {
        "sdk": "python",
        "ok": True,
        "credential": key,
        "credentials_total": credentials_total,
        "forbidden": {"status": 403, "code": forbidden_code, "required": required, "www_authenticate": True},
        "scan_fetched": fetched,
        "leads": {
            "min_score": MIN_SCORE,
            "total": meta.total,
            "page": meta.page,
            "per_page": meta.per_page,
            "returned": len(page.data),
            "scores": scores,
        },
        "invalid": {"status": 422, "code": invalid_code, "field": field},
        "rate_limit": {"limit": limit, "remaining": remaining, "reset": reset},
    }


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print("usage: smoke.py BASE_URL WRITE_TOKEN READ_TOKEN PROSPECTOR_TOKEN", file=sys.stderr)
        return 2
    try:
        summary = smoke(argv[1].rstrip("/"), argv[2], argv[3], argv[4])
    except Failed as e:
        print(f"python SDK smoke failed: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a transport or decoding error: the same one-line report
        print(f"python SDK smoke failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(summary, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

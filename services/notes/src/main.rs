//! `notes`: serves the example notes service alone, with everything the platform gives it (the
//! embedded authorization server, PRM, MCP, docs, rate limits, audit). Settings come from the
//! environment: `NOTES_ADDR` (default 127.0.0.1:8090), `NOTES_DATA_DIR` (default `notes-data`),
//! `NOTES_PUBLIC_URL`, `DATABASE_URL` (PostgreSQL; default SQLite in the data directory) and
//! `REDIS_URL` (shared rate limits), `NOTES_METRICS_ADDR` (Prometheus metrics, off when unset),
//! `NOTES_LOG_FORMAT` (`text`, `json`, or `auto`: text on a terminal, JSON otherwise). SIGTERM or SIGINT stops it after the requests in flight finish.
//! `notes token TENANT SCOPE` prints a token of the data directory's signing key for trying it
//! out; `notes conformance --url URL` checks a running notes server against the spec (the
//! conformance kit, with tokens of `NOTES_DATA_DIR`'s signing key).

fn main() -> std::process::ExitCode {
    notes::cli::main()
}

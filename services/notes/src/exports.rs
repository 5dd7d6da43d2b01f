//! Exports of a tenant's notes as CSV: an asynchronous job. `create_export` records the job and
//! answers `202` with its status resource; a task writes the file into a platform blob, page by
//! page (memory holds a page, not the export), then marks the job done in the transaction that
//! keeps the blob. A job carries a lease (`claimed_until`): when its process stops before it is
//! done, the next start of any process, or the next read of its status after the lease, takes
//! it over, so a restart loses none.

use runtime::OperationFault;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Bytes;
use futures_util::StreamExt;
use notes_api::notes::{errors, models, operations};
use runtime::Context;
use runtime::blobs::Blobs;
use runtime::sql::{Arg, Sql};
use runtime::store::{Nullable, Store, now_ms};
use sqlx::Row;
use support::Problem;

use crate::rows::{COLUMNS, note, tags_of, time};
use crate::state::Notes;

/// How long a process holds a job it writes before another may take it over.
const LEASE_MS: i64 = 5 * 60 * 1000;

/// Notes read per page while writing.
const PAGE: i64 = 500;

/// The largest export written (a tenant with more notes gets a failed export, not a full disk).
const LIMIT: u64 = 1 << 30;

/// What a client waits before asking for the status again.
const RETRY_AFTER: i64 = 1;

fn problem_missing(id: &str) -> Problem {
    Problem::new(format!("there is no export {id}")).with("id", id)
}

impl Notes {
    pub(crate) async fn start_export(
        &self,
        cx: &mut Context,
        input: models::CreateExportInput,
    ) -> Result<models::ExportStarted, errors::CreateExportError> {
        let op = cx.op;
        // Over MCP, for a client that polls tasks, the call goes on as a task: before anything
        // is written, as a task outlives its request's transaction.
        let task = cx.background().await;
        let id = format!("export_{}", uuid::Uuid::now_v7().simple());
        cx.target(id.clone());
        let (tx, caller, _) = cx.parts::<errors::CreateExportError>().await?;
        let recorded = sqlx::query(
            "INSERT INTO note_exports (tenant_id, id, state, only_state, created_at, claimed_until) \
             VALUES ($1, $2, 'pending', $3, $4, $5)",
        )
        .bind(caller.tenant.as_str())
        .bind(id.as_str())
        .bind(Nullable(input.state.map(|s| s.as_str().to_string())))
        .bind(now_ms())
        .bind(now_ms() + LEASE_MS)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault("recording the export", e))
        .map(|_| models::ExportStarted {
            id: id.clone(),
            state: models::ExportState::Pending,
            // Relative to the request's URL (`…/exports`), so it holds behind a proxy prefix.
            location: format!("exports/{id}"),
            retry_after: RETRY_AFTER,
        });
        let started = recorded?;
        // Claimed at its insert: this process writes it.
        let (notes, tenant) = (self.clone(), cx.caller.tenant.clone());
        if !task {
            cx.on_commit(move || {
                tokio::spawn(notes.write_export(tenant, id));
            });
            return Ok(started);
        }
        // The task: the export is committed now and written while the task waits, its progress
        // the notes written so far; it ends with the export's outcome.
        cx.tx.commit_step::<errors::CreateExportError>().await?;
        let count = Arc::new(AtomicU64::new(0));
        let mut writing = tokio::spawn(notes.write_counting(tenant.clone(), id.clone(), count.clone()));
        loop {
            tokio::select! {
                _ = &mut writing => break,
                _ = tokio::time::sleep(std::time::Duration::from_millis(250)) => {
                    let n = count.load(Ordering::Relaxed);
                    cx.progress(n as f64, None, Some(&format!("{n} notes written"))).await;
                }
            }
        }
        let state = sqlx::query("SELECT state FROM note_exports WHERE tenant_id = $1 AND id = $2")
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_one(self.store.readers())
            .await
            .map_err(|e| op.fault("reading the export's outcome", e))?;
        Ok(models::ExportStarted { state: state_of(&state.get::<String, _>(0)), ..started })
    }

    pub(crate) async fn export_status(
        &self,
        cx: &mut Context,
        input: models::ExportRef,
    ) -> Result<models::NoteExport, errors::GetExportError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::GetExportError>().await?;
        let row = sqlx::query(
            "SELECT state, created_at, finished_at, notes, size, claimed_until FROM note_exports \
             WHERE tenant_id = $1 AND id = $2",
        )
        .bind(caller.tenant.as_str())
        .bind(input.id.as_str())
        .fetch_optional(&mut **tx)
        .await;
        let mut orphaned = false;
        let found = match row {
            Ok(Some(row)) => {
                let state = state_of(&row.get::<String, _>(0));
                orphaned = state == models::ExportState::Pending && row.get::<i64, _>(5) < now_ms();
                Ok(models::NoteExport {
                    id: input.id.clone(),
                    state,
                    created_at: time(row.get(1)),
                    finished_at: row.get::<Option<i64>, _>(2).map(time),
                    notes: row.get(3),
                    size: row.get(4),
                    // Relative to this export's URL.
                    download: (state == models::ExportState::Done).then(|| format!("{}/file", input.id)),
                })
            }
            Ok(None) => Err(errors::GetExportError::NotFound(problem_missing(&input.id))),
            Err(e) => Err(op.fault("reading the export", e)),
        };
        let status = found?;
        if orphaned {
            // Its process stopped before finishing: take it over.
            tokio::spawn(self.clone().take_over(cx.caller.tenant.clone(), input.id));
        }
        Ok(status)
    }

    pub(crate) async fn export_file(
        &self,
        cx: &mut Context,
        input: models::DownloadExportInput,
    ) -> Result<support::File, errors::DownloadExportError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::DownloadExportError>().await?;
        let row = sqlx::query("SELECT state, blob_id FROM note_exports WHERE tenant_id = $1 AND id = $2")
            .bind(caller.tenant.as_str())
            .bind(input.id.as_str())
            .fetch_optional(&mut **tx)
            .await;
        let found = match row {
            Ok(Some(row)) => match (row.get::<String, _>(0), row.get::<Option<String>, _>(1)) {
                (state, Some(blob)) if state == "done" => Ok(blob),
                (state, _) => Err(errors::DownloadExportError::NotReady(
                    Problem::new(format!("export {} is {state}", input.id)).with("state", state),
                )),
            },
            Ok(None) => Err(errors::DownloadExportError::NotFound(problem_missing(&input.id))),
            Err(e) => Err(op.fault("reading the export", e)),
        };
        let blob = found?;
        // The file is read through the store: the read's transaction ends first.
        cx.tx.end_read::<errors::DownloadExportError>().await?;
        match self.blobs.file(&cx.caller.tenant, &blob, "text/csv").await {
            Ok(Some(file)) => Ok(file.named(format!("notes-{}.csv", input.id))),
            Ok(None) => Err(errors::DownloadExportError::NotFound(problem_missing(&input.id))),
            Err(e) => Err(op.fault("reading the export's file", e)),
        }
    }

    /// Takes over the jobs whose process stopped before finishing them (at start).
    pub(crate) async fn resume_exports(self) {
        let rows = sqlx::query("SELECT tenant_id, id FROM note_exports WHERE state = 'pending' AND claimed_until < $1")
            .bind(now_ms())
            .fetch_all(self.store.readers())
            .await;
        match rows {
            Ok(rows) => {
                for row in rows {
                    tokio::spawn(self.clone().take_over(row.get(0), row.get(1)));
                }
            }
            Err(e) => tracing::warn!("looking for exports to resume: {e}"),
        }
    }

    /// Claims job `id` if its lease has run out, and writes it.
    async fn take_over(self, tenant: String, id: String) {
        let claimed = async {
            let mut tx = self.store.begin().await?;
            let done = sqlx::query(
                "UPDATE note_exports SET claimed_until = $1 \
                 WHERE tenant_id = $2 AND id = $3 AND state = 'pending' AND claimed_until < $4",
            )
            .bind(now_ms() + LEASE_MS)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(done.rows_affected() == 1)
        };
        match claimed.await {
            Ok(true) => {
                tracing::info!(export = id, "taking over an export whose process stopped");
                self.write_export(tenant, id).await;
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(export = id, "claiming an export: {e}"),
        }
    }

    /// Writes job `id` (claimed by this process) and records how it ended.
    async fn write_export(self, tenant: String, id: String) {
        self.write_counting(tenant, id, Arc::default()).await;
    }

    /// [`Notes::write_export`], counting the notes written into `count` as it goes.
    async fn write_counting(self, tenant: String, id: String, count: Arc<AtomicU64>) {
        let only = sqlx::query("SELECT only_state FROM note_exports WHERE tenant_id = $1 AND id = $2")
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional(self.store.readers())
            .await;
        let only: Option<String> = match only {
            Ok(Some(row)) => row.get(0),
            Ok(None) => return,
            Err(e) => {
                // The lease runs out and a later read of its status, or the next start, retries.
                tracing::warn!(export = id, "reading an export job: {e}");
                return;
            }
        };
        let csv = csv_pages(self.store.clone(), tenant.clone(), only, count.clone());
        let written = self.blobs.write(&tenant, csv, LIMIT).await;
        let ended = async {
            let mut tx = self.store.begin().await?;
            let (state, blob) = match &written {
                Ok(blob) => ("done", Some(blob)),
                Err(e) => {
                    tracing::warn!(export = id, "writing an export failed: {e}");
                    ("failed", None)
                }
            };
            // Only a job still pending ends: a process that took it over may have finished it.
            let ended = sqlx::query(
                "UPDATE note_exports SET state = $1, finished_at = $2, notes = $3, size = $4, blob_id = $5 \
                 WHERE tenant_id = $6 AND id = $7 AND state = 'pending'",
            )
            .bind(state)
            .bind(now_ms())
            .bind(Nullable(blob.map(|_| i64::try_from(count.load(Ordering::Relaxed)).unwrap_or(i64::MAX))))
            .bind(Nullable(blob.map(|b| i64::try_from(b.size).unwrap_or(i64::MAX))))
            .bind(Nullable(blob.map(|b| b.id.clone())))
            .bind(tenant.as_str())
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
            if let Some(blob) = blob
                && ended.rows_affected() == 1
            {
                Blobs::keep(&mut tx, &tenant, &blob.id).await?;
            }
            tx.commit().await?;
            Ok::<_, sqlx::Error>(ended.rows_affected() == 1)
        };
        match ended.await {
            // Its status changed outside any call: the export's subscribers are told here.
            Ok(true) => self.mcp_changes.committed(tenant, &operations::GET_EXPORT, vec![("id", id)]),
            Ok(false) => {}
            // The job stays pending: its lease runs out and it is written again.
            Err(e) => tracing::warn!(export = id, "recording the end of an export: {e}"),
        }
    }
}

/// An export's state as stored.
fn state_of(word: &str) -> models::ExportState {
    match word {
        "done" => models::ExportState::Done,
        "failed" => models::ExportState::Failed,
        _ => models::ExportState::Pending,
    }
}

/// The CSV of a tenant's notes (only those in `only` state, when given), oldest first: a header
/// line, then one page of notes per item, each page read in a read-only transaction of its own.
fn csv_pages(
    store: Store,
    tenant: String,
    only: Option<String>,
    count: Arc<AtomicU64>,
) -> impl futures_util::Stream<Item = Result<Bytes, sqlx::Error>> + Send {
    let header = Bytes::from_static(b"id,title,state,tags,created_at,due\r\n");
    let first = futures_util::stream::once(async move { Ok(header) });
    let pages = futures_util::stream::unfold(Some((i64::MIN, String::new())), move |cursor| {
        let (store, tenant, only, count) = (store.clone(), tenant.clone(), only.clone(), count.clone());
        async move {
            let (after_at, after_id) = cursor?;
            let page = async {
                let mut tx = store.begin_read().await?;
                let mut q = Sql::new(&format!("SELECT {COLUMNS} FROM notes WHERE tenant_id = $1"));
                q.args.push(Arg::text(tenant.clone()));
                if let Some(state) = &only {
                    q.push(" AND state = ?", Arg::text(state.clone()));
                }
                q.push(" AND (created_at > ?", Arg::Int(after_at));
                q.push(" OR (created_at = ?", Arg::Int(after_at));
                q.push(" AND id > ?))", Arg::text(after_id));
                q.push(" ORDER BY created_at, id LIMIT ?", Arg::Int(PAGE));
                let rows = q.query().fetch_all(&mut *tx).await?;
                let mut text = String::new();
                let mut last = None;
                for row in &rows {
                    let id: String = row.get(0);
                    let n = note(row, tags_of(&mut tx, &tenant, &id).await?)?;
                    let fields = [
                        n.id.clone(),
                        n.title.clone(),
                        n.state.as_str().to_string(),
                        n.tags.join(" "),
                        n.created_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                        n.due.map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)).unwrap_or_default(),
                    ];
                    text.push_str(&fields.iter().map(|f| cell(f)).collect::<Vec<_>>().join(","));
                    text.push_str("\r\n");
                    last = Some((n.created_at.timestamp_millis(), n.id));
                }
                tx.commit().await?;
                count.fetch_add(rows.len() as u64, Ordering::Relaxed);
                Ok::<_, sqlx::Error>((text, last, rows.len() as i64 == PAGE))
            };
            match page.await {
                Ok((_, None, _)) => None,
                Ok((text, last, full)) => Some((Ok(Bytes::from(text)), if full { last } else { None })),
                Err(e) => Some((Err(e), None)),
            }
        }
    });
    first.chain(pages)
}

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes
/// doubled. A field a spreadsheet would run as a formula (starting `=`, `+`, `-`, `@`, a tab or
/// a carriage return) is prefixed with `'`, as OWASP's CSV-injection advice says.
fn cell(value: &str) -> String {
    let mut v = value.to_string();
    if v.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        v.insert(0, '\'');
    }
    if v.contains([',', '"', '\n', '\r']) { format!("\"{}\"", v.replace('"', "\"\"")) } else { v }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_are_quoted_and_formulas_defused() {
        assert_eq!(super::cell("plain"), "plain");
        assert_eq!(super::cell("a,b"), "\"a,b\"");
        assert_eq!(super::cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(super::cell("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(super::cell("-1,2"), "\"'-1,2\"");
    }
}

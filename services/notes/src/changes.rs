//! The change stream: every create, change and delete of a note is numbered per tenant in the
//! transaction that makes it (`record`), and `watch_notes` streams the numbered changes as
//! Server-Sent Events, resuming after `Last-Event-ID`. A write wakes the streams of this process
//! at once; streams of other processes (several servers on one PostgreSQL) see it within a
//! second, when they look again.

use runtime::OperationFault;
use std::time::Duration;

use notes_api::notes::{errors, models};
use runtime::Context;
use runtime::store::{Store, Tx, now_ms};
use sqlx::Row;
use support::{Event, EventSender, Events, Problem};

use crate::rows::time;
use crate::state::Notes;

/// Changes kept per tenant to resume from.
const KEPT: i64 = 10_000;

/// Changes read per look.
const BATCH: i64 = 100;

/// How often a stream looks for changes another process made.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Events a stream holds for a slow client before its reader waits.
const BUFFER: usize = 32;

/// Numbers change `kind` of note `id` in `tx`: the tenant's next number, whose row stays locked
/// until `tx` commits (so numbers commit in order), and forgets the changes past [`KEPT`].
pub(crate) async fn record(tx: &mut Tx, tenant: &str, id: &str, kind: models::ChangeKind) -> Result<(), sqlx::Error> {
    let seq: i64 = sqlx::query(
        "INSERT INTO note_feed (tenant_id, seq) VALUES ($1, 1) \
         ON CONFLICT (tenant_id) DO UPDATE SET seq = note_feed.seq + 1 RETURNING seq",
    )
    .bind(tenant)
    .fetch_one(&mut **tx)
    .await?
    .get(0);
    let at = now_ms();
    sqlx::query("INSERT INTO note_changes (tenant_id, seq, note_id, kind, at) VALUES ($1, $2, $3, $4, $5)")
        .bind(tenant)
        .bind(seq)
        .bind(id)
        .bind(kind.as_str())
        .bind(at)
        .execute(&mut **tx)
        .await?;
    // The same change to the tenant's webhook subscribers, sent once this transaction commits.
    let change = models::NoteChange { seq, kind, note_id: id.to_string(), at: time(at) };
    crate::hooks::announce(tx, tenant, &change).await?;
    if seq > KEPT {
        sqlx::query("DELETE FROM note_changes WHERE tenant_id = $1 AND seq <= $2")
            .bind(tenant)
            .bind(seq - KEPT)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

impl Notes {
    /// Wakes this process's streams and webhook deliverer once the call `cx` has committed its
    /// change.
    pub(crate) fn changed_on_commit(&self, cx: &mut Context) {
        let (changes, webhooks) = (self.changes.clone(), self.webhooks.clone());
        cx.on_commit(move || {
            changes.notify_waiters();
            webhooks.wake();
        });
    }

    pub(crate) async fn watch(
        &self,
        cx: &mut Context,
        input: models::WatchNotesInput,
    ) -> Result<Events<models::NoteChange>, errors::WatchNotesError> {
        let op = cx.op;
        // An empty `Last-Event-ID` names no event (the SSE rule): as if it were not sent.
        let last = input.last_event_id.as_deref().map(str::trim).filter(|id| !id.is_empty());
        let resume = match (input.since, last) {
            (Some(since), _) => Ok(Some(since)),
            (None, Some(id)) => id.trim().parse::<i64>().map(Some).map_err(|_| {
                errors::WatchNotesError::Validation(
                    Problem::new("last_event_id must be the id of an event of this stream")
                        .with("field", "last_event_id")
                        .with("value", id),
                )
            }),
            (None, None) => Ok(None),
        };
        let (tx, caller, _) = cx.parts::<errors::WatchNotesError>().await?;
        let start = match resume {
            Ok(Some(after)) => Ok(after),
            // From now: after the last change there is.
            Ok(None) => sqlx::query("SELECT seq FROM note_feed WHERE tenant_id = $1")
                .bind(caller.tenant.as_str())
                .fetch_optional(&mut **tx)
                .await
                .map(|row| row.map_or(0, |r| r.get::<i64, _>(0)))
                .map_err(|e| op.fault("reading where the changes are", e)),
            Err(refused) => Err(refused),
        };
        let start = start?;
        let (send, events) = Events::channel(BUFFER);
        tokio::spawn(stream(self.store.clone(), self.changes.clone(), cx.caller.tenant.clone(), start, send));
        Ok(events)
    }
}

/// Feeds one stream: the changes after `cursor`, then each new one, until the client goes.
async fn stream(
    store: Store,
    wake: std::sync::Arc<tokio::sync::Notify>,
    tenant: String,
    mut cursor: i64,
    send: EventSender<models::NoteChange>,
) {
    loop {
        // Listening before looking: a change committed between the look and the wait still wakes it.
        let woken = wake.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let rows = sqlx::query(
            "SELECT seq, kind, note_id, at FROM note_changes WHERE tenant_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(tenant.as_str())
        .bind(cursor)
        .bind(BATCH)
        .fetch_all(store.readers())
        .await;
        let rows = match rows {
            Ok(rows) => rows,
            Err(e) => {
                // Storage is away: the stream stays open and looks again.
                tracing::warn!("reading note changes: {e}");
                Vec::new()
            }
        };
        let full = rows.len() as i64 == BATCH;
        for row in rows {
            let change = models::NoteChange {
                seq: row.get(0),
                kind: models::ChangeKind::parse(&row.get::<String, _>(1)).unwrap_or(models::ChangeKind::Updated),
                note_id: row.get(2),
                at: time(row.get(3)),
            };
            cursor = change.seq;
            if send.send(Event::new(change.seq.to_string(), change)).await.is_err() {
                return;
            }
        }
        if full {
            continue;
        }
        tokio::select! {
            _ = woken => {}
            _ = tokio::time::sleep(LOOK_EVERY) => {}
            _ = send.closed() => return,
        }
    }
}

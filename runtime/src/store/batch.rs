//! Rows inserted through the group commit ([`Store::insert_grouped`]) and rows queued while the database is unavailable ([`Store::insert_later`]).

use std::time::Duration;

use anyhow::Result;

use super::*;

/// One row waiting for the group commit, and where its outcome goes.
#[derive(Debug)]
pub(super) struct Grouped {
    /// `table (column, …)`.
    pub(super) into: &'static str,
    pub(super) row: Vec<Arg>,
    pub(super) done: tokio::sync::oneshot::Sender<Result<(), sqlx::Error>>,
}

/// Most rows one group commit carries.
pub(super) const QUEUE_MAX: usize = 256;

/// Most rows one `INSERT` statement of the group commit carries. Runs of rows for the same table
/// are inserted in chunks of powers of two up to this, so each connection prepares at most six
/// shapes of statement per table.
pub(super) const ROWS_PER_INSERT: usize = 32;

/// The group commit: takes every row queued while the previous commit ran and commits them in
/// one transaction, a few multi-row `INSERT`s, then tells each sender. A failed group is retried
/// one row per transaction, so a failure reaches exactly the rows it belongs to.
pub(super) async fn group_commit(store: Store, mut queue: tokio::sync::mpsc::Receiver<Grouped>) {
    while let Some(first) = queue.recv().await {
        let mut group = vec![first];
        while group.len() < QUEUE_MAX {
            match queue.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        match commit_group(&store, &group).await {
            Ok(()) => group.into_iter().for_each(|g| drop(g.done.send(Ok(())))),
            Err(e) if group.len() == 1 => {
                if let Some(g) = group.pop() {
                    let _ = g.done.send(Err(e));
                }
            }
            // The database is unavailable: every member is told at once. Trying each alone would
            // wait for a connection once per member, one after another.
            Err(e) if is_transient(&e) => group.into_iter().for_each(|g| drop(g.done.send(Err(group::copy(&e))))),
            // One row may be at fault: each member alone, so the others still commit.
            Err(_) => {
                for g in group {
                    let alone = commit_group(&store, std::slice::from_ref(&g)).await;
                    let _ = g.done.send(alone);
                }
            }
        }
    }
}

/// Most rows [`Store::insert_later`] keeps waiting for the database.
pub const LATER_MAX: usize = 100_000;

/// The task behind [`Store::insert_later`]: each row through the group commit, retried while the
/// database is unavailable (each try waits at most the acquire timeout, then a pause).
pub(super) async fn insert_when_available(store: Store, mut rows: tokio::sync::mpsc::Receiver<Grouped>) {
    while let Some(Grouped { into, row, .. }) = rows.recv().await {
        loop {
            match store.insert_grouped(into, row.clone()).await {
                Ok(()) => break,
                Err(e) if is_transient(&e) && !store.pool.is_closed() => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Err(e) => {
                    tracing::error!(table = into, error = %e, "a row waiting for the database could not be written");
                    break;
                }
            }
        }
        crate::metrics::rows_waiting(-1);
    }
}

pub(super) async fn commit_group(store: &Store, group: &[Grouped]) -> Result<(), sqlx::Error> {
    let mut tx = store.begin().await?;
    let mut rest = group;
    while let Some(first) = rest.first() {
        let width = first.row.len();
        let run = rest.iter().take_while(|g| g.into == first.into && g.row.len() == width).count();
        // The largest power of two that fits the run (and the cap).
        let n = 1 << run.min(ROWS_PER_INSERT).ilog2();
        let (chunk, after) = rest.split_at(n);
        let sql = multi_row_insert(first.into, width, n);
        bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), chunk.iter().flat_map(|g| &g.row)).execute(&mut *tx).await?;
        rest = after;
    }
    // The group commit carries audit rows (crate::audit), so it is measured as their commits.
    tx.commit_audit(group.len()).await
}

/// `INSERT INTO {into} VALUES ($1, …, $width), …` for `rows` rows.
pub(super) fn multi_row_insert(into: &str, width: usize, rows: usize) -> String {
    use std::fmt::Write;
    let mut sql = format!("INSERT INTO {into} VALUES ");
    for r in 0..rows {
        sql.push_str(if r == 0 { "(" } else { ", (" });
        for c in 0..width {
            if c > 0 {
                sql.push_str(", ");
            }
            let _ = write!(sql, "${}", r * width + c + 1);
        }
        sql.push(')');
    }
    sql
}

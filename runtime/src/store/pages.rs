//! Pages of a filtered list and their totals: [`Store::page`] (the total counted in the same
//! statement), [`Store::page_totalled`] (a total the caller keeps, such as a trigger-kept
//! aggregate) and [`Store::page_versioned`] (the total reused per filter while a trigger-kept
//! version is unchanged, one count of a filter in flight at a time).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sqlx::any::AnyRow;

use super::{Arg, Store, bind_all};

/// Most totals [`Counts`] keeps before it starts again from none.
const COUNTS_MAX: usize = 4096;

/// Totals of filtered pages, each with the version of the rows it counted, and the turn of the
/// one count of each filter in flight.
#[derive(Debug, Clone, Default)]
pub(super) struct Counts {
    totals: Arc<Mutex<HashMap<String, (i64, u64)>>>,
    turns: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
}

impl Counts {
    /// The total of `key` counted at `version` or a later one.
    fn get(&self, key: &str, version: i64) -> Option<u64> {
        let map = self.totals.lock().ok()?;
        map.get(key).filter(|(v, _)| *v >= version).map(|(_, total)| *total)
    }

    fn put(&self, key: String, version: i64, total: u64) {
        if let Ok(mut map) = self.totals.lock() {
            if map.len() >= COUNTS_MAX && !map.contains_key(&key) {
                map.clear();
            }
            // Never replace a count with one of an older version (a slower count finishing late).
            if map.get(&key).is_none_or(|(v, _)| *v <= version) {
                map.insert(key, (version, total));
            }
        }
    }
}

/// A request's place in line to count a filter: one count of a filter at a time. The lock is
/// forgotten once no request holds or waits for it, also when a request is cancelled meanwhile.
struct Turn {
    turns: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
    key: String,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl Turn {
    fn take(counts: &Counts, key: &str) -> Turn {
        let mut turns = counts.turns.lock().unwrap_or_else(|p| p.into_inner());
        let lock = turns.entry(key.to_string()).or_default().clone();
        Turn { turns: counts.turns.clone(), key: key.to_string(), lock }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        // This request's handle and the map's: nobody else waits.
        if Arc::strong_count(&self.lock) == 2 {
            turns.remove(&self.key);
        }
    }
}

/// `SELECT {columns} FROM {table} WHERE {filter} ORDER BY {order}`, for [`Store::page`]; `filter`
/// refers to `args` as `$1`, `$2`, ….
#[derive(Debug, Clone, Copy)]
pub struct Select<'a> {
    /// The columns selected.
    pub columns: &'a str,
    /// The table.
    pub table: &'a str,
    /// The condition, with `$N` placeholders.
    pub filter: &'a str,
    /// The order of the rows (with a unique last key, so pages never overlap).
    pub order: &'a str,
    /// The values of the placeholders.
    pub args: &'a [Arg],
}

/// What a count of `select`'s matches is cached under: its table, filter and arguments.
fn count_key(select: &Select<'_>) -> String {
    format!("{}\u{0}{}\u{0}{:?}", select.table, select.filter, select.args)
}

impl Store {
    /// One page of `select`, and how many rows its filter matches over all pages, both read in
    /// one snapshot: one statement, the count an uncorrelated subquery the database evaluates
    /// once.
    pub async fn page(&self, select: Select<'_>, paging: support::Paging) -> Result<(u64, Vec<AnyRow>), sqlx::Error> {
        let count = format!("(SELECT COUNT(*) FROM {} WHERE {})", select.table, select.filter);
        self.page_totalled(select, paging, &count).await
    }

    /// As [`Store::page`], the total read by `total`: an SQL expression over the select's own
    /// arguments (`$N`; scalar subqueries, or a sum of them) that answers the filter's count
    /// without counting every match, such as a sum over an aggregate table its triggers keep in
    /// the same transactions as the rows. One statement, so the page and its total come from one
    /// snapshot; a page past the end, which carries no total, reads it alone.
    pub async fn page_totalled(
        &self,
        select: Select<'_>,
        paging: support::Paging,
        total: &str,
    ) -> Result<(u64, Vec<AnyRow>), sqlx::Error> {
        use sqlx::Row;
        let rows = self.page_rows(&select, paging, &format!("({total})")).await?;
        match rows.first() {
            Some(first) => Ok((first.get::<i64, _>(first.len() - 1).max(0) as u64, rows)),
            None if paging.offset() == 0 => Ok((0, rows)),
            None => {
                let alone = format!("SELECT ({total})");
                let row =
                    bind_all(sqlx::query(sqlx::AssertSqlSafe(alone)), select.args).fetch_one(&self.readers).await?;
                Ok((row.get::<i64, _>(0).max(0) as u64, rows))
            }
        }
    }

    /// As [`Store::page`], with the total kept exact without counting every match on each request:
    /// `version` is a query (its `$N` placeholders are the select's own arguments) that reads a
    /// number which grows, in the same transaction, whenever a row that could match changes (a
    /// trigger maintains it). The count is computed once per filter and version and reused while
    /// no newer version is read: the total is the count at the page's version, or at one read
    /// since (a change that committed between the page's statement and the count), never an
    /// older one. At most one count per filter is in flight: requests that find none for their
    /// version wait for the one being made and use it, so a change does not make every request
    /// arriving meanwhile count again. A page whose version has a count costs one statement;
    /// otherwise the version, count and page are read in one read transaction.
    pub async fn page_versioned(
        &self,
        select: Select<'_>,
        paging: support::Paging,
        version: &'static str,
    ) -> Result<(u64, Vec<AnyRow>), sqlx::Error> {
        use sqlx::Row;
        let rows = self.page_rows(&select, paging, &format!("({version})")).await?;
        let key = count_key(&select);
        let Some(first) = rows.first() else { return self.page_counted(select, paging, version).await };
        let seen = first.get::<Option<i64>, _>(first.len() - 1).unwrap_or(0);
        if let Some(total) = self.counts.get(&key, seen) {
            return Ok((total, rows));
        }
        let turn = Turn::take(&self.counts, &key);
        let _mine = turn.lock.lock().await;
        match self.counts.get(&key, seen) {
            // Counted while this request waited its turn.
            Some(total) => Ok((total, rows)),
            None => self.page_counted(select, paging, version).await,
        }
    }

    /// One statement: the page of `select` with `last` (an expression over the same arguments)
    /// as an extra last column.
    async fn page_rows(
        &self,
        select: &Select<'_>,
        paging: support::Paging,
        last: &str,
    ) -> Result<Vec<AnyRow>, sqlx::Error> {
        let Select { columns, table, filter, order, args } = select;
        let n = args.len();
        let sql = format!(
            "SELECT {columns}, {last} FROM {table} WHERE {filter} ORDER BY {order} LIMIT ${} OFFSET ${}",
            n + 1,
            n + 2
        );
        bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), args.iter())
            .bind(i64::from(paging.per_page))
            .bind(paging.offset() as i64)
            .fetch_all(&self.readers)
            .await
    }

    /// The page, its version and its count, in one read transaction; the count kept for later
    /// pages of the same version.
    async fn page_counted(
        &self,
        select: Select<'_>,
        paging: support::Paging,
        version: &'static str,
    ) -> Result<(u64, Vec<AnyRow>), sqlx::Error> {
        use sqlx::Row;
        let key = count_key(&select);
        let Select { columns, table, filter, order, args } = select;
        let mut tx = self.begin_read().await?;
        // The version and the count in one statement: the version's placeholders are the
        // filter's own arguments.
        let head = format!("SELECT COUNT(*), ({version}) FROM {table} WHERE {filter}");
        let head = bind_all(sqlx::query(sqlx::AssertSqlSafe(head)), args).fetch_one(&mut *tx).await?;
        let total = head.get::<i64, _>(0).max(0) as u64;
        self.counts.put(key, head.get::<Option<i64>, _>(1).unwrap_or(0), total);
        let n = args.len();
        let select =
            format!("SELECT {columns} FROM {table} WHERE {filter} ORDER BY {order} LIMIT ${} OFFSET ${}", n + 1, n + 2);
        let rows = bind_all(sqlx::query(sqlx::AssertSqlSafe(select)), args)
            .bind(i64::from(paging.per_page))
            .bind(paging.offset() as i64)
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok((total, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::store;
    use crate::store::values::query;

    /// Requests that find no count for their version line up behind the one counting and use its
    /// total; the line is forgotten afterwards, also when a waiting request is cancelled.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_count_of_a_filter_at_a_time_and_nothing_left_behind() {
        let (store, _dir) = store().await;
        for i in 0..50 {
            query(
                "INSERT INTO grouped (id, note) VALUES ($1, $2)",
                &[Arg::Int(i), Arg::Text(Some(format!("n{}", i % 2)))],
            )
            .execute(store.pool())
            .await
            .unwrap();
        }
        let args = [Arg::Text(Some("n1".into()))];
        let select = Select { columns: "id", table: "grouped", filter: "note = $1", order: "id", args: &args };
        let key = count_key(&select);
        let paging = support::Paging { page: 1, per_page: 10 };
        let version = "SELECT 7 WHERE $1 IS NOT NULL";
        // The line is taken: every request waits; one that is cancelled while waiting leaves nothing.
        let held = Turn::take(&store.counts, &key);
        let holding = held.lock.clone().lock_owned().await;
        let waiting: Vec<_> = (0..8)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move {
                    let args = [Arg::Text(Some("n1".into()))];
                    let select =
                        Select { columns: "id", table: "grouped", filter: "note = $1", order: "id", args: &args };
                    store.page_versioned(select, paging, version).await.map(|(total, rows)| (total, rows.len()))
                })
            })
            .collect();
        let cancelled = {
            let store = store.clone();
            tokio::spawn(async move {
                let args = [Arg::Text(Some("n1".into()))];
                let select = Select { columns: "id", table: "grouped", filter: "note = $1", order: "id", args: &args };
                store.page_versioned(select, paging, version).await.map(|(total, _)| total)
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        cancelled.abort();
        assert!(store.counts.get(&key, 7).is_none(), "nobody counted while the line was held");
        drop(holding);
        drop(held);
        for w in waiting {
            assert_eq!(w.await.unwrap().unwrap(), (25, 10));
        }
        assert_eq!(store.counts.get(&key, 7), Some(25));
        assert!(store.counts.turns.lock().unwrap().is_empty(), "the line is forgotten");
    }
}

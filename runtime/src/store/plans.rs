//! One query plan per SQLite statement, prepared once per connection.
//!
//! sqlx keeps each statement prepared on its connection, so a statement run again only binds and
//! steps. SQLite, though, re-prepares (parses and plans again) a statement whose plan it built
//! around the value bound to a parameter, each time that parameter is bound again: a `LIMIT` or
//! `OFFSET` given as a parameter (SQLite 3.51 plans a bound `LIMIT` as a constant), a `LIKE`
//! whose pattern is a parameter, a comparison with a parameter that could select a partial index.
//! Every page of every list binds its `LIMIT` and `OFFSET`, so every list request paid a full
//! parse and plan of its statement: a fifth of the database thread's time on a list of 20.
//!
//! The query planner stability guarantee (`SQLITE_DBCONFIG_ENABLE_QPSG`) makes SQLite plan a
//! statement without looking at bound values, so it is prepared once. What it gives up does not
//! apply here: the platform's searches are `LIKE '%…%'` (no prefix an index could use), its
//! indexes have no `WHERE`, and a `LIMIT` read at run time costs one register. It is turned on
//! for every connection SQLite opens in this process, by an automatic extension registered
//! before the store's first connection (SQLite offers no connection option, and sqlx's `Any`
//! driver no handle, to set it on the store's connections alone); it changes plans, never
//! results.
//!
//! Registering it initialises SQLite, so SQLite's memory is configured first
//! ([`super::sqlite_memory`]).

use std::sync::Once;

use libsqlite3_sys as ffi;

/// Configures SQLite's memory (if SQLite has not initialised yet) and registers [`stable_plans`]
/// for every SQLite connection opened from now on in this process. Idempotent.
pub(super) fn register() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        if !super::sqlite_memory::configure() {
            tracing::debug!("SQLite was initialised before the store: it keeps its own allocator and statistics");
        }
        // SAFETY: `stable_plans` has the signature SQLite calls an automatic extension with, and
        // stays valid for the life of the process.
        let rc = unsafe { ffi::sqlite3_auto_extension(Some(stable_plans)) };
        if rc != ffi::SQLITE_OK {
            tracing::warn!(code = rc, "SQLite statements with bound limits will be planned again on each use");
        }
    });
}

/// Turns the query planner stability guarantee on for connection `db`, as SQLite opens it.
unsafe extern "C" fn stable_plans(
    db: *mut ffi::sqlite3,
    _error: *mut *mut std::ffi::c_char,
    _api: *const ffi::sqlite3_api_routines,
) -> std::ffi::c_int {
    // SAFETY: SQLite passes the connection it is opening; this option takes an int and an
    // optional out-pointer (none here).
    unsafe {
        ffi::sqlite3_db_config(
            db,
            ffi::SQLITE_DBCONFIG_ENABLE_QPSG,
            1 as std::ffi::c_int,
            std::ptr::null_mut::<std::ffi::c_int>(),
        );
    }
    ffi::SQLITE_OK
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    /// How often SQLite prepared `sql` again over `runs` executions, each binding `?1` anew, on a
    /// connection opened after [`register`] (as every store connection is).
    fn reprepared(sql: &str, runs: i64) -> i32 {
        register();
        // SAFETY: a private in-memory connection and statement, finalised and closed before return.
        unsafe {
            let mut db = std::ptr::null_mut();
            let name = CString::new(":memory:").unwrap();
            assert_eq!(ffi::sqlite3_open(name.as_ptr(), &mut db), ffi::SQLITE_OK);
            let setup = CString::new("CREATE TABLE t (k TEXT); INSERT INTO t VALUES ('a'), ('b'), ('c');").unwrap();
            assert_eq!(ffi::sqlite3_exec(db, setup.as_ptr(), None, std::ptr::null_mut(), std::ptr::null_mut()), 0);
            let text = CString::new(sql).unwrap();
            let mut stmt = std::ptr::null_mut();
            assert_eq!(ffi::sqlite3_prepare_v2(db, text.as_ptr(), -1, &mut stmt, std::ptr::null_mut()), 0);
            for n in 1..=runs {
                ffi::sqlite3_bind_int64(stmt, 1, n);
                while ffi::sqlite3_step(stmt) == ffi::SQLITE_ROW {}
                ffi::sqlite3_reset(stmt);
            }
            let count = ffi::sqlite3_stmt_status(stmt, ffi::SQLITE_STMTSTATUS_REPREPARE, 0);
            ffi::sqlite3_finalize(stmt);
            ffi::sqlite3_close(db);
            count
        }
    }

    #[test]
    fn a_statement_with_a_bound_limit_or_pattern_is_prepared_once() {
        assert_eq!(reprepared("SELECT k FROM t ORDER BY k LIMIT ?1 OFFSET 0", 10), 0);
        assert_eq!(reprepared("SELECT k FROM t ORDER BY k LIMIT 2 OFFSET ?1", 10), 0);
        assert_eq!(reprepared("SELECT k FROM t WHERE k LIKE '%' || ?1 || '%'", 10), 0);
        assert_eq!(reprepared("SELECT k FROM t WHERE k LIKE ?1", 10), 0);
    }

    #[test]
    fn sqlite_keeps_no_memory_statistics_to_serialise_allocations_on() {
        // A connection opened, used and closed; with statistics on, what SQLite keeps allocated
        // past its first initialisation alone (its page cache's structures, say) is counted.
        assert_eq!(reprepared("SELECT k FROM t", 1), 0);
        // SAFETY: reads a process-wide counter.
        assert_eq!(unsafe { ffi::sqlite3_memory_used() }, 0);
    }
}

//! A note's rows as the operations read and write them: the note and its tags, its times, its
//! JSON columns, and the problem of a note that is not there.

use chrono::{DateTime, TimeZone, Utc};
use notes_api::notes::models;
use runtime::store::{Nullable, Tx};
use sqlx::Row;
use support::Problem;

pub(crate) fn time(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

/// The note `id` of the caller's tenant, with its tags; `None` when there is none. `lock` is
/// [`Store::for_update`] when the transaction goes on to change the note (its check of the
/// state or of `If-Match` must hold until the write), else empty.
pub(crate) async fn load(
    tx: &mut Tx,
    tenant: &str,
    id: &str,
    lock: &'static str,
) -> Result<Option<models::Note>, sqlx::Error> {
    // `COLUMNS` and `lock` are constants: no input reaches the text.
    let query = format!("SELECT {COLUMNS} FROM notes WHERE tenant_id = $1 AND id = $2{lock}");
    let Some(row) = sqlx::query(sqlx::AssertSqlSafe(query)).bind(tenant).bind(id).fetch_optional(&mut **tx).await?
    else {
        return Ok(None);
    };
    let tags = tags_of(tx, tenant, id).await?;
    note(&row, tags).map(Some)
}

/// The tags of note `id`, in order.
pub(crate) async fn tags_of(tx: &mut Tx, tenant: &str, id: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT tag FROM note_tags WHERE tenant_id = $1 AND note_id = $2 ORDER BY tag")
        .bind(tenant)
        .bind(id)
        .fetch_all(&mut **tx)
        .await?;
    Ok(rows.iter().map(|r| r.get::<String, _>(0)).collect())
}

/// The columns [`note`] reads, in its order.
pub(crate) const COLUMNS: &str = "id, title, state, created_at, due, content, reminder";

pub(crate) fn note(row: &sqlx::any::AnyRow, tags: Vec<String>) -> Result<models::Note, sqlx::Error> {
    Ok(models::Note {
        id: row.get(0),
        title: row.get(1),
        state: models::NoteState::parse(&row.get::<String, _>(2)).unwrap_or(models::NoteState::INITIAL),
        tags,
        created_at: time(row.get(3)),
        due: row.get::<Option<i64>, _>(4).map(time),
        content: from_json(row.get(5))?,
        reminder: from_json(row.get(6))?,
    })
}

/// A union stored as its JSON document (`None`: the column is NULL).
pub(crate) fn to_json<T: serde::Serialize>(value: Option<&T>) -> Result<Nullable<String>, sqlx::Error> {
    value.map(serde_json::to_string).transpose().map(Nullable).map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(text: Option<String>) -> Result<Option<T>, sqlx::Error> {
    text.map(|t| serde_json::from_str(&t)).transpose().map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// `resource/not-found`: there is no note `id` (in the caller's tenant).
pub(crate) fn not_found(id: &str) -> Problem {
    Problem::new(format!("there is no note {id}")).with("id", id)
}

//! Labels and counts: bodies that are not objects. `set_note_tags` takes the whole set of a
//! note's labels as a JSON array and answers it as one; `rename_note` takes a JSON string;
//! `count_notes` answers a number, `count_tags` a map of label to count, and `note_stats` named
//! fields with a map beside them.

use runtime::OperationFault;
use std::collections::BTreeMap;

use notes_api::notes::{errors, models};
use runtime::Context;
use sqlx::Row;

use crate::edits::{Refused, change};
use crate::rows::{load, not_found, tags_of};
use crate::state::Notes;

impl Notes {
    /// Replaces the labels of the caller's note with `input.tags` (sorted, each once).
    pub(crate) async fn set_tags(
        &self,
        cx: &mut Context,
        input: models::SetTagsInput,
    ) -> Result<Vec<String>, errors::SetNoteTagsError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::SetNoteTagsError>().await?;
        let (tenant, id) = (caller.tenant.as_str(), input.id.as_str());
        let mut tags = input.tags;
        tags.sort();
        tags.dedup();
        let stored = async {
            // Locked until the new set is written: two concurrent replacements do not mix.
            if load(&mut *tx, tenant, id, self.store.for_update()).await?.is_none() {
                return Ok(None);
            }
            sqlx::query("DELETE FROM note_tags WHERE tenant_id = $1 AND note_id = $2")
                .bind(tenant)
                .bind(id)
                .execute(&mut **tx)
                .await?;
            for tag in &tags {
                sqlx::query("INSERT INTO note_tags (tenant_id, note_id, tag) VALUES ($1, $2, $3)")
                    .bind(tenant)
                    .bind(id)
                    .bind(tag.as_str())
                    .execute(&mut **tx)
                    .await?;
            }
            crate::changes::record(&mut *tx, tenant, id, models::ChangeKind::Updated).await?;
            tags_of(&mut *tx, tenant, id).await.map(Some)
        }
        .await;
        let result = match stored {
            Ok(Some(tags)) => Ok(tags),
            Ok(None) => Err(errors::SetNoteTagsError::NotFound(not_found(id))),
            Err(e) => Err(op.fault("labelling the note", e)),
        };
        let tags = result?;
        self.changed_on_commit(cx);
        Ok(tags)
    }

    /// Gives the caller's note the title `input.title`.
    pub(crate) async fn rename(
        &self,
        cx: &mut Context,
        input: models::RenameNoteInput,
    ) -> Result<models::Note, errors::RenameNoteError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::RenameNoteError>().await?;
        let rename = models::UpdateNoteInput {
            id: input.id.clone(),
            title: Some(input.title),
            state: None,
            due: None,
            content: None,
            reminder: None,
            if_match: support::IfMatch::default(),
        };
        let renamed =
            change(&mut *tx, self.store.for_update(), caller, rename).await.map_err(|failure| match failure {
                Refused::NotFound(p) => errors::RenameNoteError::NotFound(p),
                // A title fits every state, and a rename sends no `If-Match`.
                Refused::Conflict(p) | Refused::Precondition(p) => op.fault("renaming the note", p.message),
                Refused::Fault(e) => op.fault("renaming the note", e),
            });
        let renamed = renamed?;
        self.changed_on_commit(cx);
        Ok(renamed)
    }

    /// How many notes the caller has, in `input.state` or in all.
    pub(crate) async fn count(
        &self,
        cx: &mut Context,
        input: models::CountNotesInput,
    ) -> Result<i64, errors::CountNotesError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::CountNotesError>().await?;
        let counted = match input.state {
            Some(state) => {
                sqlx::query("SELECT COUNT(*) FROM notes WHERE tenant_id = $1 AND state = $2")
                    .bind(caller.tenant.as_str())
                    .bind(state.as_str())
                    .fetch_one(&mut **tx)
                    .await
            }
            None => {
                sqlx::query("SELECT COUNT(*) FROM notes WHERE tenant_id = $1")
                    .bind(caller.tenant.as_str())
                    .fetch_one(&mut **tx)
                    .await
            }
        };

        counted.map(|row| row.get::<i64, _>(0)).map_err(|e| op.fault("counting notes", e))
    }

    /// The caller's notes in all and per state: named fields and a map beside them.
    pub(crate) async fn stats(&self, cx: &mut Context) -> Result<models::NoteStats, errors::NoteStatsError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::NoteStatsError>().await?;

        sqlx::query("SELECT state, COUNT(*) FROM notes WHERE tenant_id = $1 GROUP BY state")
            .bind(caller.tenant.as_str())
            .fetch_all(&mut **tx)
            .await
            .map(|rows| {
                let additional: BTreeMap<String, i64> =
                    rows.iter().map(|r| (r.get::<String, _>(0), r.get::<i64, _>(1))).collect();
                models::NoteStats { total: additional.values().sum(), additional }
            })
            .map_err(|e| op.fault("counting notes", e))
    }

    /// Each label of the caller's notes with the number of notes carrying it.
    pub(crate) async fn count_labels(&self, cx: &mut Context) -> Result<BTreeMap<String, i64>, errors::CountTagsError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::CountTagsError>().await?;

        sqlx::query("SELECT tag, COUNT(*) FROM note_tags WHERE tenant_id = $1 GROUP BY tag")
            .bind(caller.tenant.as_str())
            .fetch_all(&mut **tx)
            .await
            .map(|rows| rows.iter().map(|r| (r.get::<String, _>(0), r.get::<i64, _>(1))).collect())
            .map_err(|e| op.fault("counting labels", e))
    }
}

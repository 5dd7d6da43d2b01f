//! Creating and changing a note: what several operations share (`create_note` and
//! `capture_note`; `update_note`, `archive_note` and `rename_note`).

use notes_api::notes::models;
use runtime::caller::Caller;
use runtime::store::{Nullable, Tx, now_ms};
use runtime::{Context, OperationFault};
use support::{InternalError, Operation, Problem};

use crate::changes;
use crate::rows::{load, not_found, time, to_json};
use crate::state::Notes;

impl Notes {
    /// Stores a new note for `caller`, as operation `op` (which its audit row names): what
    /// `create_note` (JSON) and `capture_note` (a form) both do.
    pub(crate) async fn create<E>(
        &self,
        cx: &mut Context,
        op: &'static Operation,
        input: models::CreateNoteInput,
    ) -> Result<models::Note, E>
    where
        E: support::OperationError + InternalError,
    {
        let id = format!("note_{}", uuid::Uuid::now_v7().simple());
        cx.target(id.clone());
        let (tx, caller, _) = cx.parts::<E>().await?;
        let mut tags = input.tags.unwrap_or_default();
        tags.sort();
        tags.dedup();
        let now = now_ms();
        let created = async {
            sqlx::query(
                "INSERT INTO notes (tenant_id, id, title, state, created_at, due, content, reminder) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(caller.tenant.as_str())
            .bind(id.as_str())
            .bind(input.title.as_str())
            .bind(models::NoteState::INITIAL.as_str())
            .bind(now)
            .bind(Nullable(None::<i64>))
            .bind(to_json(input.content.as_ref())?)
            .bind(to_json(input.reminder.as_ref())?)
            .execute(&mut **tx)
            .await?;
            for tag in &tags {
                sqlx::query("INSERT INTO note_tags (tenant_id, note_id, tag) VALUES ($1, $2, $3)")
                    .bind(caller.tenant.as_str())
                    .bind(id.as_str())
                    .bind(tag.as_str())
                    .execute(&mut **tx)
                    .await?;
            }
            changes::record(&mut *tx, &caller.tenant, &id, models::ChangeKind::Created).await?;
            Ok::<_, sqlx::Error>(())
        }
        .await
        .map_err(|e| op.fault("storing the note", e))
        .map(|()| models::Note {
            id: id.clone(),
            title: input.title,
            state: models::NoteState::INITIAL,
            tags,
            created_at: time(now),
            due: None,
            content: input.content,
            reminder: input.reminder,
        });
        let created = created?;
        self.changed_on_commit(cx);
        Ok(created)
    }
}

/// Why a change of a note did not happen.
pub(crate) enum Refused {
    NotFound(Problem),
    /// The note's state does not allow the move.
    Conflict(Problem),
    /// `If-Match` names another version of the note.
    Precondition(Problem),
    Fault(sqlx::Error),
}

/// Applies the changes `input` asks for to the caller's note, in `tx`: what `update_note` and
/// `archive_note` both do.
pub(crate) async fn change(
    tx: &mut Tx,
    lock: &'static str,
    caller: &Caller,
    input: models::UpdateNoteInput,
) -> Result<models::Note, Refused> {
    let mut note = match load(tx, &caller.tenant, &input.id, lock).await {
        Ok(Some(note)) => note,
        Ok(None) => return Err(Refused::NotFound(not_found(&input.id))),
        Err(e) => return Err(Refused::Fault(e)),
    };
    // In the transaction that changes it: no other change can land between check and write.
    input.if_match.check(&note).map_err(Refused::Precondition)?;
    if let Some(to) = input.state
        && to != note.state
        && !note.state.can_move_to(to)
    {
        let allowed: Vec<&str> = note.state.next_states().iter().map(|s| s.as_str()).collect();
        return Err(Refused::Conflict(
            Problem::new(format!("a {} note cannot become {to}", note.state))
                .with("field", "state")
                .with("value", to.as_str())
                .with("allowed", allowed),
        ));
    }
    if let Some(title) = input.title {
        note.title = title;
    }
    if let Some(state) = input.state {
        note.state = state;
    }
    if let Some(due) = input.due {
        note.due = due;
    }
    if let Some(content) = input.content {
        note.content = Some(content);
    }
    if let Some(reminder) = input.reminder {
        note.reminder = reminder;
    }
    let stored = async {
        sqlx::query(
            "UPDATE notes SET title = $1, state = $2, due = $3, content = $4, reminder = $5 \
             WHERE tenant_id = $6 AND id = $7",
        )
        .bind(note.title.as_str())
        .bind(note.state.as_str())
        .bind(Nullable(note.due.map(|d| d.timestamp_millis())))
        .bind(to_json(note.content.as_ref())?)
        .bind(to_json(note.reminder.as_ref())?)
        .bind(caller.tenant.as_str())
        .bind(input.id.as_str())
        .execute(&mut **tx)
        .await
    };
    stored.await.map_err(Refused::Fault)?;
    changes::record(tx, &caller.tenant, &input.id, models::ChangeKind::Updated).await.map_err(Refused::Fault)?;
    Ok(note)
}

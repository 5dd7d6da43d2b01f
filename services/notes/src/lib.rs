//! The example service: notes, kept per tenant, built on the Specwright platform exactly as a
//! user's own service would be. The spec is `spec/notes.toml`; `cargo xtask generate` writes the
//! `notes-api` crate from it; this crate implements its trait over the platform's database and
//! registers it with the server builder ([`server`]). Every scoped operation is audited (the spec
//! turns audit on): each change commits with its audit row, or not at all.

use chrono::{DateTime, TimeZone, Utc};
use notes_api::notes::{NotesService, errors, models};
use runtime::Context;
use runtime::Platform;
use runtime::caller::Caller;
use runtime::sql::{Arg, Sql};
use runtime::store::{Nullable, Store, Tx, now_ms};
use sqlx::Row;
use support::{InternalError, Operation, Paged, Paging, Problem};

pub use notes_api::notes::{SERVICE, api};

/// The notes service over the platform's database.
#[derive(Debug, Clone)]
pub struct Notes {
    store: Store,
    blobs: runtime::blobs::Blobs,
    /// Woken when a change of a note commits: the change streams of this process look at once.
    changes: std::sync::Arc<tokio::sync::Notify>,
    /// The platform's webhook outbox, which delivers `note.changed` to subscribers.
    webhooks: runtime::webhooks::Webhooks,
}

mod attachments;
mod changes;
mod exports;
mod hooks;
mod labels;

/// The application: the notes service registered with the platform's server builder.
pub async fn server(platform: &Platform) -> anyhow::Result<axum::Router> {
    let modules: [Box<dyn runtime::Module>; 1] = [Box::new(Module)];
    runtime::Server::builder(platform).modules(&modules).await?.build()
}

/// Applies the notes service's own migrations (its tables beside the platform's).
pub async fn migrate(store: &Store) -> anyhow::Result<()> {
    store.migrate("notes", sqlx::migrate!("./migrations/sqlite"), sqlx::migrate!("./migrations/postgres")).await
}

/// The notes service as a binary registers it: its migrations, its catalog entry, the service.
#[derive(Debug, Clone, Copy, Default)]
pub struct Module;

impl runtime::Module for Module {
    fn info(&self) -> &'static support::ServiceInfo {
        &SERVICE
    }

    fn migrate<'a>(&'a self, store: &'a Store) -> runtime::module::BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(migrate(store))
    }

    /// The service, its statistics cacheable by the client for ten seconds: a per-operation layer
    /// (any tower layer, here one that sets a header) on the operation it selects.
    fn open<'a>(
        &'a self,
        platform: &'a Platform,
    ) -> runtime::module::BoxFuture<'a, anyhow::Result<runtime::ServiceApi>> {
        Box::pin(async move {
            let cache = tower_http::set_header::SetResponseHeaderLayer::if_not_present(
                axum::http::header::CACHE_CONTROL,
                axum::http::HeaderValue::from_static("private, max-age=10"),
            );
            Ok(api(Notes::open_migrated(platform)).layer(support::Select::Operation("note_stats"), cache))
        })
    }
}

impl Notes {
    /// The service over the platform's database, its own tables migrated.
    pub async fn open(platform: &Platform) -> anyhow::Result<Self> {
        migrate(&platform.store).await?;
        Ok(Self::open_migrated(platform))
    }

    /// [`Notes::open`] over a database whose migrations are applied (as a registered module's is).
    fn open_migrated(platform: &Platform) -> Self {
        let store = platform.store.clone();
        let notes = Notes {
            blobs: runtime::blobs::Blobs::new(store.clone()),
            store,
            changes: Default::default(),
            webhooks: platform.webhooks.clone(),
        };
        // Deliveries queued before a stop go out now, and new ones as their changes commit.
        notes.webhooks.start();
        // Exports a stopped process left unfinished.
        tokio::spawn(notes.clone().resume_exports());
        notes
    }

    /// Stores a new note for `caller`, as operation `op` (which its audit row names): what
    /// `create_note` (JSON) and `capture_note` (a form) both do.
    async fn create<E>(
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
        .map_err(|e| runtime::fault(op.id, "storing the note", e))
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

fn time(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

/// The note `id` of the caller's tenant, with its tags; `None` when there is none. `lock` is
/// [`Store::for_update`] when the transaction goes on to change the note (its check of the
/// state or of `If-Match` must hold until the write), else empty.
async fn load(tx: &mut Tx, tenant: &str, id: &str, lock: &'static str) -> Result<Option<models::Note>, sqlx::Error> {
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
async fn tags_of(tx: &mut Tx, tenant: &str, id: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT tag FROM note_tags WHERE tenant_id = $1 AND note_id = $2 ORDER BY tag")
        .bind(tenant)
        .bind(id)
        .fetch_all(&mut **tx)
        .await?;
    Ok(rows.iter().map(|r| r.get::<String, _>(0)).collect())
}

/// The columns [`note`] reads, in its order.
const COLUMNS: &str = "id, title, state, created_at, due, content, reminder";

fn note(row: &sqlx::any::AnyRow, tags: Vec<String>) -> Result<models::Note, sqlx::Error> {
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
fn to_json<T: serde::Serialize>(value: Option<&T>) -> Result<Nullable<String>, sqlx::Error> {
    value.map(serde_json::to_string).transpose().map(Nullable).map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

fn from_json<T: serde::de::DeserializeOwned>(text: Option<String>) -> Result<Option<T>, sqlx::Error> {
    text.map(|t| serde_json::from_str(&t)).transpose().map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// Why a change of a note did not happen.
enum Refused {
    NotFound(Problem),
    /// The note's state does not allow the move.
    Conflict(Problem),
    /// `If-Match` names another version of the note.
    Precondition(Problem),
    Fault(sqlx::Error),
}

/// Applies the changes `input` asks for to the caller's note, in `tx`: what `update_note` and
/// `archive_note` both do.
async fn change(
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

fn not_found(id: &str) -> Problem {
    Problem::new(format!("there is no note {id}")).with("id", id)
}

impl NotesService for Notes {
    type Context = Context;

    async fn list_notes(
        &self,
        cx: &mut Context,
        input: models::ListNotesInput,
        paging: Paging,
    ) -> Result<Paged<models::Note>, errors::ListNotesError> {
        let op = &notes_api::notes::operations::LIST_NOTES;
        let (tx, caller, _) = cx.parts::<errors::ListNotesError>().await?;
        // Filters: the caller's tenant, an optional state, and every requested tag.
        let mut filter = Sql::new(" WHERE tenant_id = $1");
        filter.args.push(Arg::text(caller.tenant.clone()));
        if let Some(state) = input.state {
            filter.push(" AND state = ?", Arg::text(state.as_str().to_string()));
        }
        if let Some(day) = input.due_before {
            let midnight = day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc().timestamp_millis();
            filter.push(" AND due IS NOT NULL AND due < ?", Arg::Int(midnight));
        }
        for tag in input.tag.unwrap_or_default() {
            filter.push(
                " AND EXISTS (SELECT 1 FROM note_tags t WHERE t.tenant_id = notes.tenant_id AND t.note_id = notes.id AND t.tag = ?)",
                Arg::text(tag),
            );
        }

        async {
            let count = Sql { text: format!("SELECT COUNT(*) FROM notes{}", filter.text), args: filter.args.clone() };
            let total: i64 = count.query().fetch_one(&mut **tx).await?.get(0);
            let mut page = Sql { text: format!("SELECT {COLUMNS} FROM notes{}", filter.text), args: filter.args };
            // `sort` has a default: the decoder puts it in when the request leaves it out. The
            // deprecated `newest_first=false` still means oldest first.
            let sort = match (input.sort, input.newest_first) {
                (models::NoteSort::Newest, Some(false)) => models::NoteSort::Oldest,
                (sort, _) => sort,
            };
            page.raw(match sort {
                models::NoteSort::Newest => " ORDER BY created_at DESC, id DESC",
                models::NoteSort::Oldest => " ORDER BY created_at ASC, id ASC",
                models::NoteSort::Title => " ORDER BY title ASC, id ASC",
            });
            page.push(" LIMIT ?", Arg::Int(i64::from(paging.per_page)));
            page.push(" OFFSET ?", Arg::Int(i64::try_from(paging.offset()).unwrap_or(i64::MAX)));
            let rows = page.query().fetch_all(&mut **tx).await?;
            let mut items = Vec::with_capacity(rows.len());
            for row in &rows {
                let id: String = row.get(0);
                items.push(note(row, tags_of(&mut *tx, &caller.tenant, &id).await?)?);
            }
            Ok::<_, sqlx::Error>(Paged { items, total: u64::try_from(total).unwrap_or(0) })
        }
        .await
        .map_err(|e| runtime::fault(op.id, "listing notes", e))
    }

    async fn list_due_notes(
        &self,
        cx: &mut Context,
        input: models::DueNotesInput,
    ) -> Result<Vec<models::Note>, errors::ListDueNotesError> {
        let op = &notes_api::notes::operations::LIST_DUE_NOTES;
        let (tx, caller, _) = cx.parts::<errors::ListDueNotesError>().await?;
        let now = now_ms();
        // `days` has a default and bounds: the decoder put it in and checked it.
        let until = now.saturating_add(input.days.saturating_mul(86_400_000));

        async {
            let query = format!(
                "SELECT {COLUMNS} FROM notes WHERE tenant_id = $1 AND due IS NOT NULL AND due >= $2 AND due <= $3 \
                 ORDER BY due ASC, id ASC LIMIT 50"
            );
            // `COLUMNS` is a constant: no input reaches the text.
            let rows = sqlx::query(sqlx::AssertSqlSafe(query))
                .bind(caller.tenant.as_str())
                .bind(now)
                .bind(until)
                .fetch_all(&mut **tx)
                .await?;
            let mut notes = Vec::with_capacity(rows.len());
            for row in &rows {
                let id: String = row.get(0);
                notes.push(note(row, tags_of(&mut *tx, &caller.tenant, &id).await?)?);
            }
            Ok::<_, sqlx::Error>(notes)
        }
        .await
        .map_err(|e| runtime::fault(op.id, "listing notes due soon", e))
    }

    async fn create_note(
        &self,
        cx: &mut Context,
        input: models::CreateNoteInput,
    ) -> Result<models::Note, errors::CreateNoteError> {
        self.create(cx, &notes_api::notes::operations::CREATE_NOTE, input).await
    }

    async fn capture_note(
        &self,
        cx: &mut Context,
        input: models::CaptureNoteInput,
    ) -> Result<models::Note, errors::CaptureNoteError> {
        let note = models::CreateNoteInput { title: input.title, tags: input.tags, content: None, reminder: None };
        self.create(cx, &notes_api::notes::operations::CAPTURE_NOTE, note).await
    }

    async fn upload_attachment(
        &self,
        cx: &mut Context,
        input: models::UploadAttachmentInput,
    ) -> Result<models::Attachment, errors::UploadAttachmentError> {
        self.attach(cx, input).await
    }

    async fn put_attachment(
        &self,
        cx: &mut Context,
        input: models::PutAttachmentInput,
    ) -> Result<models::Attachment, errors::PutAttachmentError> {
        self.attach_named(cx, input).await
    }

    async fn list_attachments(
        &self,
        cx: &mut Context,
        input: models::AttachmentsInput,
    ) -> Result<Vec<models::Attachment>, errors::ListAttachmentsError> {
        self.attachments(cx, input).await
    }

    async fn get_attachment(
        &self,
        cx: &mut Context,
        input: models::AttachmentRef,
    ) -> Result<support::File, errors::GetAttachmentError> {
        self.attachment_file(cx, input).await
    }

    async fn delete_attachment(
        &self,
        cx: &mut Context,
        input: models::DeleteAttachmentInput,
    ) -> Result<(), errors::DeleteAttachmentError> {
        self.detach(cx, input).await
    }

    async fn get_note(
        &self,
        cx: &mut Context,
        input: models::GetNoteInput,
    ) -> Result<models::Note, errors::GetNoteError> {
        let op = &notes_api::notes::operations::GET_NOTE;
        cx.target(input.id.clone());
        let (tx, caller, _) = cx.parts::<errors::GetNoteError>().await?;

        match load(&mut *tx, &caller.tenant, &input.id, "").await {
            Ok(Some(note)) => Ok(note),
            Ok(None) => Err(errors::GetNoteError::NotFound(not_found(&input.id))),
            Err(e) => Err(runtime::fault(op.id, "reading the note", e)),
        }
    }

    async fn open_note(
        &self,
        cx: &mut Context,
        input: models::OpenNoteInput,
    ) -> Result<models::Redirect, errors::OpenNoteError> {
        let op = &notes_api::notes::operations::OPEN_NOTE;
        cx.target(input.id.clone());
        let (tx, caller, _) = cx.parts::<errors::OpenNoteError>().await?;

        match load(&mut *tx, &caller.tenant, &input.id, "").await {
            Ok(Some(models::Note { content: Some(models::NoteContent::Link(link)), .. })) => {
                // A `uri` the decoder checked: visible ASCII, as a header needs.
                Ok(models::Redirect { location: link.url })
            }
            Ok(Some(_)) => Err(errors::OpenNoteError::NoLink(
                Problem::new(format!("note {} holds no link", input.id)).with("id", input.id.as_str()),
            )),
            Ok(None) => Err(errors::OpenNoteError::NotFound(not_found(&input.id))),
            Err(e) => Err(runtime::fault(op.id, "reading the note", e)),
        }
    }

    async fn update_note(
        &self,
        cx: &mut Context,
        input: models::UpdateNoteInput,
    ) -> Result<models::Note, errors::UpdateNoteError> {
        let op = &notes_api::notes::operations::UPDATE_NOTE;
        cx.target(input.id.clone());
        let (tx, caller, _) = cx.parts::<errors::UpdateNoteError>().await?;
        let updated = change(&mut *tx, self.store.for_update(), caller, input).await.map_err(|failure| match failure {
            Refused::NotFound(p) => errors::UpdateNoteError::NotFound(p),
            Refused::Conflict(p) => errors::UpdateNoteError::Conflict(p),
            Refused::Precondition(p) => errors::UpdateNoteError::PreconditionFailed(p),
            Refused::Fault(e) => runtime::fault(op.id, "updating the note", e),
        });
        let updated = updated?;
        self.changed_on_commit(cx);
        Ok(updated)
    }

    /// The route archiving had before `update_note` could: the same change, deprecated.
    async fn archive_note(
        &self,
        cx: &mut Context,
        input: models::ArchiveNoteInput,
    ) -> Result<models::Note, errors::ArchiveNoteError> {
        let op = &notes_api::notes::operations::ARCHIVE_NOTE;
        cx.target(input.id.clone());
        let (tx, caller, _) = cx.parts::<errors::ArchiveNoteError>().await?;
        let archive = models::UpdateNoteInput {
            id: input.id.clone(),
            title: None,
            state: Some(models::NoteState::Archived),
            due: None,
            content: None,
            reminder: None,
            if_match: support::IfMatch::default(),
        };
        let archived =
            change(&mut *tx, self.store.for_update(), caller, archive).await.map_err(|failure| match failure {
                Refused::NotFound(p) => errors::ArchiveNoteError::NotFound(p),
                Refused::Conflict(p) => errors::ArchiveNoteError::Conflict(p),
                // An archive sends no `If-Match`, so no precondition can fail.
                Refused::Precondition(p) => runtime::fault(op.id, "archiving the note", p.message),
                Refused::Fault(e) => runtime::fault(op.id, "archiving the note", e),
            });
        let archived = archived?;
        self.changed_on_commit(cx);
        Ok(archived)
    }

    async fn watch_notes(
        &self,
        cx: &mut Context,
        input: models::WatchNotesInput,
    ) -> Result<support::Events<models::NoteChange>, errors::WatchNotesError> {
        self.watch(cx, input).await
    }

    async fn create_export(
        &self,
        cx: &mut Context,
        input: models::CreateExportInput,
    ) -> Result<models::ExportStarted, errors::CreateExportError> {
        self.start_export(cx, input).await
    }

    async fn get_export(
        &self,
        cx: &mut Context,
        input: models::ExportRef,
    ) -> Result<models::NoteExport, errors::GetExportError> {
        self.export_status(cx, input).await
    }

    async fn download_export(
        &self,
        cx: &mut Context,
        input: models::DownloadExportInput,
    ) -> Result<support::File, errors::DownloadExportError> {
        self.export_file(cx, input).await
    }

    async fn set_note_tags(
        &self,
        cx: &mut Context,
        input: models::SetTagsInput,
    ) -> Result<Vec<String>, errors::SetNoteTagsError> {
        self.set_tags(cx, input).await
    }

    async fn rename_note(
        &self,
        cx: &mut Context,
        input: models::RenameNoteInput,
    ) -> Result<models::Note, errors::RenameNoteError> {
        self.rename(cx, input).await
    }

    async fn count_notes(
        &self,
        cx: &mut Context,
        input: models::CountNotesInput,
    ) -> Result<i64, errors::CountNotesError> {
        self.count(cx, input).await
    }

    async fn count_tags(
        &self,
        cx: &mut Context,
    ) -> Result<std::collections::BTreeMap<String, i64>, errors::CountTagsError> {
        self.count_labels(cx).await
    }

    async fn note_stats(&self, cx: &mut Context) -> Result<models::NoteStats, errors::NoteStatsError> {
        self.stats(cx).await
    }

    async fn subscribe(
        &self,
        cx: &mut Context,
        input: models::SubscribeInput,
    ) -> Result<models::NewSubscription, errors::SubscribeError> {
        self.subscribe_url(cx, input).await
    }

    async fn list_subscriptions(
        &self,
        cx: &mut Context,
    ) -> Result<Vec<models::Subscription>, errors::ListSubscriptionsError> {
        self.subscriptions(cx).await
    }

    async fn unsubscribe(
        &self,
        cx: &mut Context,
        input: models::SubscriptionRef,
    ) -> Result<(), errors::UnsubscribeError> {
        self.unsubscribe_url(cx, input).await
    }

    async fn delete_note(&self, cx: &mut Context, input: models::NoteRef) -> Result<(), errors::DeleteNoteError> {
        let op = &notes_api::notes::operations::DELETE_NOTE;
        cx.target(input.id.clone());
        let (tx, caller, _) = cx.parts::<errors::DeleteNoteError>().await?;
        // The version `If-Match` names must be the one deleted, so the note is read first.
        let current = match load(&mut *tx, &caller.tenant, &input.id, self.store.for_update()).await {
            Ok(Some(note)) => input.if_match.check(&note).map_err(errors::DeleteNoteError::PreconditionFailed),
            Ok(None) => Err(errors::DeleteNoteError::NotFound(not_found(&input.id))),
            Err(e) => Err(runtime::fault(op.id, "reading the note", e)),
        };
        current?;
        let deleted = async {
            attachments::delete_all(&mut *tx, &caller.tenant, &input.id).await?;
            sqlx::query("DELETE FROM note_tags WHERE tenant_id = $1 AND note_id = $2")
                .bind(caller.tenant.as_str())
                .bind(input.id.as_str())
                .execute(&mut **tx)
                .await?;
            let done = sqlx::query("DELETE FROM notes WHERE tenant_id = $1 AND id = $2")
                .bind(caller.tenant.as_str())
                .bind(input.id.as_str())
                .execute(&mut **tx)
                .await?;
            if done.rows_affected() == 1 {
                changes::record(&mut *tx, &caller.tenant, &input.id, models::ChangeKind::Deleted).await?;
            }
            Ok::<_, sqlx::Error>(done.rows_affected() == 1)
        }
        .await;
        let result = match deleted {
            Ok(true) => Ok(()),
            Ok(false) => Err(errors::DeleteNoteError::NotFound(not_found(&input.id))),
            Err(e) => Err(runtime::fault(op.id, "deleting the note", e)),
        };
        result?;
        self.changed_on_commit(cx);
        Ok(())
    }
}

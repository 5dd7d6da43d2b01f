//! The generated `NotesService` implemented over the platform's database: the notes themselves
//! here, attachments, changes, exports, webhooks and labels in their own modules.

use notes_api::notes::{NotesService, errors, models};
use runtime::sql::{Arg, Sql};
use runtime::store::now_ms;
use runtime::{Context, OperationFault};
use sqlx::Row;
use support::{Paged, Paging, Problem};

use crate::edits::{Refused, change};
use crate::rows::{COLUMNS, load, not_found, note, tags_of};
use crate::state::Notes;
use crate::{attachments, changes};
impl NotesService for Notes {
    type Context = Context;

    async fn list_notes(
        &self,
        cx: &mut Context,
        input: models::ListNotesInput,
        paging: Paging,
    ) -> Result<Paged<models::Note>, errors::ListNotesError> {
        let op = cx.op;
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
        .map_err(|e| op.fault("listing notes", e))
    }

    async fn list_due_notes(
        &self,
        cx: &mut Context,
        input: models::DueNotesInput,
    ) -> Result<Vec<models::Note>, errors::ListDueNotesError> {
        let op = cx.op;
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
        .map_err(|e| op.fault("listing notes due soon", e))
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
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::GetNoteError>().await?;

        match load(&mut *tx, &caller.tenant, &input.id, "").await {
            Ok(Some(note)) => Ok(note),
            Ok(None) => Err(errors::GetNoteError::NotFound(not_found(&input.id))),
            Err(e) => Err(op.fault("reading the note", e)),
        }
    }

    async fn open_note(
        &self,
        cx: &mut Context,
        input: models::OpenNoteInput,
    ) -> Result<models::Redirect, errors::OpenNoteError> {
        let op = cx.op;
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
            Err(e) => Err(op.fault("reading the note", e)),
        }
    }

    async fn update_note(
        &self,
        cx: &mut Context,
        input: models::UpdateNoteInput,
    ) -> Result<models::Note, errors::UpdateNoteError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::UpdateNoteError>().await?;
        let updated = change(&mut *tx, self.store.for_update(), caller, input).await.map_err(|failure| match failure {
            Refused::NotFound(p) => errors::UpdateNoteError::NotFound(p),
            Refused::Conflict(p) => errors::UpdateNoteError::Conflict(p),
            Refused::Precondition(p) => errors::UpdateNoteError::PreconditionFailed(p),
            Refused::Fault(e) => op.fault("updating the note", e),
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
        let op = cx.op;
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
                Refused::Precondition(p) => op.fault("archiving the note", p.message),
                Refused::Fault(e) => op.fault("archiving the note", e),
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
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::DeleteNoteError>().await?;
        // The version `If-Match` names must be the one deleted, so the note is read first.
        let current = match load(&mut *tx, &caller.tenant, &input.id, self.store.for_update()).await {
            Ok(Some(note)) => input.if_match.check(&note).map_err(errors::DeleteNoteError::PreconditionFailed),
            Ok(None) => Err(errors::DeleteNoteError::NotFound(not_found(&input.id))),
            Err(e) => Err(op.fault("reading the note", e)),
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
            Err(e) => Err(op.fault("deleting the note", e)),
        };
        result?;
        self.changed_on_commit(cx);
        Ok(())
    }
}

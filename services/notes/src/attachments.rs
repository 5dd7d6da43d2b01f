//! Files attached to notes, by name. The decoder has stored an upload's content as a pending
//! blob before the operation runs; the operation keeps it in the transaction that records the
//! attachment, so a refused upload (no such note, a name taken) leaves nothing anyone can reach,
//! and the platform sweeps it.

use notes_api::notes::{errors, models};
use runtime::Context;
use runtime::OperationFault;
use runtime::blobs::Blobs;
use runtime::caller::Caller;
use runtime::store::{Nullable, Tx, now_ms};
use sqlx::Row;
use support::{Problem, Upload};

use crate::rows::{not_found, time};
use crate::state::Notes;

const COLUMNS: &str = "name, media_type, size, sha256, caption, created_at";

fn attachment(row: &sqlx::any::AnyRow) -> models::Attachment {
    models::Attachment {
        name: row.get(0),
        media_type: row.get(1),
        size: row.get(2),
        sha256: row.get(3),
        caption: row.get(4),
        created_at: time(row.get(5)),
    }
}

fn missing(id: &str, name: &str) -> Problem {
    Problem::new(format!("note {id} has no attachment {name}")).with("id", id).with("name", name)
}

/// Whether the caller's tenant has note `id`; `lock` as in `load`.
async fn note_exists(tx: &mut Tx, tenant: &str, id: &str, lock: &'static str) -> Result<bool, sqlx::Error> {
    let query = format!("SELECT 1 FROM notes WHERE tenant_id = $1 AND id = $2{lock}");
    // `lock` is a constant: no input reaches the text.
    Ok(sqlx::query(sqlx::AssertSqlSafe(query)).bind(tenant).bind(id).fetch_optional(&mut **tx).await?.is_some())
}

/// An attachment to record: the file stored for note `note` under `name`.
struct NewAttachment<'a> {
    note: &'a str,
    name: &'a str,
    upload: &'a Upload,
    caption: Option<&'a str>,
}

/// Why an attachment was not recorded.
enum Refused {
    NoNote,
    Taken,
    Fault(sqlx::Error),
}

impl From<sqlx::Error> for Refused {
    fn from(e: sqlx::Error) -> Self {
        Refused::Fault(e)
    }
}

impl Notes {
    /// Records `new` in `tx`, keeping its blob; with `replace`, an attachment of that name goes
    /// (its blob with it), else the name must be free.
    async fn record(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        new: NewAttachment<'_>,
        replace: bool,
    ) -> Result<models::Attachment, Refused> {
        let NewAttachment { note: id, name, upload, caption } = new;
        let tenant = caller.tenant.as_str();
        if !note_exists(tx, tenant, id, self.store.for_update()).await? {
            return Err(Refused::NoNote);
        }
        let old =
            sqlx::query("SELECT blob_id FROM note_attachments WHERE tenant_id = $1 AND note_id = $2 AND name = $3")
                .bind(tenant)
                .bind(id)
                .bind(name)
                .fetch_optional(&mut **tx)
                .await?;
        if let Some(old) = old {
            if !replace {
                return Err(Refused::Taken);
            }
            let blob: String = old.get(0);
            Blobs::delete(tx, tenant, &blob).await?;
            sqlx::query("DELETE FROM note_attachments WHERE tenant_id = $1 AND note_id = $2 AND name = $3")
                .bind(tenant)
                .bind(id)
                .bind(name)
                .execute(&mut **tx)
                .await?;
        }
        if !Blobs::keep(tx, tenant, &upload.id).await? {
            // Swept already (an upload older than the sweep's hour): as if storage had failed.
            return Err(Refused::Fault(sqlx::Error::RowNotFound));
        }
        let now = now_ms();
        sqlx::query(
            "INSERT INTO note_attachments (tenant_id, note_id, name, blob_id, media_type, size, sha256, caption, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(tenant)
        .bind(id)
        .bind(name)
        .bind(upload.id.as_str())
        .bind(upload.media_type.as_str())
        .bind(i64::try_from(upload.size).unwrap_or(i64::MAX))
        .bind(upload.sha256.as_str())
        .bind(Nullable(caption.map(str::to_string)))
        .bind(now)
        .execute(&mut **tx)
        .await?;
        Ok(models::Attachment {
            name: name.to_string(),
            media_type: upload.media_type.clone(),
            size: i64::try_from(upload.size).unwrap_or(i64::MAX),
            sha256: upload.sha256.clone(),
            caption: caption.map(str::to_string),
            created_at: time(now),
        })
    }

    pub(crate) async fn attach(
        &self,
        cx: &mut Context,
        input: models::UploadAttachmentInput,
    ) -> Result<models::Attachment, errors::UploadAttachmentError> {
        let op = cx.op;
        use errors::UploadAttachmentError as E;
        let Some(name) = input.file.filename.clone() else {
            return Err(E::Validation(
                Problem::new("file needs a file name (the part's `filename`)").with("field", "file"),
            ));
        };
        cx.target(name.clone());
        let (tx, caller, _) = cx.parts::<E>().await?;
        let new =
            NewAttachment { note: &input.id, name: &name, upload: &input.file, caption: input.caption.as_deref() };
        let recorded = self.record(&mut *tx, caller, new, false).await;

        recorded.map_err(|refused| match refused {
            Refused::NoNote => E::NotFound(not_found(&input.id)),
            Refused::Taken => E::NameTaken(
                Problem::new(format!("note {} has an attachment {name}", input.id)).with("name", name.as_str()),
            ),
            Refused::Fault(e) => op.fault("recording the attachment", e),
        })
    }

    pub(crate) async fn attach_named(
        &self,
        cx: &mut Context,
        input: models::PutAttachmentInput,
    ) -> Result<models::Attachment, errors::PutAttachmentError> {
        let op = cx.op;
        use errors::PutAttachmentError as E;
        let (tx, caller, _) = cx.parts::<errors::PutAttachmentError>().await?;
        let new = NewAttachment { note: &input.id, name: &input.name, upload: &input.content, caption: None };
        let recorded = self.record(&mut *tx, caller, new, true).await;

        recorded.map_err(|refused| match refused {
            Refused::NoNote => E::NotFound(not_found(&input.id)),
            Refused::Taken => op.fault("replacing the attachment", "a replace found the name taken"),
            Refused::Fault(e) => op.fault("recording the attachment", e),
        })
    }

    pub(crate) async fn attachments(
        &self,
        cx: &mut Context,
        input: models::AttachmentsInput,
    ) -> Result<Vec<models::Attachment>, errors::ListAttachmentsError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::ListAttachmentsError>().await?;
        let listed = async {
            if !note_exists(&mut *tx, &caller.tenant, &input.id, "").await? {
                return Ok(None);
            }
            let query =
                format!("SELECT {COLUMNS} FROM note_attachments WHERE tenant_id = $1 AND note_id = $2 ORDER BY name");
            // `COLUMNS` is a constant: no input reaches the text.
            let rows = sqlx::query(sqlx::AssertSqlSafe(query))
                .bind(caller.tenant.as_str())
                .bind(input.id.as_str())
                .fetch_all(&mut **tx)
                .await?;
            Ok::<_, sqlx::Error>(Some(rows.iter().map(attachment).collect()))
        }
        .await;

        match listed {
            Ok(Some(list)) => Ok(list),
            Ok(None) => Err(errors::ListAttachmentsError::NotFound(not_found(&input.id))),
            Err(e) => Err(op.fault("listing attachments", e)),
        }
    }

    pub(crate) async fn attachment_file(
        &self,
        cx: &mut Context,
        input: models::AttachmentRef,
    ) -> Result<support::File, errors::GetAttachmentError> {
        let op = cx.op;
        use errors::GetAttachmentError as E;
        let (tx, caller, _) = cx.parts::<E>().await?;
        let row = sqlx::query(
            "SELECT blob_id, media_type FROM note_attachments WHERE tenant_id = $1 AND note_id = $2 AND name = $3",
        )
        .bind(caller.tenant.as_str())
        .bind(input.id.as_str())
        .bind(input.name.as_str())
        .fetch_optional(&mut **tx)
        .await;
        let found = match row {
            Ok(Some(row)) => Ok((row.get::<String, _>(0), row.get::<String, _>(1))),
            Ok(None) => Err(E::NotFound(missing(&input.id, &input.name))),
            Err(e) => Err(op.fault("reading the attachment", e)),
        };
        let (blob, media_type) = found?;
        // The file is read through the store: the read's transaction ends first. Tagged with its
        // digest and answerable in parts (`Range`), as the spec says.
        cx.tx.end_read::<E>().await?;
        match self.blobs.file(&cx.caller.tenant, &blob, &media_type).await {
            Ok(Some(file)) => Ok(file.named(input.name)),
            Ok(None) => Err(E::NotFound(missing(&input.id, &input.name))),
            Err(e) => Err(op.fault("reading the attachment's file", e)),
        }
    }

    pub(crate) async fn detach(
        &self,
        cx: &mut Context,
        input: models::DeleteAttachmentInput,
    ) -> Result<(), errors::DeleteAttachmentError> {
        let op = cx.op;
        let (tx, caller, _) = cx.parts::<errors::DeleteAttachmentError>().await?;
        let deleted = async {
            let row = sqlx::query(
                "DELETE FROM note_attachments WHERE tenant_id = $1 AND note_id = $2 AND name = $3 RETURNING blob_id",
            )
            .bind(caller.tenant.as_str())
            .bind(input.id.as_str())
            .bind(input.name.as_str())
            .fetch_optional(&mut **tx)
            .await?;
            let Some(row) = row else { return Ok(false) };
            Blobs::delete(&mut *tx, &caller.tenant, &row.get::<String, _>(0)).await?;
            Ok::<_, sqlx::Error>(true)
        }
        .await;

        match deleted {
            Ok(true) => Ok(()),
            Ok(false) => Err(errors::DeleteAttachmentError::NotFound(missing(&input.id, &input.name))),
            Err(e) => Err(op.fault("deleting the attachment", e)),
        }
    }
}

/// Deletes every attachment of note `id` (their blobs with them), in `tx`: part of deleting the
/// note.
pub(crate) async fn delete_all(tx: &mut Tx, tenant: &str, id: &str) -> Result<(), sqlx::Error> {
    let rows = sqlx::query("SELECT blob_id FROM note_attachments WHERE tenant_id = $1 AND note_id = $2")
        .bind(tenant)
        .bind(id)
        .fetch_all(&mut **tx)
        .await?;
    for row in rows {
        Blobs::delete(tx, tenant, &row.get::<String, _>(0)).await?;
    }
    sqlx::query("DELETE FROM note_attachments WHERE tenant_id = $1 AND note_id = $2")
        .bind(tenant)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

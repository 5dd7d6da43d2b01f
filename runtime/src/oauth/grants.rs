//! What a user has granted to applications: the clients they approved (registered here or named
//! by a metadata document), with the scopes and the sign-ins still live, and the revocation that
//! ends them. The console's "Connected applications" page is built on these.

use serde::Serialize;
use sqlx::Row;

use crate::store::{Store, now_ms};

/// An application a user approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Application {
    /// Its client id: a registered id, or its metadata document's URL.
    pub client_id: String,
    /// The name it gave (its own claim), when it gave one.
    pub name: Option<String>,
    /// `registered` (dynamic registration or the server's own) or `document` (Client ID Metadata
    /// Document).
    pub kind: &'static str,
    /// Where a document-named client is published (the client id's host).
    pub host: Option<String>,
    /// Every scope the user approved for it, sorted.
    pub scopes: Vec<String>,
    /// When the user last approved it (epoch ms).
    pub approved_at: i64,
    /// Refresh tokens it holds that still work.
    pub active_refresh_tokens: i64,
    /// When it last received tokens (epoch ms), if ever.
    pub last_issued_at: Option<i64>,
}

/// What a revocation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Revoked {
    /// Approvals removed (the next authorization asks again).
    pub consents: u64,
    /// Refresh tokens revoked (access tokens already issued live out their hour).
    pub refresh_tokens: u64,
}

/// The applications `user` approved, most recently approved first.
pub async fn list(store: &Store, user: &str) -> sqlx::Result<Vec<Application>> {
    let consents = sqlx::query(
        "SELECT c.client_id, c.scope, c.granted_at, COALESCE(c.client_name, r.name) \
         FROM oauth_consents c LEFT JOIN oauth_clients r ON r.id = c.client_id WHERE c.user_id = $1",
    )
    .bind(user)
    .fetch_all(store.pool())
    .await?;
    let tokens = sqlx::query(
        "SELECT client_id, \
                SUM(CASE WHEN revoked_at IS NULL AND rotated_at IS NULL AND expires_at > $2 THEN 1 ELSE 0 END), \
                MAX(created_at) \
         FROM oauth_refresh_tokens WHERE user_id = $1 GROUP BY client_id",
    )
    .bind(user)
    .bind(now_ms())
    .fetch_all(store.pool())
    .await?;
    let mut apps: Vec<Application> = Vec::new();
    for row in &consents {
        let client_id: String = row.get(0);
        let at = match apps.iter().position(|a| a.client_id == client_id) {
            Some(at) => at,
            None => {
                let document = super::documents::is_document_id(&client_id);
                let host = document.then(|| url::Url::parse(&client_id).ok()?.host_str().map(str::to_string)).flatten();
                apps.push(Application {
                    client_id: client_id.clone(),
                    name: None,
                    kind: if document { "document" } else { "registered" },
                    host,
                    scopes: Vec::new(),
                    approved_at: 0,
                    active_refresh_tokens: 0,
                    last_issued_at: None,
                });
                apps.len() - 1
            }
        };
        let app = &mut apps[at];
        app.scopes.extend(row.get::<String, _>(1).split_whitespace().map(str::to_string));
        let granted: i64 = row.get(2);
        if granted >= app.approved_at {
            app.approved_at = granted;
            app.name = row.get::<Option<String>, _>(3).or(app.name.take());
        }
    }
    for row in &tokens {
        let client_id: String = row.get(0);
        if let Some(app) = apps.iter_mut().find(|a| a.client_id == client_id) {
            app.active_refresh_tokens = row.get::<Option<i64>, _>(1).unwrap_or(0);
            app.last_issued_at = row.get(2);
        }
    }
    for app in &mut apps {
        app.scopes.sort();
        app.scopes.dedup();
    }
    apps.sort_by(|a, b| b.approved_at.cmp(&a.approved_at).then_with(|| a.client_id.cmp(&b.client_id)));
    Ok(apps)
}

/// Ends everything `user` granted `client_id`: the approvals (its next authorization asks again),
/// its refresh tokens, and codes not yet redeemed; in one transaction.
pub async fn revoke(store: &Store, user: &str, client_id: &str) -> sqlx::Result<Revoked> {
    let now = now_ms();
    let mut tx = store.begin().await?;
    let consents = sqlx::query("DELETE FROM oauth_consents WHERE user_id = $1 AND client_id = $2")
        .bind(user)
        .bind(client_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    let refresh_tokens = sqlx::query(
        "UPDATE oauth_refresh_tokens SET revoked_at = $3 \
         WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL AND rotated_at IS NULL AND expires_at > $3",
    )
    .bind(user)
    .bind(client_id)
    .bind(now)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    // Rotated tokens of those families too, so a replay finds them revoked as well.
    sqlx::query(
        "UPDATE oauth_refresh_tokens SET revoked_at = $3 WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL",
    )
    .bind(user)
    .bind(client_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE oauth_codes SET used_at = $3 WHERE user_id = $1 AND client_id = $2 AND used_at IS NULL")
        .bind(user)
        .bind(client_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Revoked { consents, refresh_tokens })
}

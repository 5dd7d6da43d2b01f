//! The yardstick of `cargo xtask bench`: what a skilled engineer would write by hand for the
//! vault's two hottest routes, with none of Specwright's generator or platform, over the same
//! database (a data directory the `specwright` binary created) and the same tokens.
//!
//! `bench-reference hello ADDR`: axum hello-world, the ceiling of the machine.
//! `bench-reference vault ADDR DATA_DIR PUBLIC_URL [DATABASE_URL]`: `GET /api/v1/credentials` and
//! `GET /api/v1/credentials/{key}/reveal`, each doing the work the vault does: verify the EdDSA
//! access token (issuer, audience, expiry, scope), load the caller's tenant role, then for the
//! list count the matches, read the page and the page's tags in one query, and for the reveal
//! read the credential and its version and open it (AES-256-GCM under a cached data key); and
//! write one audit row per request, durable before the response, through a group commit (one
//! writer, reads on their own connections, as a hand-written service would do it).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use anyhow::{Context, Result, anyhow};
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use ed25519_dalek::pkcs8::DecodePrivateKey;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{AnyPool, Row};
use tokio::sync::{mpsc, oneshot};

/// The same allocator as the `specwright` binary (mimalloc rather than glibc's allocator), so the
/// comparison is of the code: a request allocates and frees many small objects
/// (JSON values, rows), and glibc spent a tenth of a busy server's time consolidating them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Deserialize)]
struct Claims {
    sub: String,
    scope: String,
    tenant: String,
    jti: String,
}

struct AuditRow {
    tenant: String,
    actor: String,
    jti: String,
    operation: &'static str,
    targets: String,
    done: oneshot::Sender<bool>,
}

struct App {
    reads: AnyPool,
    decoding: DecodingKey,
    validation: Validation,
    audit: mpsc::Sender<AuditRow>,
    masters: HashMap<String, [u8; 32]>,
    data_keys: RwLock<HashMap<String, Aes256Gcm>>,
}

type Shared = Arc<App>;

fn error(status: StatusCode, code: &str) -> Response {
    (status, axum::Json(json!({ "error": { "code": code } }))).into_response()
}

impl App {
    fn caller(&self, headers: &HeaderMap) -> Result<Claims, (StatusCode, &'static str)> {
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or((StatusCode::UNAUTHORIZED, "unauthenticated"))?;
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|_| (StatusCode::UNAUTHORIZED, "invalid_token"))?
            .claims;
        let allowed = claims.scope.split(' ').any(|s| matches!(s, "vault:read" | "vault:write" | "vault:admin"));
        if !allowed {
            return Err((StatusCode::FORBIDDEN, "insufficient_scope"));
        }
        Ok(claims)
    }

    async fn is_admin(&self, tx: &mut sqlx::Transaction<'_, sqlx::Any>, c: &Claims) -> sqlx::Result<bool> {
        let role = sqlx::query("SELECT role FROM role_assignments WHERE tenant_id = $1 AND user_id = $2")
            .bind(&c.tenant)
            .bind(&c.sub)
            .fetch_optional(&mut **tx)
            .await?;
        Ok(role.is_some_and(|r| r.get::<String, _>(0) == "admin"))
    }

    async fn audited(&self, c: &Claims, operation: &'static str, targets: String) -> bool {
        let (done, outcome) = oneshot::channel();
        let row =
            AuditRow { tenant: c.tenant.clone(), actor: c.sub.clone(), jti: c.jti.clone(), operation, targets, done };
        self.audit.send(row).await.is_ok() && outcome.await.unwrap_or(false)
    }

    async fn data_key(&self, tx: &mut sqlx::Transaction<'_, sqlx::Any>, id: &str) -> Result<Aes256Gcm> {
        if let Some(k) = self.data_keys.read().map_err(|_| anyhow!("poisoned"))?.get(id) {
            return Ok(k.clone());
        }
        let row = sqlx::query("SELECT master_key_id, wrapped FROM data_keys WHERE id = $1")
            .bind(id)
            .fetch_one(&mut **tx)
            .await?;
        let master = self.masters.get(&row.get::<String, _>(0)).context("unknown master key")?;
        let raw = open(
            &Aes256Gcm::new_from_slice(master)?,
            &row.get::<Vec<u8>, _>(1),
            format!("specwright/data-key/v1|{id}").as_bytes(),
        )?;
        let key = Aes256Gcm::new_from_slice(&raw)?;
        self.data_keys.write().map_err(|_| anyhow!("poisoned"))?.insert(id.to_string(), key.clone());
        Ok(key)
    }
}

fn open(key: &Aes256Gcm, sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
    anyhow::ensure!(sealed.len() > 28, "short");
    let (nonce, ct) = sealed.split_at(12);
    let nonce: [u8; 12] = nonce.try_into()?;
    key.decrypt(&Nonce::from(nonce), Payload { msg: ct, aad }).map_err(|_| anyhow!("does not open"))
}

#[derive(Deserialize)]
struct ListQuery {
    per_page: Option<i64>,
    page: Option<i64>,
}

async fn list(State(app): State<Shared>, headers: HeaderMap, Query(q): Query<ListQuery>) -> Response {
    let caller = match app.caller(&headers) {
        Ok(c) => c,
        Err((status, code)) => return error(status, code),
    };
    let (per_page, page) = (q.per_page.unwrap_or(20).clamp(1, 100), q.page.unwrap_or(1).max(1));
    let body = async {
        let mut tx = app.reads.begin().await?;
        if !app.is_admin(&mut tx, &caller).await? {
            return Ok::<_, sqlx::Error>(None);
        }
        let total: i64 = sqlx::query("SELECT COUNT(*) FROM credentials WHERE tenant_id = $1 AND state = 'active'")
            .bind(&caller.tenant)
            .fetch_one(&mut *tx)
            .await?
            .get(0);
        let rows = sqlx::query(
            "SELECT key, kind, folder_id, description, state, current_version, updated_at FROM credentials \
             WHERE tenant_id = $1 AND state = 'active' ORDER BY key LIMIT $2 OFFSET $3",
        )
        .bind(&caller.tenant)
        .bind(per_page)
        .bind((page - 1) * per_page)
        .fetch_all(&mut *tx)
        .await?;
        let keys: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        let mut tags: HashMap<String, Vec<String>> = HashMap::new();
        if !keys.is_empty() {
            let placeholders: Vec<String> = (0..keys.len()).map(|i| format!("${}", i + 2)).collect();
            let sql = format!(
                "SELECT key, tag FROM credential_tags WHERE tenant_id = $1 AND key IN ({}) ORDER BY tag",
                placeholders.join(", ")
            );
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(&caller.tenant);
            for k in &keys {
                q = q.bind(k);
            }
            for t in q.fetch_all(&mut *tx).await? {
                tags.entry(t.get(0)).or_default().push(t.get(1));
            }
        }
        tx.commit().await?;
        let items: Vec<Value> = rows
            .iter()
            .map(|r| {
                let key: String = r.get(0);
                let updated = chrono::DateTime::from_timestamp_millis(r.get::<i64, _>(6)).unwrap_or_default();
                json!({
                    "key": key,
                    "kind": r.get::<String, _>(1),
                    "folder_id": r.get::<Option<String>, _>(2),
                    "description": r.get::<Option<String>, _>(3),
                    "tags": tags.remove(&key).unwrap_or_default(),
                    "state": r.get::<String, _>(4),
                    "current_version": r.get::<i64, _>(5),
                    "updated_at": updated.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                })
            })
            .collect();
        Ok(Some(json!({ "data": items, "meta": { "total": total, "page": page, "per_page": per_page } })))
    };
    match body.await {
        Ok(Some(body)) if app.audited(&caller, "list_credentials", "[]".into()).await => {
            axum::Json(body).into_response()
        }
        Ok(Some(_)) | Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        Ok(None) => error(StatusCode::FORBIDDEN, "auth/forbidden"),
    }
}

async fn reveal(State(app): State<Shared>, headers: HeaderMap, Path(key): Path<String>) -> Response {
    let caller = match app.caller(&headers) {
        Ok(c) => c,
        Err((status, code)) => return error(status, code),
    };
    let body = async {
        let mut tx = app.reads.begin().await?;
        if !app.is_admin(&mut tx, &caller).await? {
            return Ok::<_, anyhow::Error>(None);
        }
        let Some(row) = sqlx::query(
            "SELECT key, kind, username, state, current_version FROM credentials WHERE tenant_id = $1 AND key = $2",
        )
        .bind(&caller.tenant)
        .bind(&key)
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Ok(None);
        };
        let version: i64 = row.get(4);
        let v = sqlx::query(
            "SELECT data_key_id, sealed FROM credential_versions WHERE tenant_id = $1 AND key = $2 AND version = $3",
        )
        .bind(&caller.tenant)
        .bind(&key)
        .bind(version)
        .fetch_one(&mut *tx)
        .await?;
        let data_key = app.data_key(&mut tx, &v.get::<String, _>(0)).await?;
        tx.commit().await?;
        let aad =
            format!("specwright/secret/v1|{}:{}|{}:{key}|{version}", caller.tenant.len(), caller.tenant, key.len());
        let value = String::from_utf8(open(&data_key, &v.get::<Vec<u8>, _>(1), aad.as_bytes())?)?;
        Ok(Some(json!({ "data": {
            "key": row.get::<String, _>(0), "version": version, "kind": row.get::<String, _>(1),
            "username": row.get::<Option<String>, _>(2), "value": value,
        }})))
    };
    match body.await {
        Ok(Some(body)) if app.audited(&caller, "reveal_credential", json!([key]).to_string()).await => {
            let mut r = axum::Json(body).into_response();
            r.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
            r
        }
        Ok(Some(_)) | Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        Ok(None) => error(StatusCode::NOT_FOUND, "resource/not-found"),
    }
}

/// The group commit: every row queued while the last commit ran goes into the next one.
async fn audit_writer(writer: AnyPool, mut queue: mpsc::Receiver<AuditRow>, sqlite: bool) {
    while let Some(first) = queue.recv().await {
        let mut rows = vec![first];
        while rows.len() < 256 {
            match queue.try_recv() {
                Ok(r) => rows.push(r),
                Err(_) => break,
            }
        }
        let committed = async {
            let mut tx = if sqlite { writer.begin_with("BEGIN IMMEDIATE").await? } else { writer.begin().await? };
            for r in &rows {
                sqlx::query(
                    "INSERT INTO audit_events (tenant_id, id, occurred_at, request_id, actor, auth_method, token_id, \
                     scope, operation, targets, outcome, status, error_code) \
                     VALUES ($1, $2, $3, '', $4, 'bearer', $5, 'vault:read', $6, $7, 'allowed', 200, NULL)",
                )
                .bind(&r.tenant)
                .bind(format!("aud_{}", uuid::Uuid::now_v7().simple()))
                .bind(chrono::Utc::now().timestamp_millis())
                .bind(&r.actor)
                .bind(&r.jti)
                .bind(r.operation)
                .bind(&r.targets)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await
        }
        .await
        .is_ok();
        for r in rows {
            let _ = r.done.send(committed);
        }
    }
}

async fn vault(addr: &str, data_dir: &str, public_url: &str, database_url: Option<&str>) -> Result<()> {
    install_default_drivers();
    let dir = std::path::Path::new(data_dir);
    let pem = std::fs::read_to_string(dir.join("signing-key.pem"))?;
    let public = ed25519_dalek::SigningKey::from_pkcs8_pem(&pem)?.verifying_key().to_bytes();
    let mut validation = Validation::new(Algorithm::EdDSA);
    validation.set_issuer(&[public_url]);
    validation.set_audience(&[format!("{public_url}/api/v1")]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let mut masters = HashMap::new();
    for line in std::fs::read_to_string(dir.join("master.key"))?.lines().filter(|l| !l.trim().is_empty()) {
        let (id, b64) = line.split_once(' ').context("master key line")?;
        let bytes = base64::engine::general_purpose::STANDARD.decode(b64.trim())?;
        masters.insert(id.to_string(), bytes.try_into().map_err(|_| anyhow!("master key length"))?);
    }
    let (writer, reads, sqlite) = match database_url {
        Some(url) => {
            let pool = AnyPoolOptions::new().max_connections(16).connect(url).await?;
            (pool.clone(), pool, false)
        }
        None => {
            let url = format!("sqlite://{}", dir.join("specwright.db").display());
            let writer = AnyPoolOptions::new().max_connections(1).connect(&url).await?;
            let reads = AnyPoolOptions::new()
                .max_connections(4)
                .after_connect(|c, _| {
                    Box::pin(async move { sqlx::query("PRAGMA query_only = ON").execute(c).await.map(|_| ()) })
                })
                .connect(&url)
                .await?;
            (writer, reads, true)
        }
    };
    let (audit, queue) = mpsc::channel(1024);
    tokio::spawn(audit_writer(writer, queue, sqlite));
    let app = Arc::new(App {
        reads,
        decoding: DecodingKey::from_ed_der(&public),
        validation,
        audit,
        masters,
        data_keys: RwLock::default(),
    });
    let router = Router::new()
        .route("/api/v1/credentials", get(list))
        .route("/api/v1/credentials/{key}/reveal", axum::routing::post(reveal))
        .with_state(app);
    axum::serve(tokio::net::TcpListener::bind(addr).await?, router).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [_, "hello", addr] => {
            let router = Router::new().route("/", get(|| async { "Hello, World!" }));
            axum::serve(tokio::net::TcpListener::bind(addr).await?, router).await?;
            Ok(())
        }
        [_, "vault", addr, data_dir, public_url] => vault(addr, data_dir, public_url, None).await,
        [_, "vault", addr, data_dir, public_url, url] => vault(addr, data_dir, public_url, Some(url)).await,
        _ => anyhow::bail!("usage: bench-reference hello ADDR | vault ADDR DATA_DIR PUBLIC_URL [DATABASE_URL]"),
    }
}

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
//!
//! On SQLite it reads through sqlx (the team's rusqlite anchor, `../shared/perf`, measures the
//! driver's share there); on PostgreSQL through tokio-postgres, the driver a hand-written
//! PostgreSQL service would pick, with a deadpool pool and statements prepared once per
//! connection, so the PostgreSQL ratio is against a server with no driver layer in between.

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

/// Where the reference reads: sqlx over SQLite, or tokio-postgres.
enum Reads {
    Sqlx(AnyPool),
    Postgres(deadpool_postgres::Pool),
}

/// A credential as the list shows it.
struct Listed {
    key: String,
    kind: String,
    folder_id: Option<String>,
    description: Option<String>,
    state: String,
    current_version: i64,
    updated_at: i64,
}

/// A [`Listed`] from a row of [`PAGE`]: the same for sqlx's rows and tokio-postgres's, whose
/// `get` differ only in their type parameters.
macro_rules! listed {
    ($r:expr) => {
        Listed {
            key: $r.get(0),
            kind: $r.get(1),
            folder_id: $r.get(2),
            description: $r.get(3),
            state: $r.get(4),
            current_version: $r.get(5),
            updated_at: $r.get(6),
        }
    };
}

/// A [`Sealed`] from a row of [`CREDENTIAL`] and one of [`VERSION`] (as [`listed!`]).
macro_rules! sealed {
    ($credential:expr, $version:expr, $sealed:expr) => {
        Sealed {
            key: $credential.get(0),
            kind: $credential.get(1),
            username: $credential.get(2),
            version: $version,
            data_key_id: $sealed.get(0),
            sealed: $sealed.get(1),
        }
    };
}

/// A page of credentials, the total and each listed key's tags.
type Page = (i64, Vec<Listed>, HashMap<String, Vec<String>>);

/// What a reveal reads: the credential and its current version's sealed value.
struct Sealed {
    key: String,
    kind: String,
    username: Option<String>,
    version: i64,
    data_key_id: String,
    sealed: Vec<u8>,
}

struct App {
    reads: Reads,
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

    async fn audited(&self, c: &Claims, operation: &'static str, targets: String) -> bool {
        let (done, outcome) = oneshot::channel();
        let row =
            AuditRow { tenant: c.tenant.clone(), actor: c.sub.clone(), jti: c.jti.clone(), operation, targets, done };
        self.audit.send(row).await.is_ok() && outcome.await.unwrap_or(false)
    }

    /// The data key `id`, unwrapped once and kept.
    async fn data_key(&self, id: &str) -> Result<Aes256Gcm> {
        if let Some(k) = self.data_keys.read().map_err(|_| anyhow!("poisoned"))?.get(id) {
            return Ok(k.clone());
        }
        const WRAPPED: &str = "SELECT master_key_id, wrapped FROM data_keys WHERE id = $1";
        let (master, wrapped): (String, Vec<u8>) = match &self.reads {
            Reads::Sqlx(pool) => {
                let row = sqlx::query(WRAPPED).bind(id).fetch_one(pool).await?;
                (row.get(0), row.get(1))
            }
            Reads::Postgres(pool) => {
                let client = pool.get().await?;
                let row = client.query_one(&client.prepare_cached(WRAPPED).await?, &[&id]).await?;
                (row.get(0), row.get(1))
            }
        };
        let master = self.masters.get(&master).context("unknown master key")?;
        let raw =
            open(&Aes256Gcm::new_from_slice(master)?, &wrapped, format!("specwright/data-key/v1|{id}").as_bytes())?;
        let key = Aes256Gcm::new_from_slice(&raw)?;
        self.data_keys.write().map_err(|_| anyhow!("poisoned"))?.insert(id.to_string(), key.clone());
        Ok(key)
    }

    /// The caller's page of credentials, or `None` when the caller is not the tenant's admin.
    async fn page(&self, c: &Claims, per_page: i64, page: i64) -> Result<Option<Page>> {
        let offset = (page - 1) * per_page;
        match &self.reads {
            Reads::Sqlx(pool) => {
                let mut tx = pool.begin().await?;
                if !sqlx_admin(&mut tx, c).await? {
                    return Ok(None);
                }
                let total: i64 = sqlx::query(COUNT).bind(&c.tenant).fetch_one(&mut *tx).await?.get(0);
                let rows = sqlx::query(PAGE).bind(&c.tenant).bind(per_page).bind(offset).fetch_all(&mut *tx).await?;
                let listed: Vec<Listed> = rows.iter().map(|r| listed!(r)).collect();
                let mut tags: HashMap<String, Vec<String>> = HashMap::new();
                if !listed.is_empty() {
                    let mut q = sqlx::query(sqlx::AssertSqlSafe(tags_of(listed.len()))).bind(&c.tenant);
                    for l in &listed {
                        q = q.bind(&l.key);
                    }
                    for t in q.fetch_all(&mut *tx).await? {
                        tags.entry(t.get(0)).or_default().push(t.get(1));
                    }
                }
                tx.commit().await?;
                Ok(Some((total, listed, tags)))
            }
            Reads::Postgres(pool) => {
                let client = pool.get().await?;
                if !postgres_admin(&client, c).await? {
                    return Ok(None);
                }
                let total: i64 = client.query_one(&client.prepare_cached(COUNT).await?, &[&c.tenant]).await?.get(0);
                let rows = client.query(&client.prepare_cached(PAGE).await?, &[&c.tenant, &per_page, &offset]).await?;
                let listed: Vec<Listed> = rows.iter().map(|r| listed!(r)).collect();
                let mut tags: HashMap<String, Vec<String>> = HashMap::new();
                if !listed.is_empty() {
                    let keys: Vec<&str> = listed.iter().map(|l| l.key.as_str()).collect();
                    let statement = client
                        .prepare_cached(
                            "SELECT key, tag FROM credential_tags WHERE tenant_id = $1 AND key = ANY($2) ORDER BY tag",
                        )
                        .await?;
                    for t in client.query(&statement, &[&c.tenant, &keys]).await? {
                        tags.entry(t.get(0)).or_default().push(t.get(1));
                    }
                }
                Ok(Some((total, listed, tags)))
            }
        }
    }

    /// The caller's credential `key` with its current version, or `None` when the caller is not
    /// the tenant's admin or the tenant has no such credential.
    async fn sealed(&self, c: &Claims, key: &str) -> Result<Option<Sealed>> {
        match &self.reads {
            Reads::Sqlx(pool) => {
                let mut tx = pool.begin().await?;
                if !sqlx_admin(&mut tx, c).await? {
                    return Ok(None);
                }
                let Some(row) = sqlx::query(CREDENTIAL).bind(&c.tenant).bind(key).fetch_optional(&mut *tx).await?
                else {
                    return Ok(None);
                };
                let version: i64 = row.get(4);
                let v = sqlx::query(VERSION).bind(&c.tenant).bind(key).bind(version).fetch_one(&mut *tx).await?;
                tx.commit().await?;
                Ok(Some(sealed!(row, version, v)))
            }
            Reads::Postgres(pool) => {
                let client = pool.get().await?;
                if !postgres_admin(&client, c).await? {
                    return Ok(None);
                }
                let Some(row) = client.query_opt(&client.prepare_cached(CREDENTIAL).await?, &[&c.tenant, &key]).await?
                else {
                    return Ok(None);
                };
                let version: i64 = row.get(4);
                let v = client.query_one(&client.prepare_cached(VERSION).await?, &[&c.tenant, &key, &version]).await?;
                Ok(Some(sealed!(row, version, v)))
            }
        }
    }
}

/// Whether the caller is the tenant's admin, read through sqlx.
async fn sqlx_admin(tx: &mut sqlx::Transaction<'_, sqlx::Any>, c: &Claims) -> sqlx::Result<bool> {
    let role = sqlx::query(ROLE).bind(&c.tenant).bind(&c.sub).fetch_optional(&mut **tx).await?;
    Ok(role.is_some_and(|r| r.get::<String, _>(0) == "admin"))
}

/// Whether the caller is the tenant's admin, read through tokio-postgres.
async fn postgres_admin(client: &deadpool_postgres::Client, c: &Claims) -> Result<bool> {
    let role = client.query_opt(&client.prepare_cached(ROLE).await?, &[&c.tenant, &c.sub]).await?;
    Ok(role.is_some_and(|r| r.get::<_, &str>(0) == "admin"))
}

const ROLE: &str = "SELECT role FROM role_assignments WHERE tenant_id = $1 AND user_id = $2";
const COUNT: &str = "SELECT COUNT(*) FROM credentials WHERE tenant_id = $1 AND state = 'active'";
const PAGE: &str = "SELECT key, kind, folder_id, description, state, current_version, updated_at FROM credentials \
                    WHERE tenant_id = $1 AND state = 'active' ORDER BY key LIMIT $2 OFFSET $3";
const CREDENTIAL: &str =
    "SELECT key, kind, username, state, current_version FROM credentials WHERE tenant_id = $1 AND key = $2";
const VERSION: &str =
    "SELECT data_key_id, sealed FROM credential_versions WHERE tenant_id = $1 AND key = $2 AND version = $3";

/// The tags of `n` keys of a tenant (`$1`), the keys `$2` to `$n+1`.
fn tags_of(n: usize) -> String {
    let placeholders: Vec<String> = (0..n).map(|i| format!("${}", i + 2)).collect();
    format!(
        "SELECT key, tag FROM credential_tags WHERE tenant_id = $1 AND key IN ({}) ORDER BY tag",
        placeholders.join(", ")
    )
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
    let body = app.page(&caller, per_page, page).await.map(|read| {
        read.map(|(total, listed, mut tags)| {
            let items: Vec<Value> = listed
                .into_iter()
                .map(|l| {
                    let updated = chrono::DateTime::from_timestamp_millis(l.updated_at).unwrap_or_default();
                    json!({
                        "tags": tags.remove(&l.key).unwrap_or_default(),
                        "key": l.key,
                        "kind": l.kind,
                        "folder_id": l.folder_id,
                        "description": l.description,
                        "state": l.state,
                        "current_version": l.current_version,
                        "updated_at": updated.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    })
                })
                .collect();
            json!({ "data": items, "meta": { "total": total, "page": page, "per_page": per_page } })
        })
    });
    match body {
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
        let Some(s) = app.sealed(&caller, &key).await? else { return Ok::<_, anyhow::Error>(None) };
        let data_key = app.data_key(&s.data_key_id).await?;
        let aad =
            format!("specwright/secret/v1|{}:{}|{}:{key}|{}", caller.tenant.len(), caller.tenant, key.len(), s.version);
        let value = String::from_utf8(open(&data_key, &s.sealed, aad.as_bytes())?)?;
        Ok(Some(json!({ "data": {
            "key": s.key, "version": s.version, "kind": s.kind, "username": s.username, "value": value,
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

/// Where the audit rows go: sqlx's one SQLite writer connection, or one tokio-postgres
/// connection.
enum Writer {
    Sqlite(AnyPool),
    Postgres { client: tokio_postgres::Client, insert: tokio_postgres::Statement },
}

const AUDIT: &str = "INSERT INTO audit_events (tenant_id, id, occurred_at, request_id, actor, auth_method, token_id, \
                     scope, operation, targets, outcome, status, error_code) \
                     VALUES ($1, $2, $3, '', $4, 'bearer', $5, 'vault:read', $6, $7, 'allowed', 200, NULL)";

/// The group commit: every row queued while the last commit ran goes into the next one.
async fn audit_writer(mut writer: Writer, mut queue: mpsc::Receiver<AuditRow>) {
    while let Some(first) = queue.recv().await {
        let mut rows = vec![first];
        while rows.len() < 256 {
            match queue.try_recv() {
                Ok(r) => rows.push(r),
                Err(_) => break,
            }
        }
        let ids: Vec<String> = rows.iter().map(|_| format!("aud_{}", uuid::Uuid::now_v7().simple())).collect();
        let now = chrono::Utc::now().timestamp_millis();
        let committed = match &mut writer {
            Writer::Sqlite(pool) => async {
                let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                for (r, id) in rows.iter().zip(&ids) {
                    sqlx::query(AUDIT)
                        .bind(&r.tenant)
                        .bind(id)
                        .bind(now)
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
            .is_ok(),
            // The inserts pipelined on the one connection, then the commit.
            Writer::Postgres { client, insert } => async {
                let tx = client.transaction().await?;
                type Param<'p> = &'p (dyn tokio_postgres::types::ToSql + Sync);
                let params: Vec<[Param; 7]> = rows
                    .iter()
                    .zip(&ids)
                    .map(|(r, id)| [&r.tenant as Param, id, &now, &r.actor, &r.jti, &r.operation, &r.targets])
                    .collect();
                let inserts = params.iter().map(|p| tx.execute(&*insert, p));
                futures_util::future::try_join_all(inserts).await?;
                tx.commit().await
            }
            .await
            .is_ok(),
        };
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
    let (writer, reads) = match database_url {
        Some(url) => {
            let config: tokio_postgres::Config = url.parse()?;
            let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
            tokio::spawn(connection);
            let insert = client.prepare(AUDIT).await?;
            let manager = deadpool_postgres::Manager::from_config(
                config,
                tokio_postgres::NoTls,
                deadpool_postgres::ManagerConfig { recycling_method: deadpool_postgres::RecyclingMethod::Fast },
            );
            let pool = deadpool_postgres::Pool::builder(manager).max_size(16).build()?;
            (Writer::Postgres { client, insert }, Reads::Postgres(pool))
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
            (Writer::Sqlite(writer), Reads::Sqlx(reads))
        }
    };
    let (audit, queue) = mpsc::channel(1024);
    tokio::spawn(audit_writer(writer, queue));
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

//! Webhooks: the events a service declares (`[webhooks]` in its spec) sent to the URLs its
//! tenants subscribe, signed as the Standard Webhooks specification says, and never lost.
//!
//! - **An outbox.** [`Webhooks::send`] writes one delivery per matching subscription in the
//!   transaction that makes the change, so an event goes out exactly when its change commits
//!   (and never for a change rolled back). A restart loses nothing: deliveries are rows.
//! - **At least once.** A deliverer claims due deliveries with a lease, posts each with
//!   `webhook-id` (the same on every retry), `webhook-timestamp` and `webhook-signature`, and
//!   marks it delivered on a 2xx. Anything else (another status, a timeout, a refused
//!   connection) is retried after the next step of the schedule (by default 5 s, 5 min, 30 min,
//!   2 h, 5 h, 10 h, 10 h: eight attempts over about a day), then given up as failed. A process
//!   that stops mid-delivery leaves the lease to expire and another attempt to follow.
//! - **No requests inward.** A subscriber's URL must be `https` and reach a public address:
//!   private, loopback and link-local addresses are refused when the name resolves (so a later
//!   DNS change cannot point the platform at its own network), redirects are not followed.
//!   `WebhookSettings::allow_private` lifts both for local development and tests. The guard is
//!   the platform's one for every URL someone else chose ([`crate::egress`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use rand::RngCore;
use sqlx::Row;
use support::webhooks::Event;

use crate::store::{Backend, Store, Tx, now_ms};

/// How webhooks are delivered.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// Accept `http` URLs and private, loopback and link-local addresses (development and tests
    /// only: it lets a subscriber make the platform post inside its own network).
    pub allow_private: bool,
    /// How long to wait before each retry: the first attempt is at once, retry `n` waits
    /// `schedule[n - 1]`; after the last the delivery has failed.
    pub schedule: Vec<Duration>,
    /// How long an attempt may take before it counts as failed.
    pub timeout: Duration,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        let m = |n: u64| Duration::from_secs(n * 60);
        WebhookSettings {
            allow_private: false,
            schedule: vec![Duration::from_secs(5), m(5), m(30), m(120), m(300), m(600), m(600)],
            timeout: Duration::from_secs(15),
        }
    }
}

/// A subscriber's registration: where a tenant's events of a service are posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// Its id (`whsub_…`).
    pub id: String,
    /// Where deliveries are posted.
    pub url: String,
    /// The event types it receives (every type of the service when it named none).
    pub events: Vec<String>,
    /// When it was made (epoch ms).
    pub created_at: i64,
}

/// Why a subscription was not made.
#[derive(Debug, thiserror::Error)]
pub enum SubscribeError {
    /// The URL is not one deliveries may go to.
    #[error("{0}")]
    Url(String),
    /// An event type the service does not send.
    #[error("the service sends no event `{0}`")]
    UnknownEvent(String),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] sqlx::Error),
}

/// The platform's webhook outbox and deliverer over its database.
#[derive(Clone)]
pub struct Webhooks {
    store: Store,
    settings: Arc<WebhookSettings>,
    client: reqwest::Client,
    wake: Arc<tokio::sync::Notify>,
    started: Arc<AtomicBool>,
    /// When delivered and failed rows were last purged (epoch ms).
    purged: Arc<AtomicI64>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks").field("settings", &self.settings).finish_non_exhaustive()
    }
}

/// Deliveries claimed per pass.
const BATCH: i64 = 16;

/// How long delivered and failed rows are kept, for a subscriber to ask about.
const KEPT_FOR_MS: i64 = 7 * 24 * 3600 * 1000;

impl Webhooks {
    /// The outbox of `store`, delivering as `settings` say once [`start`](Self::start)ed.
    pub fn new(store: Store, settings: WebhookSettings) -> Self {
        let client = crate::egress::client(
            settings.timeout,
            concat!("Specwright-Webhooks/", env!("CARGO_PKG_VERSION")),
            settings.allow_private,
        );
        Webhooks {
            store,
            settings: Arc::new(settings),
            client,
            wake: Arc::default(),
            started: Arc::default(),
            purged: Arc::default(),
        }
    }

    /// Registers `url` for `events` (all of `known` when empty) of `service` for `tenant`, in
    /// `tx`; the subscription and its secret (`whsec_…`), which is shown this once.
    pub async fn subscribe(
        &self,
        tx: &mut Tx,
        tenant: &str,
        service: &str,
        known: &[&str],
        url: &str,
        events: &[String],
    ) -> Result<(Subscription, String), SubscribeError> {
        let url = self.check_url(url)?;
        if let Some(unknown) = events.iter().find(|e| !known.contains(&e.as_str())) {
            return Err(SubscribeError::UnknownEvent(unknown.clone()));
        }
        let mut events: Vec<String> =
            if events.is_empty() { known.iter().map(|e| e.to_string()).collect() } else { events.to_vec() };
        events.sort();
        events.dedup();
        let mut key = [0u8; 24];
        rand::thread_rng().fill_bytes(&mut key);
        let secret = support::webhooks::secret_of(&key);
        let sub =
            Subscription { id: format!("whsub_{}", uuid::Uuid::now_v7().simple()), url, events, created_at: now_ms() };
        sqlx::query(
            "INSERT INTO webhook_subscriptions (id, tenant_id, service, url, events, secret, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(sub.id.as_str())
        .bind(tenant)
        .bind(service)
        .bind(sub.url.as_str())
        .bind(serde_json::to_string(&sub.events).unwrap_or_default())
        .bind(secret.as_str())
        .bind(sub.created_at)
        .execute(&mut **tx)
        .await?;
        Ok((sub, secret))
    }

    /// The subscriptions of `tenant` to `service`, oldest first.
    pub async fn subscriptions(tx: &mut Tx, tenant: &str, service: &str) -> Result<Vec<Subscription>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT id, url, events, created_at FROM webhook_subscriptions \
             WHERE tenant_id = $1 AND service = $2 ORDER BY created_at, id",
        )
        .bind(tenant)
        .bind(service)
        .fetch_all(&mut **tx)
        .await?;
        Ok(rows
            .iter()
            .map(|r| Subscription {
                id: r.get(0),
                url: r.get(1),
                events: serde_json::from_str(&r.get::<String, _>(2)).unwrap_or_default(),
                created_at: r.get(3),
            })
            .collect())
    }

    /// Deletes subscription `id` of `tenant` to `service` and the deliveries still pending for
    /// it, in `tx`; `false` when there is no such subscription.
    pub async fn unsubscribe(tx: &mut Tx, tenant: &str, service: &str, id: &str) -> Result<bool, sqlx::Error> {
        let gone = sqlx::query("DELETE FROM webhook_subscriptions WHERE id = $1 AND tenant_id = $2 AND service = $3")
            .bind(id)
            .bind(tenant)
            .bind(service)
            .execute(&mut **tx)
            .await?;
        if gone.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query("DELETE FROM webhook_deliveries WHERE subscription_id = $1 AND state = 'pending'")
            .bind(id)
            .execute(&mut **tx)
            .await?;
        Ok(true)
    }

    /// Queues `event` of `service` for every subscription of `tenant` that receives it, in `tx`
    /// (the transaction that makes the change it tells of); how many deliveries. Call
    /// [`wake`](Self::wake) after the commit to send them at once rather than within a second.
    pub async fn send(tx: &mut Tx, tenant: &str, service: &str, event: &Event) -> Result<usize, sqlx::Error> {
        let subscribers = Self::subscriptions(tx, tenant, service).await?;
        let subscribers: Vec<&Subscription> =
            subscribers.iter().filter(|s| s.events.iter().any(|e| e == event.event_type)).collect();
        if subscribers.is_empty() {
            return Ok(0);
        }
        let now = now_ms();
        // The bytes signed and sent on every attempt, written once.
        let body = serde_json::json!({
            "type": event.event_type,
            "timestamp": crate::store::to_time(now).to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "data": event.data,
        })
        .to_string();
        let msg_id = format!("msg_{}", uuid::Uuid::now_v7().simple());
        for sub in &subscribers {
            sqlx::query(
                "INSERT INTO webhook_deliveries (id, msg_id, subscription_id, tenant_id, service, event_type, body, \
                 attempts, next_at, state, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, 'pending', $8)",
            )
            .bind(format!("whdel_{}", uuid::Uuid::now_v7().simple()))
            .bind(msg_id.as_str())
            .bind(sub.id.as_str())
            .bind(tenant)
            .bind(service)
            .bind(event.event_type)
            .bind(body.as_str())
            .bind(now)
            .execute(&mut **tx)
            .await?;
        }
        Ok(subscribers.len())
    }

    /// Tells the deliverer of this process that deliveries were queued.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Starts this process's deliverer (once; later calls do nothing). It looks for due
    /// deliveries when woken and at least every second, and keeps going through storage
    /// faults, which it logs.
    pub fn start(&self) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                match me.deliver_due().await {
                    Ok(n) if n > 0 => continue,
                    Ok(_) => {}
                    Err(e) => tracing::warn!("webhook deliveries: {e}"),
                }
                tokio::select! {
                    () = me.wake.notified() => {}
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        });
    }

    /// Claims the deliveries that are due and makes one attempt at each, concurrently; how many.
    pub async fn deliver_due(&self) -> Result<usize, sqlx::Error> {
        self.purge_now_and_then().await;
        let now = now_ms();
        // A read first: an idle outbox costs no write transaction a second.
        let due = sqlx::query("SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND next_at <= $1 LIMIT 1")
            .bind(now)
            .fetch_optional(self.store.readers())
            .await?;
        if due.is_none() {
            return Ok(0);
        }
        // The lease: a claimed delivery is due again only after an attempt would have ended.
        let lease = now + i64::try_from(self.settings.timeout.as_millis()).unwrap_or(i64::MAX / 2) + 5_000;
        let skip_locked = match self.store.backend() {
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        };
        // `skip_locked` and `BATCH` are constants: no input reaches the text.
        let claim = format!(
            "UPDATE webhook_deliveries SET next_at = $1 WHERE id IN (SELECT id FROM webhook_deliveries \
             WHERE state = 'pending' AND next_at <= $2 ORDER BY next_at LIMIT {BATCH}{skip_locked}) \
             RETURNING id, msg_id, subscription_id, service, event_type, body, attempts"
        );
        let mut tx = self.store.begin().await?;
        let rows = sqlx::query(sqlx::AssertSqlSafe(claim)).bind(lease).bind(now).fetch_all(&mut *tx).await?;
        tx.commit().await?;
        let claimed: Vec<Claimed> = rows
            .iter()
            .map(|r| Claimed {
                id: r.get(0),
                msg_id: r.get(1),
                subscription: r.get(2),
                service: r.get(3),
                event_type: r.get(4),
                body: r.get(5),
                attempts: r.get::<i64, _>(6),
            })
            .collect();
        let n = claimed.len();
        // Each attempt a task of its own: it writes its outcome in a transaction, and one task
        // holds at most one (a second `begin` in the same task would wait on SQLite's writer
        // for the first). A panicking attempt ends its task, not the deliverer.
        let attempts: Vec<_> = claimed
            .into_iter()
            .map(|c| {
                let me = self.clone();
                tokio::spawn(async move { me.attempt(c).await })
            })
            .collect();
        for a in attempts {
            if let Err(e) = a.await {
                tracing::warn!("a webhook attempt ended abnormally: {e}");
            }
        }
        Ok(n)
    }

    /// One attempt at a claimed delivery, and its outcome written.
    async fn attempt(&self, c: Claimed) {
        let target = sqlx::query("SELECT url, secret FROM webhook_subscriptions WHERE id = $1")
            .bind(c.subscription.as_str())
            .fetch_optional(self.store.readers())
            .await;
        let outcome = match target {
            Ok(Some(row)) => self.post(&row.get::<String, _>(0), &row.get::<String, _>(1), &c).await,
            Ok(None) => Err((None, "the subscription was deleted".to_string())),
            Err(e) => {
                // The lease runs out and the delivery is claimed again.
                tracing::warn!(delivery = c.id, "reading a webhook subscription: {e}");
                return;
            }
        };
        let attempts = c.attempts + 1;
        let now = now_ms();
        let (state, next_at, status, error, label) = match &outcome {
            Ok(status) => ("delivered", now, Some(i64::from(*status)), None, "delivered"),
            Err((status, error)) => {
                let wait = usize::try_from(c.attempts).ok().and_then(|i| self.settings.schedule.get(i));
                let gone = matches!(outcome, Err((None, ref e)) if e == "the subscription was deleted");
                match wait {
                    Some(wait) if !gone => {
                        let at = now + i64::try_from(wait.as_millis()).unwrap_or(i64::MAX / 2);
                        ("pending", at, status.map(i64::from), Some(error.clone()), "retry")
                    }
                    _ => ("failed", now, status.map(i64::from), Some(error.clone()), "failed"),
                }
            }
        };
        if let Err((_, e)) = &outcome {
            tracing::warn!(
                delivery = c.id,
                service = c.service,
                event = c.event_type,
                attempt = attempts,
                "webhook delivery failed ({label}): {e}"
            );
        }
        metrics::counter!("specwright_webhook_deliveries_total", "service" => c.service.clone(), "event" => c.event_type.clone(), "outcome" => label)
            .increment(1);
        let done = (state != "pending").then_some(now);
        let write = async {
            let mut tx = self.store.begin().await?;
            sqlx::query(
                "UPDATE webhook_deliveries SET state = $1, attempts = $2, next_at = $3, last_status = $4, \
                 last_error = $5, done_at = $6 WHERE id = $7",
            )
            .bind(state)
            .bind(attempts)
            .bind(next_at)
            .bind(crate::store::Nullable(status))
            .bind(crate::store::Nullable(error))
            .bind(crate::store::Nullable(done))
            .bind(c.id.as_str())
            .execute(&mut *tx)
            .await?;
            tx.commit().await
        };
        if let Err(e) = write.await {
            // The lease runs out and the delivery is attempted again: at least once.
            tracing::warn!(delivery = c.id, "recording a webhook attempt: {e}");
        }
    }

    /// Posts a delivery to `url`, signed with `secret`: the status of a 2xx, or the status (if
    /// any) and what went wrong.
    async fn post(&self, url: &str, secret: &str, c: &Claimed) -> Result<u16, (Option<u16>, String)> {
        self.check_url(url).map_err(|e| (None, e.to_string()))?;
        let timestamp = now_ms() / 1000;
        let signature = support::webhooks::sign(secret, &c.msg_id, timestamp, c.body.as_bytes())
            .map_err(|e| (None, format!("signing: {e}")))?;
        let sent = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", c.msg_id.as_str())
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(c.body.clone())
            .send()
            .await;
        match sent {
            Ok(resp) if resp.status().is_success() => Ok(resp.status().as_u16()),
            Ok(resp) => Err((Some(resp.status().as_u16()), format!("the receiver answered {}", resp.status()))),
            Err(e) => Err((None, crate::egress::describe(&e))),
        }
    }

    fn check_url(&self, url: &str) -> Result<String, SubscribeError> {
        crate::egress::check_url(url, self.settings.allow_private)
            .map_err(|why| SubscribeError::Url(format!("url {why}")))
    }
}

impl Webhooks {
    /// Deletes delivered and failed rows older than a week, at most once an hour.
    async fn purge_now_and_then(&self) {
        let now = now_ms();
        let last = self.purged.load(Ordering::Relaxed);
        if now - last < 3_600_000
            || self.purged.compare_exchange(last, now, Ordering::SeqCst, Ordering::Relaxed).is_err()
        {
            return;
        }
        let purge = async {
            let mut tx = self.store.begin().await?;
            sqlx::query("DELETE FROM webhook_deliveries WHERE state <> 'pending' AND done_at < $1")
                .bind(now - KEPT_FOR_MS)
                .execute(&mut *tx)
                .await?;
            tx.commit().await
        };
        if let Err(e) = purge.await {
            tracing::warn!("purging old webhook deliveries: {e}");
        }
    }
}

/// A delivery claimed for an attempt.
struct Claimed {
    id: String,
    msg_id: String,
    subscription: String,
    service: String,
    event_type: String,
    body: String,
    attempts: i64,
}

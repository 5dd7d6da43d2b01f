-- Webhooks: the URLs a tenant's subscribers registered for a service's events, and one delivery
-- per event and subscription, written in the transaction that makes the change (so an event is
-- sent exactly when its change commits) and retried with backoff until the receiver answers 2xx.

CREATE TABLE IF NOT EXISTS webhook_subscriptions (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    service TEXT NOT NULL,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX IF NOT EXISTS webhook_subscriptions_owner ON webhook_subscriptions (tenant_id, service);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY,
    msg_id TEXT NOT NULL,
    subscription_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    service TEXT NOT NULL,
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    next_at BIGINT NOT NULL,
    state TEXT NOT NULL,
    last_status BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    done_at BIGINT
);

CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (state, next_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_subscription ON webhook_deliveries (subscription_id, created_at);

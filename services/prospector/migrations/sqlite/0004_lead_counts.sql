-- How many leads each tenant has by status, platform and whole score (the composite score's
-- integer part, 0 to 100), kept by triggers in the transaction of every change to its leads, so
-- the lead list's total for the filters on those columns (min_score, status, platform) is a sum
-- over a few rows instead of a count over every match. Triggers keep it, so no write path can
-- forget to; it starts from the leads already stored.
CREATE TABLE IF NOT EXISTS lead_counts (
    tenant_id TEXT NOT NULL,
    status TEXT NOT NULL,
    platform TEXT NOT NULL,
    score_floor INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, status, platform, score_floor)
);

INSERT INTO lead_counts (tenant_id, status, platform, score_floor, n)
    SELECT tenant_id, status, platform, CAST(score AS INTEGER), COUNT(*) FROM leads
    GROUP BY tenant_id, status, platform, CAST(score AS INTEGER);

CREATE TRIGGER IF NOT EXISTS leads_count_on_insert AFTER INSERT ON leads
BEGIN
    INSERT INTO lead_counts (tenant_id, status, platform, score_floor, n)
        VALUES (NEW.tenant_id, NEW.status, NEW.platform, CAST(NEW.score AS INTEGER), 1)
        ON CONFLICT (tenant_id, status, platform, score_floor) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER IF NOT EXISTS leads_count_on_update AFTER UPDATE OF tenant_id, status, platform, score ON leads
WHEN OLD.tenant_id <> NEW.tenant_id OR OLD.status <> NEW.status OR OLD.platform <> NEW.platform
    OR CAST(OLD.score AS INTEGER) <> CAST(NEW.score AS INTEGER)
BEGIN
    UPDATE lead_counts SET n = n - 1
        WHERE tenant_id = OLD.tenant_id AND status = OLD.status AND platform = OLD.platform
          AND score_floor = CAST(OLD.score AS INTEGER);
    INSERT INTO lead_counts (tenant_id, status, platform, score_floor, n)
        VALUES (NEW.tenant_id, NEW.status, NEW.platform, CAST(NEW.score AS INTEGER), 1)
        ON CONFLICT (tenant_id, status, platform, score_floor) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER IF NOT EXISTS leads_count_on_delete AFTER DELETE ON leads
BEGIN
    UPDATE lead_counts SET n = n - 1
        WHERE tenant_id = OLD.tenant_id AND status = OLD.status AND platform = OLD.platform
          AND score_floor = CAST(OLD.score AS INTEGER);
END;

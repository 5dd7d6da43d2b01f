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
    n BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, status, platform, score_floor)
);

-- No lead changes between the counts below and the triggers that keep them (a server of the
-- previous release still writing): writes wait for this migration's commit.
LOCK TABLE leads IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO lead_counts (tenant_id, status, platform, score_floor, n)
    SELECT tenant_id, status, platform, FLOOR(score)::INTEGER, COUNT(*) FROM leads
    GROUP BY tenant_id, status, platform, FLOOR(score)::INTEGER
    ON CONFLICT (tenant_id, status, platform, score_floor) DO NOTHING;

-- One statement per change, from its transition tables. The tenant's version row (bumped by
-- the same function, first) is locked before any count row, so writers of one tenant take the
-- count rows one after the other and never deadlock on them.
CREATE OR REPLACE FUNCTION lead_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO lead_versions (tenant_id, version) SELECT DISTINCT tenant_id, 1 FROM changed
            ON CONFLICT (tenant_id) DO UPDATE SET version = lead_versions.version + 1;
        INSERT INTO lead_counts (tenant_id, status, platform, score_floor, n)
            SELECT tenant_id, status, platform, FLOOR(score)::INTEGER, COUNT(*) FROM changed
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
            ON CONFLICT (tenant_id, status, platform, score_floor) DO UPDATE SET n = lead_counts.n + excluded.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO lead_versions (tenant_id, version) SELECT DISTINCT tenant_id, 1 FROM before
            ON CONFLICT (tenant_id) DO UPDATE SET version = lead_versions.version + 1;
        UPDATE lead_counts c SET n = c.n - d.k
            FROM (SELECT tenant_id, status, platform, FLOOR(score)::INTEGER AS score_floor, COUNT(*) AS k
                  FROM before GROUP BY 1, 2, 3, 4) d
            WHERE c.tenant_id = d.tenant_id AND c.status = d.status AND c.platform = d.platform
              AND c.score_floor = d.score_floor;
    ELSE
        INSERT INTO lead_versions (tenant_id, version)
            SELECT tenant_id, 1 FROM (SELECT tenant_id FROM changed UNION SELECT tenant_id FROM before) t
            ON CONFLICT (tenant_id) DO UPDATE SET version = lead_versions.version + 1;
        INSERT INTO lead_counts (tenant_id, status, platform, score_floor, n)
            SELECT tenant_id, status, platform, score_floor, SUM(d) FROM (
                SELECT tenant_id, status, platform, FLOOR(score)::INTEGER AS score_floor, 1 AS d FROM changed
                UNION ALL
                SELECT tenant_id, status, platform, FLOOR(score)::INTEGER, -1 FROM before
            ) moved
            GROUP BY 1, 2, 3, 4 HAVING SUM(d) <> 0 ORDER BY 1, 2, 3, 4
            ON CONFLICT (tenant_id, status, platform, score_floor) DO UPDATE SET n = lead_counts.n + excluded.n;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS leads_version_on_insert ON leads;
CREATE TRIGGER leads_version_on_insert AFTER INSERT ON leads
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION lead_changes();

DROP TRIGGER IF EXISTS leads_version_on_update ON leads;
CREATE TRIGGER leads_version_on_update AFTER UPDATE ON leads
    REFERENCING OLD TABLE AS before NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION lead_changes();

DROP TRIGGER IF EXISTS leads_version_on_delete ON leads;
CREATE TRIGGER leads_version_on_delete AFTER DELETE ON leads
    REFERENCING OLD TABLE AS before FOR EACH STATEMENT EXECUTE FUNCTION lead_changes();

DROP FUNCTION IF EXISTS bump_lead_versions();
DROP FUNCTION IF EXISTS bump_lead_versions_both();

-- A number per tenant that changes in the same transaction as any change to its leads, so the
-- lead list can reuse the exact total of a filter while the number read in its snapshot is the
-- same (runtime Store::page_versioned) instead of counting every match per request. Triggers
-- keep it, so no write path can forget to; one bump per statement and tenant, so rescoring every
-- lead of a tenant updates its row once.
CREATE TABLE IF NOT EXISTS lead_versions (
    tenant_id TEXT PRIMARY KEY,
    version BIGINT NOT NULL
);

CREATE OR REPLACE FUNCTION bump_lead_versions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_versions (tenant_id, version)
        SELECT DISTINCT tenant_id, 1 FROM changed
        ON CONFLICT (tenant_id) DO UPDATE SET version = lead_versions.version + 1;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION bump_lead_versions_both() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_versions (tenant_id, version)
        SELECT tenant_id, 1 FROM (SELECT tenant_id FROM changed UNION SELECT tenant_id FROM before) t
        ON CONFLICT (tenant_id) DO UPDATE SET version = lead_versions.version + 1;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS leads_version_on_insert ON leads;
CREATE TRIGGER leads_version_on_insert AFTER INSERT ON leads
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_lead_versions();

DROP TRIGGER IF EXISTS leads_version_on_update ON leads;
CREATE TRIGGER leads_version_on_update AFTER UPDATE ON leads
    REFERENCING OLD TABLE AS before NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_lead_versions_both();

DROP TRIGGER IF EXISTS leads_version_on_delete ON leads;
CREATE TRIGGER leads_version_on_delete AFTER DELETE ON leads
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_lead_versions();

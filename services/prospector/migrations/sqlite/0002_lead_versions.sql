-- A number per tenant that changes in the same transaction as any change to its leads, so the
-- lead list can reuse the exact total of a filter while the number read in its snapshot is the
-- same (runtime Store::page_versioned) instead of counting every match per request. Triggers
-- keep it, so no write path can forget to.
CREATE TABLE IF NOT EXISTS lead_versions (
    tenant_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);

CREATE TRIGGER IF NOT EXISTS leads_version_on_insert AFTER INSERT ON leads
BEGIN
    INSERT INTO lead_versions (tenant_id, version) VALUES (NEW.tenant_id, 1)
        ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS leads_version_on_update AFTER UPDATE ON leads
BEGIN
    INSERT INTO lead_versions (tenant_id, version) VALUES (NEW.tenant_id, 1)
        ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1;
    INSERT INTO lead_versions (tenant_id, version) SELECT OLD.tenant_id, 1 WHERE OLD.tenant_id <> NEW.tenant_id
        ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS leads_version_on_delete AFTER DELETE ON leads
BEGIN
    INSERT INTO lead_versions (tenant_id, version) VALUES (OLD.tenant_id, 1)
        ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1;
END;

-- A number per lead that grows with every change to its row, so a list can keep each lead
-- rendered and tell from this column alone (read from the index that orders the default list)
-- whether its rendering is still the row's. The trigger sets it on every update, whoever makes
-- it (the service, a change made outside it, a later migration), so no change can keep an old
-- number.
ALTER TABLE leads ADD COLUMN IF NOT EXISTS revision BIGINT NOT NULL DEFAULT 1;

CREATE OR REPLACE FUNCTION lead_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.revision := GREATEST(NEW.revision, OLD.revision + 1);
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS leads_revision_on_update ON leads;
CREATE TRIGGER leads_revision_on_update BEFORE UPDATE ON leads
    FOR EACH ROW EXECUTE FUNCTION lead_revision();

-- The default list's order and filter with each lead's revision: a page of ids and revisions
-- is read from this index (and the visibility map) alone.
CREATE INDEX IF NOT EXISTS leads_by_score_revision ON leads (tenant_id, score, id, status, revision);
DROP INDEX IF EXISTS leads_by_score;

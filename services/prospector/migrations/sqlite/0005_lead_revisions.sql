-- A number per lead that grows with every change to its row, so a list can keep each lead
-- rendered and tell from this column alone (read from the index that orders the default list)
-- whether its rendering is still the row's. Writers advance it in their own UPDATE; a change
-- that does not (one made outside the service, a later migration) is advanced by the trigger,
-- so no change can keep an old number.
ALTER TABLE leads ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;

CREATE TRIGGER IF NOT EXISTS leads_revision_on_update AFTER UPDATE ON leads
WHEN NEW.revision <= OLD.revision
BEGIN
    UPDATE leads SET revision = OLD.revision + 1 WHERE rowid = NEW.rowid;
END;

-- The default list's order and filter with each lead's revision: a page of ids and revisions
-- is read from this index alone.
CREATE INDEX IF NOT EXISTS leads_by_score_revision ON leads (tenant_id, score, id, status, revision);
DROP INDEX IF EXISTS leads_by_score;

-- What the scoring engine reads of a lead's posting (skills, budget, client, proposals count,
-- posting date) as compact JSON beside the whole posting, so a backtest replays a million leads
-- without reading their descriptions. Written with the posting by every write of it
-- (leads::PostingColumns). A lead stored before this column is filled here; one whose posting is
-- not JSON keeps NULL and is replayed from its posting (which fails the backtest, as before).
ALTER TABLE leads ADD COLUMN IF NOT EXISTS scoring_input TEXT;

-- PostgreSQL 15 has no `IS JSON`: a cast that fails gives NULL (a session-local function).
CREATE OR REPLACE FUNCTION pg_temp.specwright_try_jsonb(t TEXT) RETURNS JSONB LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN t::jsonb;
EXCEPTION WHEN others THEN
    RETURN NULL;
END
$$;

UPDATE leads
SET scoring_input = (pg_temp.specwright_try_jsonb(posting) - 'id' - 'platform' - 'title' - 'url' - 'description')::text
WHERE scoring_input IS NULL;

-- The backtest reads a tenant's leads with an outcome in chunks, in the order (outcome,
-- created_at, id); this index gives that order and bounds each chunk. It replaces the narrower
-- index with the same leading columns. (The input itself is not included: a PostgreSQL index
-- entry is limited to about 2.7 kB, which a posting with many long skills could exceed.)
DROP INDEX IF EXISTS leads_by_outcome;
CREATE INDEX IF NOT EXISTS leads_replay ON leads (tenant_id, outcome, created_at, id);

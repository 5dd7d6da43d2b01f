-- What the scoring engine reads of a lead's posting (skills, budget, client, proposals count,
-- posting date) as compact JSON beside the whole posting, so a backtest replays a million leads
-- without reading their descriptions. Written with the posting by every write of it
-- (leads::PostingColumns). A lead stored before this column is filled here; one whose posting is
-- not JSON keeps NULL and is replayed from its posting (which fails the backtest, as before).
ALTER TABLE leads ADD COLUMN scoring_input TEXT;

UPDATE leads
SET scoring_input = json_remove(posting, '$.id', '$.platform', '$.title', '$.url', '$.description')
WHERE scoring_input IS NULL AND json_valid(posting);

-- The backtest's read (a tenant's leads with an outcome, by creation time) answered from this
-- index alone: the rows, whose postings span overflow pages, are never read. It replaces the
-- narrower index with the same leading columns.
DROP INDEX IF EXISTS leads_by_outcome;
CREATE INDEX IF NOT EXISTS leads_replay ON leads (tenant_id, outcome, created_at, id, fetched_at, scoring_input);

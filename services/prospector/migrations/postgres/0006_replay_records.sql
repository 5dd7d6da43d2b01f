-- What a backtest replays of each lead (its id, fetch and creation times, and what the scoring
-- engine reads of its posting) as one binary record, written with the posting by every write of
-- it (leads::PostingColumns; the layout is described in replay.rs). The service fills the record
-- of every lead stored before this column when it starts (leads::fill_replays), in batches, and
-- then empties the lead's `scoring_input`: the column stays, unwritten, so a release before this
-- one still runs against this schema (it replays a lead without it from its posting). The
-- backtest's index (`leads_replay`) is unchanged: it orders and bounds the chunks, whose records
-- are read from the rows.
ALTER TABLE leads ADD COLUMN IF NOT EXISTS replay BYTEA;

-- The leads whose record is still to be filled: empty once they are, so the check at each start
-- costs nothing.
CREATE INDEX IF NOT EXISTS leads_without_replay ON leads (id) WHERE replay IS NULL;

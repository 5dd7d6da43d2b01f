-- A list of a tenant's credentials filters on their state and orders by key: this index counts
-- the matches from the index alone and hands the page over in order, where the primary key's
-- order made the count read every row of the tenant's table.
CREATE INDEX credentials_by_state ON credentials (tenant_id, state, key);

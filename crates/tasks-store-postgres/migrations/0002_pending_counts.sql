-- Schema version 2 of the MCP Tasks PostgreSQL store: counter changes not yet settled (phase 2
-- of the capacity counters). `{schema}` stands for the quoted schema name. Run once, inside the
-- migration transaction, under the store's advisory lock.
--
-- A row says: `counts.total` is ahead by `total` and the `active` of `scope_counts` row `scope`
-- by `active`, for a task that is not (or no longer) there to back it:
-- * a create's reservation (total 1, active 1, or 0 when the per-scope bound refused it),
--   committed without waiting for a WAL flush, then deleted in the same transaction as the
--   task's insert (which commits with a flush), or settled when the create is refused;
-- * a terminal transition's release (total 0, active 1), written in the transition's
--   transaction and settled right after it without waiting for a flush.
-- To settle a row is to delete it and lower the counters by its amounts, in one transaction;
-- whoever deletes it settles it, so it is settled once. The reaper settles rows older than a
-- minute (a node died, or lost its connection, between the two steps).
CREATE TABLE {schema}.pending_counts (
  -- Random, drawn by the node for one create or transition.
  token  bigint PRIMARY KEY,
  scope  text NOT NULL,
  total  smallint NOT NULL CHECK (total IN (0, 1)),
  active smallint NOT NULL CHECK (active IN (0, 1)),
  since  timestamptz NOT NULL DEFAULT now()
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

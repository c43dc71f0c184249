-- Schema version 1 of the MCP Tasks PostgreSQL store. `{schema}` stands for the quoted schema
-- name. Run once, inside the migration transaction, under the store's advisory lock.

CREATE TABLE {schema}.tasks (
  id            text PRIMARY KEY CHECK (id <> ''),
  -- The runtime's opaque scope (a keyed hash, never a raw principal), as given.
  scope         text NOT NULL,
  revision      bigint NOT NULL CHECK (revision >= 1),
  status        text NOT NULL
                CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  -- Milliseconds since the Unix epoch.
  created_at_ms bigint NOT NULL,
  -- createdAt + ttlMs; NULL when the task never expires.
  expires_at_ms bigint,
  -- The task's serde storage form: results and accepted input answers included. `json`, not
  -- `jsonb`: kept byte for byte, and strings may contain U+0000 (jsonb refuses them).
  task          json NOT NULL,
  -- The work descriptor; NULL exactly when the task is terminal.
  work          json,
  -- The node that runs the task (16 bytes) and the fencing token.
  owner_node    bytea CHECK (owner_node IS NULL OR length(owner_node) = 16),
  generation    bigint NOT NULL CHECK (generation >= 1),
  attempt       integer NOT NULL CHECK (attempt >= 1),
  CHECK ((status IN ('completed', 'failed', 'cancelled')) = (work IS NULL))
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.05);

CREATE INDEX tasks_expiry ON {schema}.tasks (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
CREATE INDEX tasks_active ON {schema}.tasks (owner_node)
  WHERE status IN ('working', 'input_required');

CREATE TABLE {schema}.nodes (
  node_id             bytea PRIMARY KEY CHECK (length(node_id) = 16),
  lease_expires_at_ms bigint NOT NULL
);

-- Capacity counters (phase 1 of the design): changed in the transaction of every create,
-- terminal transition and reap, so the bounds are exact under concurrency.
CREATE TABLE {schema}.counts (
  id    smallint PRIMARY KEY CHECK (id = 1),
  total bigint NOT NULL CHECK (total >= 0)
);
INSERT INTO {schema}.counts (id, total) VALUES (1, 0);

CREATE TABLE {schema}.scope_counts (
  scope  text PRIMARY KEY,
  active bigint NOT NULL CHECK (active >= 0)
);

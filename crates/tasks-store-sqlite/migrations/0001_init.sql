-- Schema version 1 of the MCP Tasks SQLite store. Run once, inside one transaction, on an
-- empty database whose auto_vacuum mode is already INCREMENTAL.

CREATE TABLE tasks (
  id            TEXT PRIMARY KEY,
  -- The runtime's opaque scope (a keyed hash, never a raw principal), as given.
  scope         TEXT NOT NULL,
  revision      INTEGER NOT NULL CHECK (revision >= 1),
  status        TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  created_at_ms INTEGER NOT NULL,
  -- createdAt + ttlMs; NULL when the task never expires.
  expires_at_ms INTEGER,
  -- The task's serde storage form (JSON): results and accepted input answers included.
  task          TEXT NOT NULL,
  -- The work descriptor (JSON); NULL once the task is terminal.
  work          TEXT,
  -- The node that runs the task (16 bytes) and the fencing token.
  owner_node    BLOB CHECK (owner_node IS NULL OR length(owner_node) = 16),
  generation    INTEGER NOT NULL CHECK (generation >= 1),
  attempt       INTEGER NOT NULL CHECK (attempt >= 1)
) STRICT;

CREATE INDEX tasks_expiry ON tasks (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
CREATE INDEX tasks_active ON tasks (owner_node) WHERE status IN ('working', 'input_required');

CREATE TABLE nodes (
  node_id            BLOB PRIMARY KEY CHECK (length(node_id) = 16),
  lease_expires_at_ms INTEGER NOT NULL
) STRICT;

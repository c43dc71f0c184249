-- Schema version 3 of the MCP Tasks SQLite store: the same tables, with the status check
-- written as a chain of comparisons.
--
-- SQLite evaluates `status IN (<five values>)` in a CHECK by building a temporary b-tree of
-- the values on every INSERT and UPDATE of a task (a list of more than two values is not
-- compared one by one); that cost about a fifth of the CPU of a durable task. The chain of
-- comparisons accepts exactly the same values. A CHECK cannot be altered in place, so the
-- table is rebuilt: rows, ids and indexes are the same afterwards.

CREATE TABLE tasks_v3 (
  id            TEXT PRIMARY KEY,
  -- The runtime's opaque scope (a keyed hash, never a raw principal), as given.
  scope         TEXT NOT NULL,
  revision      INTEGER NOT NULL CHECK (revision >= 1),
  status        TEXT NOT NULL CHECK (status = 'working' OR status = 'input_required'
                                     OR status = 'completed' OR status = 'failed'
                                     OR status = 'cancelled'),
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

INSERT INTO tasks_v3 (rowid, id, scope, revision, status, created_at_ms, expires_at_ms, task,
                      work, owner_node, generation, attempt)
SELECT rowid, id, scope, revision, status, created_at_ms, expires_at_ms, task, work,
       owner_node, generation, attempt
FROM tasks;

DROP TABLE tasks;
ALTER TABLE tasks_v3 RENAME TO tasks;

CREATE INDEX tasks_expiry ON tasks (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
CREATE INDEX tasks_active ON tasks (owner_node) WHERE status IN ('working', 'input_required');

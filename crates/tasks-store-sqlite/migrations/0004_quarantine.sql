-- Schema version 4 of the MCP Tasks SQLite store: a table for the rows that could not be read.
--
-- A task row whose stored state does not decode (written by a bug, by another version or by
-- hand) is quarantined when the store opens: its original columns are copied here, with the
-- reason, and the row itself becomes the `failed` task "The stored state of this task could not
-- be read", so the rest of the database opens and recovers as usual. Nothing is deleted from
-- here by the store: an operator reads, repairs or drops these rows (docs/durability.md).

CREATE TABLE quarantined_tasks (
  id                TEXT PRIMARY KEY,
  scope             TEXT NOT NULL,
  -- The row's columns as they were, unchanged (any text).
  revision          INTEGER NOT NULL,
  status            TEXT NOT NULL,
  task              TEXT NOT NULL,
  work              TEXT,
  -- Why it could not be read, for the operator.
  reason            TEXT NOT NULL,
  quarantined_at_ms INTEGER NOT NULL
) STRICT;

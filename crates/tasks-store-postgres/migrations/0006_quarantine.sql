-- Schema version 6 of the MCP Tasks PostgreSQL store: the rows that could not be read.
-- `{schema}` stands for the quoted schema name. Run once, inside the migration transaction,
-- under the store's advisory lock.
--
-- A task row whose `task` or `work` does not decode (written by a bug, another version or by
-- hand) is quarantined by the first read that meets it: in one transaction its original
-- `task` and `work` are copied here as text, with the reason, and the row becomes the `failed`
-- task "The stored state of this task could not be read" one revision on, its work cleared. A
-- row whose id is not a task id is copied here and deleted. Nothing is deleted from here by
-- the store: an operator reads, repairs or drops these rows.
CREATE TABLE {schema}.quarantined_tasks (
  id                text PRIMARY KEY,
  scope             text NOT NULL,
  -- The row's `task` and `work` columns as they were, as text.
  task              text,
  work              text,
  -- Why it could not be read, for the operator (never sent to a client).
  reason            text NOT NULL,
  -- Milliseconds since the Unix epoch.
  quarantined_at_ms bigint NOT NULL
);

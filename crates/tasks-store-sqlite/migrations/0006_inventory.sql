-- Schema version 6 of the MCP Tasks SQLite store: the operator's inventory
-- (`Store::inventory`, `inventory_counts`, `nodes`).
--
-- `tasks` gains two columns, kept by every write from this version on:
-- * `tool`: the tool the task runs. Kept when the task turns terminal and its `work` is
--   cleared, so a terminal task still shows its tool. Backfilled from `work` where the row
--   still has it; NULL for a terminal task stored before this version (its work was already
--   dropped: the tool is not known any more).
-- * `updated_at_ms`: the task's `lastUpdatedAt` in milliseconds since the Unix epoch, for the
--   stuck rules (`working` or `input_required` without a change for too long). Backfilled
--   from the `task` text; `created_at_ms` where it cannot be read.
--
-- `nodes` gains `started_at_ms` (the last registration) and `renewed_at_ms` (the last
-- registration or renewal), NULL for rows of older versions. (This store deletes every node
-- row when it opens, so none of those survives the open anyway.)
--
-- The backfill never fails and never changes a row's `task` or `work`: a row that does not
-- decode is quarantined when the store opens, as before (which writes its `updated_at_ms`).
-- As in version 5:
-- * a text holding a NUL byte (which the store never writes) is not read: SQLite's JSON
--   functions stop at the NUL;
-- * a text that is not valid JSON is not read (`json_extract` would raise an error and abort
--   the migration), nor one that is not an object;
-- * a member name spelt with a `\u` escape is not matched by SQLite's JSON paths: such a row
--   (never written by the store) gets a NULL tool, or `created_at_ms`.
-- Each guard sits in the `WHEN` of its own `CASE`, so no JSON function sees text it refuses.
-- `lastUpdatedAt` is RFC 3339 with milliseconds (`2026-07-28T12:00:00.123Z`); `julianday`
-- reads it (NULL for text it cannot read), and the rounding to whole milliseconds is exact
-- for every date the store can write.

ALTER TABLE tasks ADD COLUMN tool TEXT;
ALTER TABLE tasks ADD COLUMN updated_at_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN started_at_ms INTEGER;
ALTER TABLE nodes ADD COLUMN renewed_at_ms INTEGER;

UPDATE tasks SET
  tool = CASE
    WHEN work IS NOT NULL AND instr(CAST(work AS BLOB), x'00') = 0 AND json_valid(work)
      THEN CASE
        WHEN json_type(work) = 'object' AND json_type(work, '$.tool') = 'text'
          THEN json_extract(work, '$.tool')
      END
  END,
  updated_at_ms = coalesce(CASE
    WHEN instr(CAST(task AS BLOB), x'00') = 0 AND json_valid(task)
      THEN CASE
        WHEN json_type(task) = 'object' AND json_type(task, '$.lastUpdatedAt') = 'text'
          THEN CAST(round((julianday(json_extract(task, '$.lastUpdatedAt')) - 2440587.5)
                          * 86400000.0) AS INTEGER)
      END
  END, created_at_ms);

-- The inventory's pages: creation order (the cursor), stuck by idleness per status, one tool.
-- Tasks of one node use `tasks_active` (owner_node of non-terminal tasks), there since
-- version 1.
CREATE INDEX tasks_created ON tasks (created_at_ms, id);
CREATE INDEX tasks_idle ON tasks (status, updated_at_ms);
CREATE INDEX tasks_tool ON tasks (tool, created_at_ms);

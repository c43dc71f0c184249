-- Schema version 2 of the MCP Tasks SQLite store: the clock's high-water mark.
--
-- The highest time (ms since the Unix epoch) the store has acted on: every committed batch
-- raises it to the latest `now` (or creation time) of its writes. The runtime never reads its
-- clock below it, so a host clock set back across a restart brings no expired task back.
-- A database of version 1 starts from its latest task creation (0 when it has no task).
CREATE TABLE clock (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  high_water_ms INTEGER NOT NULL
) STRICT;

INSERT INTO clock (id, high_water_ms) SELECT 1, coalesce(max(created_at_ms), 0) FROM tasks;

-- Schema version 5 of the MCP Tasks SQLite store: a task records the task design that created
-- it. The tables are unchanged; a task of the 2025-11-25 flow (created on a 2025 session) holds
-- the member `"origin": "2025-11-25"` in its `task` text, which a 2026-07-28 client declaring
-- only the legacy tasks capability may then read and cancel (SEP-2663's version table).
--
-- Rows written before this version carry no origin. A task still running can be told by its
-- work: a 2026-07-28 creation must declare the Tasks extension, and its work keeps the
-- declaration (`clientCapabilities.extensions."io.modelcontextprotocol/tasks"`); work without
-- it came from a 2025 session (or from a host that built the work by hand, which then reads as
-- a 2025 task). A terminal task keeps no work, so it stays a task of the extension. A row whose
-- `task` or `work` is not a JSON object is left as it is (the store quarantines it when read).

UPDATE tasks
SET task = json_set(task, '$.origin', '2025-11-25')
WHERE CASE
  WHEN work IS NOT NULL AND json_valid(work) AND json_valid(task)
    THEN json_type(task) = 'object'
      AND json_type(work) = 'object'
      AND json_type(task, '$.origin') IS NULL
      AND json_type(work, '$.clientCapabilities.extensions."io.modelcontextprotocol/tasks"') IS NULL
  ELSE 0
END;

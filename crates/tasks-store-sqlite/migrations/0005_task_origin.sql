-- Schema version 5 of the MCP Tasks SQLite store: a task records the task design that created
-- it. The tables are unchanged; a task of the 2025-11-25 flow (created on a 2025 session) holds
-- the member `"origin": "2025-11-25"` in its `task` text, which a 2026-07-28 client declaring
-- only the legacy tasks capability may then read and cancel (SEP-2663's version table).
--
-- Rows written before this version carry no origin. A task still running can be told by its
-- work: a 2026-07-28 creation must declare the Tasks extension, and its work keeps the
-- declaration (`clientCapabilities.extensions."io.modelcontextprotocol/tasks"`); work without
-- it came from a 2025 session (or from a host that built the work by hand, which then reads as
-- a 2025 task). A terminal task keeps no work, so it stays a task of the extension.
--
-- Only what can be read for certain is marked; anything else stays the extension's task (the
-- safe side: it can only narrow what a legacy-only client reaches), and a row that does not
-- decode is left exactly as it is (the store quarantines it when it opens):
-- * `task` and `work` must be JSON objects, valid as a whole: SQLite's JSON functions stop
--   at a NUL byte, so a text holding one (which the store never writes) is left alone rather
--   than rewritten without its tail;
-- * neither may hold a `\u` escape: SQLite's JSON paths do not match a member name spelt
--   with one, so the declaration (or an `origin` already there) could hide behind it. The
--   store writes `\u` only for control characters in strings.

UPDATE tasks
SET task = json_set(task, '$.origin', '2025-11-25')
WHERE CASE
  WHEN work IS NOT NULL
       AND instr(CAST(task AS BLOB), x'00') = 0 AND instr(CAST(work AS BLOB), x'00') = 0
       AND instr(task, '\u') = 0 AND instr(work, '\u') = 0
       AND json_valid(work) AND json_valid(task)
    THEN json_type(task) = 'object'
      AND json_type(work) = 'object'
      AND json_type(task, '$.origin') IS NULL
      AND json_type(work, '$.clientCapabilities.extensions."io.modelcontextprotocol/tasks"') IS NULL
  ELSE 0
END;

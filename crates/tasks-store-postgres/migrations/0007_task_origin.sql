-- Schema version 7 of the MCP Tasks PostgreSQL store: a task records the task design that
-- created it. `{schema}` stands for the quoted schema name. Run once, inside the migration
-- transaction, under the store's advisory lock.
--
-- The tables are unchanged; a task of the 2025-11-25 flow (created on a 2025 session) holds
-- the member `"origin": "2025-11-25"` in its `task`, which a 2026-07-28 client declaring only
-- the legacy tasks capability may then read and cancel (SEP-2663's version table).
--
-- Rows written before this version carry no origin. A task still running can be told by its
-- work: a 2026-07-28 creation must declare the Tasks extension, and its work keeps the
-- declaration (the member `"io.modelcontextprotocol/tasks":` of `clientCapabilities.extensions`);
-- work without it came from a 2025 session (or from a host that built the work by hand, which
-- then reads as a 2025 task). A terminal task keeps no work, so it stays a task of the extension.
--
-- Every test is on the text (the columns are `json`, kept byte for byte): PostgreSQL's json
-- operators (`->`, `#>`) and a cast to `jsonb` de-escape the strings they pass and refuse a
-- U+0000, which a task's arguments, answers or results may hold, and one such row would stop
-- the migration. The member name is searched as a key (`"…":`), which a string value cannot
-- spell (its quotes are escaped); a work naming it as a key elsewhere (in its arguments) reads
-- as the extension's, the safe side: it can only narrow what a legacy-only client reaches. The
-- member is added to the front of compact objects with at least one member (what the store
-- writes); any other row is left as it is (the store quarantines it when read).
UPDATE {schema}.tasks
SET task = ('{"origin":"2025-11-25",' || substr(task::text, 2))::json
WHERE work IS NOT NULL
  AND task::text LIKE '{"%'
  AND json_typeof(work) = 'object'
  AND position('"io.modelcontextprotocol/tasks":' in work::text) = 0;

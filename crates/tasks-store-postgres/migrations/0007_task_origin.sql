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
-- declaration (`clientCapabilities.extensions."io.modelcontextprotocol/tasks"`); work without
-- it came from a 2025 session (or from a host that built the work by hand, which then reads as
-- a 2025 task). A terminal task keeps no work, so it stays a task of the extension.
--
-- Only what can be read for certain is marked; anything else stays the extension's task (the
-- safe side: it can only narrow what a legacy-only client reaches), and a row is never made
-- unreadable:
-- * PostgreSQL's json operators de-escape every string they pass and refuse a U+0000, which a
--   task's arguments, answers or messages may hold; one such row must not stop the
--   migration, so the test runs in a function that answers `false` for any row it cannot
--   read;
-- * a task that already names an `origin` (however spelt) is left as it is;
-- * the member is added to the text (the column is `json`, kept byte for byte; a cast to
--   `jsonb` would refuse U+0000 too), at the front of a compact object with at least one
--   member (what the store writes).
CREATE FUNCTION {schema}.tasks_0007_created_in_2025(task json, work json) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  RETURN json_typeof(task) = 'object'
    AND json_typeof(work) = 'object'
    AND (task -> 'origin') IS NULL
    AND (work #> '{clientCapabilities,extensions,io.modelcontextprotocol/tasks}') IS NULL;
EXCEPTION WHEN others THEN
  RETURN false;
END
$$;

UPDATE {schema}.tasks
SET task = ('{"origin":"2025-11-25",' || substr(task::text, 2))::json
WHERE work IS NOT NULL
  AND task::text LIKE '{"%'
  AND {schema}.tasks_0007_created_in_2025(task, work);

DROP FUNCTION {schema}.tasks_0007_created_in_2025(json, json);

-- Schema version 8 of the MCP Tasks PostgreSQL store: the operator's inventory
-- (`Store::inventory`, `inventory_counts`, `nodes`). `{schema}` stands for the quoted schema
-- name. Run once, inside the migration transaction, under the store's advisory lock.
--
-- `tasks` gains two columns, written by every write of this build on:
-- * `tool`: the tool the task runs, kept when the task turns terminal and its `work` is
--   cleared, so a terminal task still shows its tool. Backfilled from `work` where the row
--   still has it; NULL for a terminal task stored before this version (its work was already
--   dropped: the tool is not known any more).
-- * `updated_at_ms`: the task's `lastUpdatedAt` in milliseconds since the Unix epoch, for the
--   stuck rules (`working` or `input_required` without a change for too long). Backfilled
--   from `task`; `created_at_ms` where it cannot be read.
--
-- `nodes` gains `started_at_ms` (the last registration) and `renewed_at_ms` (the last
-- registration or renewal), NULL for the rows of older versions.
--
-- The backfill never fails and never changes `task` or `work`: PostgreSQL's json operators
-- de-escape every string they pass and refuse a U+0000, which a task's arguments, answers or
-- messages may hold, so each value is read in a function that catches any error (as version 7
-- did) and then reads the text as the store writes it, or answers NULL. A row that does not decode is quarantined by the first read
-- that meets it, as before (which writes its `updated_at_ms`).
--
-- For the same reason a create cannot take the tool from its work in SQL: `create_tasks`
-- gains a thirteenth array, `p_tools` (NULL for a tool name the column cannot hold), and
-- checks the owner's lease itself (version 5's rule, code 4), so every create is one
-- set-based insert. The functions of versions 3 and 5 stay for builds of versions 5 to 7,
-- which store no tool (a rolling upgrade leaves those tasks without one; their transitions
-- leave `updated_at_ms` behind, which the inventory corrects from the task itself).
--
-- Indexes: creation order with the id as the inventory's cursor (`id COLLATE "C"`, the
-- store's id order), one tool in creation order, and the idleness of active tasks (partial:
-- terminal tasks are never stuck). Tasks of one node use `tasks_active` (version 1).
--
-- The backfill rewrites every row once (a table of a million tasks takes a while, under the
-- lock the migration holds; nodes of the previous build go on serving meanwhile).

ALTER TABLE {schema}.tasks ADD COLUMN tool text, ADD COLUMN updated_at_ms bigint;
ALTER TABLE {schema}.nodes ADD COLUMN started_at_ms bigint, ADD COLUMN renewed_at_ms bigint;

-- When the json operators refuse a row, its text is read as the store writes it: `tool` first
-- in `work`; `lastUpdatedAt` after `taskId` and `createdAt` in `task` (and after the `origin`
-- that version 7 puts in front). A name or time spelt with escapes is then not read.
CREATE FUNCTION {schema}.tasks_0008_tool(work json) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  IF json_typeof(work) = 'object' AND json_typeof(work -> 'tool') = 'string' THEN
    RETURN work ->> 'tool';
  END IF;
  RETURN NULL;
EXCEPTION WHEN others THEN
  RETURN substring(work::text FROM '^\{"tool":"([^"\\]*)"');
END
$$;

CREATE FUNCTION {schema}.tasks_0008_ms(at text) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  RETURN round(extract(epoch FROM at::timestamptz) * 1000)::bigint;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;

CREATE FUNCTION {schema}.tasks_0008_updated_at_ms(task json) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  IF json_typeof(task) = 'object' AND json_typeof(task -> 'lastUpdatedAt') = 'string' THEN
    RETURN {schema}.tasks_0008_ms(task ->> 'lastUpdatedAt');
  END IF;
  RETURN NULL;
EXCEPTION WHEN others THEN
  RETURN {schema}.tasks_0008_ms(substring(task::text FROM
    '^\{(?:"origin":"[^"\\]*",)?"taskId":"(?:[^"\\]|\\.)*","createdAt":"[^"\\]*","lastUpdatedAt":"([^"\\]*)"'));
END
$$;

UPDATE {schema}.tasks
SET tool = CASE WHEN work IS NOT NULL THEN {schema}.tasks_0008_tool(work) END,
    updated_at_ms = coalesce({schema}.tasks_0008_updated_at_ms(task), created_at_ms);

DROP FUNCTION {schema}.tasks_0008_tool(json);
DROP FUNCTION {schema}.tasks_0008_updated_at_ms(json);
DROP FUNCTION {schema}.tasks_0008_ms(text);

ALTER TABLE {schema}.tasks ALTER COLUMN updated_at_ms SET NOT NULL;

-- A row inserted by the functions of versions 3 and 5 (a build before this one, during a
-- rolling upgrade) names no `updated_at_ms`: it starts at its creation time, as every task
-- does. The trigger's condition is checked without calling the function, so the inserts of
-- this build, which name it, pay next to nothing.
CREATE FUNCTION {schema}.tasks_updated_at_from_created() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at_ms := NEW.created_at_ms;
  RETURN NEW;
END
$$;
CREATE TRIGGER tasks_updated_at_from_created BEFORE INSERT ON {schema}.tasks
  FOR EACH ROW WHEN (NEW.updated_at_ms IS NULL)
  EXECUTE FUNCTION {schema}.tasks_updated_at_from_created();

CREATE INDEX tasks_created ON {schema}.tasks (created_at_ms, id COLLATE "C");
CREATE INDEX tasks_tool ON {schema}.tasks (tool, created_at_ms);
CREATE INDEX tasks_idle ON {schema}.tasks (status, updated_at_ms)
  WHERE status IN ('working', 'input_required');

-- `create_tasks` of version 3, with the lease check of version 5 and the tools: 0 stored,
-- 1 refused by `max_tasks`, 2 by `max_active_per_scope`, 3 the id is taken, 4 the owner's
-- lease is required and not live at the creation time (nothing of it is stored). Lock order
-- and counters as in version 3.
CREATE FUNCTION {schema}.create_tasks(
  p_ids text[], p_scopes text[], p_revisions bigint[], p_statuses text[], p_created bigint[],
  p_expires bigint[], p_tasks json[], p_works json[], p_owners bytea[], p_max_tasks bigint[],
  p_max_active bigint[], p_leased boolean[], p_tools text[]
) RETURNS smallint[] LANGUAGE plpgsql AS $fn$
#variable_conflict error
DECLARE
  v_n integer := coalesce(cardinality(p_ids), 0);
  v_outcome smallint[] := array_fill(0::smallint, ARRAY[v_n]);
  v_inserted text[];
  v_refused text[];
  v_total bigint;
  v_counted bigint := 0;
  v_names text[];
  v_active bigint[];
  v_added bigint[];
  v_undo boolean := false;
  v_k integer;
  v_i integer;
BEGIN
  IF v_n = 0 THEN
    RETURN v_outcome;
  END IF;
  SELECT coalesce(array_agg(r.id), '{}') INTO v_refused
  FROM unnest(p_ids, p_owners, p_created, p_leased) AS r(id, owner_node, created_at_ms, leased)
  WHERE coalesce(r.leased, false)
    AND NOT EXISTS (SELECT 1 FROM {schema}.nodes n
                    WHERE n.node_id = r.owner_node
                      AND n.lease_expires_at_ms > r.created_at_ms);
  WITH ins AS (
    INSERT INTO {schema}.tasks AS t (id, scope, revision, status, created_at_ms, expires_at_ms,
                                     task, work, owner_node, generation, attempt, tool,
                                     updated_at_ms)
    SELECT u.id, u.scope, u.revision, u.status, u.created_at_ms, u.expires_at_ms, u.task,
           u.work, u.owner_node, 1, 1, u.tool, u.created_at_ms
    FROM unnest(p_ids, p_scopes, p_revisions, p_statuses, p_created, p_expires, p_tasks,
                p_works, p_owners, p_tools)
         AS u(id, scope, revision, status, created_at_ms, expires_at_ms, task, work,
              owner_node, tool)
    WHERE NOT (u.id = ANY(v_refused))
    ORDER BY u.id
    ON CONFLICT (id) DO NOTHING
    RETURNING t.id)
  SELECT coalesce(array_agg(ins.id), '{}') INTO v_inserted FROM ins;

  SELECT c.total INTO STRICT v_total FROM {schema}.counts c WHERE c.id = 1 FOR UPDATE;
  INSERT INTO {schema}.scope_counts AS c (scope, active)
  SELECT DISTINCT s.scope, 0 FROM unnest(p_scopes) AS s(scope) ORDER BY s.scope
  ON CONFLICT (scope) DO NOTHING;
  SELECT array_agg(l.scope ORDER BY l.scope), array_agg(l.active ORDER BY l.scope)
  INTO v_names, v_active
  FROM (SELECT c.scope, c.active FROM {schema}.scope_counts c
        WHERE c.scope = ANY(p_scopes) ORDER BY c.scope FOR UPDATE) l;
  v_added := array_fill(0::bigint, ARRAY[cardinality(v_names)]);

  FOR v_i IN 1..v_n LOOP
    v_k := array_position(v_names, p_scopes[v_i]);
    IF p_ids[v_i] = ANY(v_refused) THEN
      v_outcome[v_i] := 4;
    ELSIF v_total + v_counted >= p_max_tasks[v_i] THEN
      v_outcome[v_i] := 1;
    ELSIF p_max_active[v_i] <= 0 OR v_active[v_k] + v_added[v_k] >= p_max_active[v_i] THEN
      v_outcome[v_i] := 2;
    ELSIF NOT (p_ids[v_i] = ANY(v_inserted)) THEN
      v_outcome[v_i] := 3;
    ELSE
      v_counted := v_counted + 1;
      v_added[v_k] := v_added[v_k] + 1;
    END IF;
    IF v_outcome[v_i] IN (1, 2) AND p_ids[v_i] = ANY(v_inserted) THEN
      v_undo := true;
    END IF;
  END LOOP;

  IF v_undo THEN
    DELETE FROM {schema}.tasks t
    USING unnest(p_ids, v_outcome) AS r(id, code)
    WHERE t.id = r.id AND r.code IN (1, 2) AND r.id = ANY(v_inserted);
  END IF;
  IF v_counted > 0 THEN
    UPDATE {schema}.counts c SET total = c.total + v_counted WHERE c.id = 1;
    UPDATE {schema}.scope_counts c SET active = c.active + a.added
    FROM unnest(v_names, v_added) AS a(scope, added)
    WHERE c.scope = a.scope AND a.added > 0;
  END IF;
  RETURN v_outcome;
END
$fn$;

-- Schema version 3 of the MCP Tasks PostgreSQL store: creates in batches (group commit).
-- `{schema}` stands for the quoted schema name. Run once, inside the migration transaction,
-- under the store's advisory lock.
--
-- `create_tasks` stores a batch of new tasks in the caller's transaction and answers one code
-- per task, in the order given: 0 stored, 1 refused by `max_tasks`, 2 refused by
-- `max_active_per_scope`, 3 the id is taken. The tasks are decided as if created one at a
-- time in the order given, and a refusal names the first bound that refuses, in the order
-- `max_tasks`, `max_active_per_scope`, taken id. The caller never puts one id in a batch
-- twice. Each table is written by one set-based statement per batch, not one per task.
--
-- Lock order (the store's, see `sql.rs`): task rows first, inserted in id order so that two
-- batches never wait for each other's rows crosswise; then the `counts` row; then the batch's
-- `scope_counts` rows, in scope order.
--
-- Creates of builds before this version reserve capacity through `pending_counts` (version
-- 2); both kinds keep the counters exact side by side.
CREATE FUNCTION {schema}.create_tasks(
  p_ids text[], p_scopes text[], p_revisions bigint[], p_statuses text[], p_created bigint[],
  p_expires bigint[], p_tasks json[], p_works json[], p_owners bytea[], p_max_tasks bigint[],
  p_max_active bigint[]
) RETURNS smallint[] LANGUAGE plpgsql AS $fn$
#variable_conflict error
DECLARE
  v_n integer := coalesce(cardinality(p_ids), 0);
  v_outcome smallint[] := array_fill(0::smallint, ARRAY[v_n]);
  v_inserted text[];
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
  WITH ins AS (
    INSERT INTO {schema}.tasks AS t (id, scope, revision, status, created_at_ms, expires_at_ms,
                                     task, work, owner_node, generation, attempt)
    SELECT u.id, u.scope, u.revision, u.status, u.created_at_ms, u.expires_at_ms, u.task,
           u.work, u.owner_node, 1, 1
    FROM unnest(p_ids, p_scopes, p_revisions, p_statuses, p_created, p_expires, p_tasks,
                p_works, p_owners)
         AS u(id, scope, revision, status, created_at_ms, expires_at_ms, task, work,
              owner_node)
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
    IF v_total + v_counted >= p_max_tasks[v_i] THEN
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

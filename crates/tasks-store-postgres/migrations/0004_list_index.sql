-- Schema version 4 of the MCP Tasks PostgreSQL store: an index for listing one scope's tasks in
-- id order (2025-11-25 `tasks/list`: `WHERE scope = $1 AND id > $2 ORDER BY id LIMIT $3`).
-- `{schema}` stands for the quoted schema name.
CREATE INDEX tasks_scope_id ON {schema}.tasks (scope, id);

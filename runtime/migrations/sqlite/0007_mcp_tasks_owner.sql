-- A caller's MCP tasks, newest first (tasks/list of protocol revision 2025-11-25, page by page).
CREATE INDEX IF NOT EXISTS mcp_tasks_owner ON mcp_tasks (service, tenant_id, subject, created_at, id);

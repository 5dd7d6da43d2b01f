-- MCP tasks (the io.modelcontextprotocol/tasks extension): a tool call that went on in the
-- background, polled with tasks/get. The row is the task's truth for every replica: its status
-- and what goes with it (`payload`: the result, the error, or the input requests it waits for),
-- the answers tasks/update delivered and the task has not taken yet, and its runner's heartbeat,
-- by which a task whose server stopped is seen to have failed.

CREATE TABLE IF NOT EXISTS mcp_tasks (
    id TEXT PRIMARY KEY,
    service TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    payload TEXT,
    answers TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    ttl_ms BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX IF NOT EXISTS mcp_tasks_expiry ON mcp_tasks (expires_at);

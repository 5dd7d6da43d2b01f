-- wrk script: MCP tools/call vault.list_credentials (legacy revision, stateless). Needs TOKEN.
function init(args)
  wrk.method = "POST"
  wrk.path = "/api/mcp"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
  wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vault.list_credentials","arguments":{"per_page":20}}}'
end

-- wrk script: $METHOD (default GET) $QUERY with $BODY (JSON, optional), rotating over the tokens
-- in the file $TOKENS (one per line), so the per-token plan limits do not throttle the measurement.
-- With $MCP set, the headers of a Streamable HTTP MCP request are added (2025-11-25; with MCP=2026
-- the 2026-07-28 ones, `Mcp-Method` and `Mcp-Name` from $MCP_METHOD and $MCP_NAME). `{n}` in $BODY becomes
-- a value unique to each request (thread number and count), for writes that must not collide.
local tokens = {}
local i = 0
local method = os.getenv("METHOD") or "GET"
local body = os.getenv("BODY")
local mcp = os.getenv("MCP")
local sent = 0
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("prefix", tostring(threads))
end
function init(args)
  for line in io.lines(os.getenv("TOKENS")) do
    if #line > 0 then table.insert(tokens, line) end
  end
  i = math.random(#tokens)
end
function request()
  i = i % #tokens + 1
  local headers = { ["Authorization"] = "Bearer " .. tokens[i] }
  if body then headers["Content-Type"] = "application/json" end
  if mcp and #mcp > 0 then
    headers["Accept"] = "application/json, text/event-stream"
    headers["MCP-Protocol-Version"] = "2025-11-25"
    -- MCP=2026: the stateless revision, with the routing headers it requires.
    if mcp == "2026" then
      headers["MCP-Protocol-Version"] = "2026-07-28"
      headers["Mcp-Method"] = os.getenv("MCP_METHOD")
      headers["Mcp-Name"] = os.getenv("MCP_NAME")
    end
  end
  local payload = body
  if body then
    sent = sent + 1
    payload = body:gsub("{n}", (prefix or "0") .. "-" .. sent)
  end
  return wrk.format(method, os.getenv("QUERY"), headers, payload)
end

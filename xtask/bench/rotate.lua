-- wrk script: GET $QUERY, rotating over the tokens in the file $TOKENS (one per
-- line), so the per-token plan limits do not throttle the measurement.
local tokens = {}
local i = 0
function init(args)
  for line in io.lines(os.getenv("TOKENS")) do
    if #line > 0 then table.insert(tokens, line) end
  end
  i = math.random(#tokens)
end
function request()
  i = i % #tokens + 1
  return wrk.format("GET", os.getenv("QUERY"), { ["Authorization"] = "Bearer " .. tokens[i] })
end

-- wrk script: POST /api/v1/credentials with a unique key per request.
-- Needs TOKEN and FOLDER in the environment.
local counter = 0
local thread_id = 0
local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
function init(args)
  wrk.method = "POST"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  counter = counter + 1
  local key = string.format("bench-%s-%d-%d", os.getenv("RUN") or "r", id, counter)
  local body = string.format('{"key":"%s","value":"secret-value-%d","folder_id":"%s","tags":["bench"]}', key, counter, os.getenv("FOLDER"))
  return wrk.format(nil, "/api/v1/credentials", nil, body)
end

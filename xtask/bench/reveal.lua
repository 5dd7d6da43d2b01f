-- wrk script: POST /api/v1/credentials/<KEY>/reveal. Needs TOKEN and KEY.
function init(args)
  wrk.method = "POST"
  wrk.path = "/api/v1/credentials/" .. os.getenv("KEY") .. "/reveal"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = "{}"
end

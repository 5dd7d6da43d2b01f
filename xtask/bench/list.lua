-- wrk script: GET /api/v1/credentials?per_page=20. Needs TOKEN.
function init(args)
  wrk.path = "/api/v1/credentials?per_page=20"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
end

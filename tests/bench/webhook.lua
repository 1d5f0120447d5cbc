-- wrk script: signed GitHub-style push deliveries to /hooks/forge, each
-- with its own delivery id so that every request is a new durable row.
-- Body and signature come from the environment (computed by webhooks.sh).
local body = os.getenv("KFIX_BENCH_BODY")
local sig = os.getenv("KFIX_BENCH_SIG")
local run = os.getenv("KFIX_BENCH_RUN") or "run"
local threads = 0

function setup(thread)
   thread:set("tid", threads)
   threads = threads + 1
end

function init(args)
   n = 0
end

function request()
   n = n + 1
   local headers = {
      ["Content-Type"] = "application/json",
      ["X-GitHub-Event"] = "push",
      ["X-Hub-Signature-256"] = "sha256=" .. sig,
      ["X-GitHub-Delivery"] = run .. "-" .. tid .. "-" .. n,
   }
   return wrk.format("POST", "/hooks/forge", headers, body)
end

-- wrk script for tests/bench/run.sh: the request from the environment, and one
-- machine-readable line at the end (wrk's own summary stays on stdout above it).
--   BENCH_TOKEN   bearer token (never on a command line: /proc/PID/cmdline is public)
--   BENCH_METHOD  GET (default) or POST
--   BENCH_BODY    request body for POST
-- wrk counts a response with status > 399 in errors.status: that is the non-2xx
-- count reported (the API sends no 1xx or 3xx).

wrk.method = os.getenv("BENCH_METHOD") or "GET"
local token = os.getenv("BENCH_TOKEN")
if token and token ~= "" then
   wrk.headers["Authorization"] = "Bearer " .. token
end
if wrk.method == "POST" then
   wrk.body = os.getenv("BENCH_BODY") or "{}"
   wrk.headers["Content-Type"] = "application/json"
end

done = function(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'BENCHJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
      '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"mean":%.1f,"max":%d}}\n',
      summary.requests, summary.duration, summary.bytes,
      e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99),
      latency.mean, latency.max))
end

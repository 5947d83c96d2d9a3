-- wrk's summary as one line: requests/s, p50, p99, p99.9 (µs), errors. Used by serve.sh.
-- DELAY_MS (optional): each connection waits this long between requests, to hold a rate
-- below the peak (wrk has no fixed-rate mode; see BENCHMARKS.md).
local delay_ms = tonumber(os.getenv("DELAY_MS") or "0")
if delay_ms > 0 then
  function delay()
    return delay_ms
  end
end

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout
  io.write(string.format("RESULT requests=%d rps=%.0f p50_us=%d p99_us=%d p999_us=%d max_us=%d errors=%d\n",
    summary.requests, summary.requests / summary.duration * 1e6,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max, errors))
end

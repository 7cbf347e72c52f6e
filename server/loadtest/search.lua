-- wrk script for `make loadtest`: POST /v1/search with the SciFact claims as queries, one
-- query per request, round-robin (each thread starts at a different offset).
--
--   wrk -t2 -c32 -d20s -s search.lua http://127.0.0.1:18080 -- QUERIES.jsonl [k] [mode] [api-key]
--
-- done() prints one machine-readable RESULT line besides wrk's own report.

local bodies = {}
local idx = 0
local headers = { ["Content-Type"] = "application/json" }
non200 = 0 -- global: read per thread in done()

-- jsonString returns the raw (still escaped) JSON string value of key in a JSON line, so it
-- can be pasted into another JSON document unchanged.
local function jsonString(line, key)
  local _, e = line:find('"' .. key .. '"%s*:%s*"')
  if not e then return nil end
  local i = e + 1
  while i <= #line do
    local c = line:sub(i, i)
    if c == "\\" then
      i = i + 2
    elseif c == '"' then
      return line:sub(e + 1, i - 1)
    else
      i = i + 1
    end
  end
  return nil
end

local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("offset", counter * 97)
  table.insert(threads, thread)
end

function init(args)
  local path = args[1] or error("search.lua: give the queries file after --")
  local k = tonumber(args[2] or "10")
  local mode = args[3] or "bm25"
  if args[4] and args[4] ~= "" then headers["Authorization"] = "Bearer " .. args[4] end
  for line in io.lines(path) do
    local text = jsonString(line, "text")
    if text and text ~= "" then
      table.insert(bodies, string.format('{"text":"%s","k":%d,"mode":"%s"}', text, k, mode))
    end
  end
  if #bodies == 0 then error("search.lua: no queries in " .. path) end
  idx = (offset or 0) % #bodies
end

function request()
  idx = idx % #bodies + 1
  return wrk.format("POST", "/v1/search", headers, bodies[idx])
end

function response(status, hdrs, body)
  if status ~= 200 then non200 = non200 + 1 end
end

function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do bad = bad + (t:get("non200") or 0) end
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d seconds=%.1f rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f non200=%d socket_errors=%d\n",
    summary.requests, secs, summary.requests / secs,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, bad, e.connect + e.read + e.write + e.timeout))
end

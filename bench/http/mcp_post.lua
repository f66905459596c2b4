-- wrk script: POST one MCP JSON-RPC request per call, with the headers of its revision.
--
-- Environment:
--   MCP_REV        2026-07-28 (default), 2025-11-25, or "mixed" (alternate the two per request)
--   MCP_METHOD     tools/call (default) or tools/list
--   MCP_NAME       the tool for tools/call (default "add"; arguments are {"a":2,"b":3})
--   MCP_EXPECT     a plain substring every 2xx response body must contain ("" = no check)
--   MCP_MAX        stop the thread after this many responses (0 = run for -d); run with -t1
--   MCP_DONE_FILE  with MCP_MAX, a file created when the count is reached (wrk still sleeps
--                  until -d is over, so the caller then ends it early with SIGINT)
--   MCP_SESSION    an Mcp-Session-Id to send with every request (a 2025 session opened by the
--                  caller); "" (default) for none
--   MCP_AUTHORIZATION  an Authorization header to send with every request (e.g. "Bearer <jwt>",
--                  bench/http/oauth.py); "" (default) for none
--
-- 2026-07-28: stateless; MCP-Protocol-Version, Mcp-Method and (tools/call) Mcp-Name headers
-- and the request _meta with protocolVersion and clientCapabilities.
-- 2025-11-25: MCP-Protocol-Version header only, no initialize (stateless servers accept that).
--
-- done() prints one line "WRK_JSON {...}": counts, non-2xx responses, bodies without MCP_EXPECT,
-- socket errors and latency percentiles in microseconds.

local rev = os.getenv("MCP_REV") or "2026-07-28"
local method = os.getenv("MCP_METHOD") or "tools/call"
local name = os.getenv("MCP_NAME") or "add"
local expect = os.getenv("MCP_EXPECT") or ""
local max_responses = tonumber(os.getenv("MCP_MAX") or "0") or 0
local done_file = os.getenv("MCP_DONE_FILE") or ""
local session = os.getenv("MCP_SESSION") or ""
local authorization = os.getenv("MCP_AUTHORIZATION") or ""

local function build(revision)
  local modern = revision == "2026-07-28"
  local meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. revision ..
    '","io.modelcontextprotocol/clientCapabilities":{}}'
  local params
  if method == "tools/call" then
    params = '{"name":"' .. name .. '","arguments":{"a":2,"b":3}' ..
      (modern and (',' .. meta) or '') .. '}'
  else
    params = modern and ('{' .. meta .. '}') or '{}'
  end
  local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = revision,
  }
  if session ~= "" then
    headers["Mcp-Session-Id"] = session
  end
  if authorization ~= "" then
    headers["Authorization"] = authorization
  end
  if modern then
    headers["Mcp-Method"] = method
    if method == "tools/call" then
      headers["Mcp-Name"] = name
    end
  end
  local body = '{"jsonrpc":"2.0","id":1,"method":"' .. method .. '","params":' .. params .. '}'
  return headers, body
end

local mixed = {}

if rev == "mixed" then
  -- The two requests are formatted in init(), once wrk has set the Host header.
  local flip = false
  request = function()
    flip = not flip
    if flip then return mixed[1] end
    return mixed[2]
  end
else
  local headers, body = build(rev)
  wrk.method = "POST"
  wrk.body = body
  for key, value in pairs(headers) do
    wrk.headers[key] = value
  end
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  if rev == "mixed" then
    for index, revision in ipairs({"2026-07-28", "2025-11-25"}) do
      local headers, body = build(revision)
      headers["Host"] = wrk.headers["Host"]
      mixed[index] = wrk.format("POST", wrk.path, headers, body)
    end
  end
  responses = 0
  non2xx = 0
  bad_body = 0
end

function response(status, headers, body)
  responses = responses + 1
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
  elseif expect ~= "" and not string.find(body, expect, 1, true) then
    bad_body = bad_body + 1
  end
  if max_responses > 0 and responses == max_responses then
    -- wrk itself still waits for -d: the caller sees this file and sends wrk SIGINT.
    if done_file ~= "" then
      local marker = io.open(done_file, "w")
      if marker then marker:close() end
    end
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local counted, bad_status, bad = 0, 0, 0
  for _, thread in ipairs(threads) do
    counted = counted + thread:get("responses")
    bad_status = bad_status + thread:get("non2xx")
    bad = bad + thread:get("bad_body")
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"responses":%d,"non2xx":%d,' ..
    '"bad_body":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,' ..
    '"status_errors":%d,"timeouts":%d,"p50_us":%.1f,"p90_us":%.1f,"p99_us":%.1f,' ..
    '"p999_us":%.1f,"max_us":%.1f,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, counted, bad_status, bad,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max, latency.mean))
end

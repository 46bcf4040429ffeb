#!/usr/bin/env python3
"""A conformance check of an MCP Streamable HTTP server (python3 stdlib only).

Follows the published MCP schema (2025-06-18) for the methods the sandbox serves:
initialize, notifications/initialized, ping, tools/list, tools/call, and JSON-RPC 2.0's
error rules; and the Streamable HTTP transport's rules for a server with no SSE stream
(every POST, sent with Accept: application/json, text/event-stream, answered with
application/json; GET is a 405). Usage: mcp_conformance.py URL CACERT TOKEN. Exit 0 when every check holds.
"""
import json
import os
import ssl
import sys
import urllib.error
import urllib.request

URL, CACERT, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]
CTX = ssl.create_default_context(cafile=CACERT)
# SANDBOX_TIME_SCALE (tests/integration/lib.sh): a slow guest's requests get as much longer
TIMEOUT = 60 * int(os.environ.get("SANDBOX_TIME_SCALE") or "1")
FAILED = []
PASSED = [0]


def post(msg, token=TOKEN, raw=None):
    data = raw if raw is not None else json.dumps(msg).encode()
    req = urllib.request.Request(URL, data=data, method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Accept", "application/json, text/event-stream")
    req.add_header("MCP-Protocol-Version", "2025-06-18")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, context=CTX, timeout=TIMEOUT) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def check(name, cond, got=None):
    if cond:
        PASSED[0] += 1
    else:
        FAILED.append(name)
        print("FAIL: %s (got %r)" % (name, got)[:600])


def is_response(m, id_):
    return (isinstance(m, dict) and m.get("jsonrpc") == "2.0" and m.get("id") == id_
            and (("result" in m) != ("error" in m)))


def is_error(m, code):
    e = m.get("error") if isinstance(m, dict) else None
    return (isinstance(e, dict) and e.get("code") == code and isinstance(e.get("message"), str)
            and set(e) <= {"code", "message", "data"})


def content_ok(c):
    return (isinstance(c, list) and all(isinstance(x, dict) and x.get("type") == "text"
                                        and isinstance(x.get("text"), str) for x in c))


def rpc(id_, method, params=None):
    msg = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    st, h, body = post(msg)
    check(method + ": HTTP 200", st == 200, st)
    check(method + ": application/json", h.get("Content-Type", "").startswith("application/json"),
          h.get("Content-Type"))
    m = json.loads(body)
    check(method + ": a JSON-RPC response with the request's id", is_response(m, id_), m)
    return m


# InitializeResult: protocolVersion (string), capabilities (object), serverInfo
# (Implementation: name, version strings).
m = rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "conformance", "version": "1"}})
r = m.get("result", {})
check("initialize: protocolVersion", r.get("protocolVersion") == "2025-06-18", r)
check("initialize: capabilities.tools", isinstance(r.get("capabilities", {}).get("tools"), dict), r)
si = r.get("serverInfo", {})
check("initialize: serverInfo", isinstance(si.get("name"), str) and isinstance(si.get("version"), str), si)

st, _, body = post({"jsonrpc": "2.0", "method": "notifications/initialized"})
check("notifications/initialized: 202 Accepted, no body", st == 202 and body == b"", (st, body))

m = rpc("p", "ping")
check("ping: empty result", m.get("result") == {}, m)

# ListToolsResult: tools: Tool[] {name, inputSchema {type: "object", ...}, description?}
m = rpc(2, "tools/list", {})
tools = m.get("result", {}).get("tools")
check("tools/list: tools array", isinstance(tools, list) and tools, m)
for t in tools or []:
    s = t.get("inputSchema")
    check("tool %s: name" % t.get("name"), isinstance(t.get("name"), str), t)
    check("tool %s: description" % t.get("name"), isinstance(t.get("description"), str), t)
    check("tool %s: inputSchema type object" % t.get("name"),
          isinstance(s, dict) and s.get("type") == "object" and
          isinstance(s.get("properties", {}), dict), s)
    for req in (s or {}).get("required", []):
        check("tool %s: required %s is a property" % (t.get("name"), req), req in s["properties"], s)
    check("tool %s: no unknown members" % t.get("name"),
          set(t) <= {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta"}, t)

# CallToolResult: content (ContentBlock[]), structuredContent? (object), isError? (bool)
m = rpc(3, "tools/call", {"name": "run_command", "arguments": {"command": "echo conformance"}})
r = m.get("result", {})
check("tools/call: content", content_ok(r.get("content")), r)
check("tools/call: structuredContent object", isinstance(r.get("structuredContent"), dict), r)
check("tools/call: isError false", r.get("isError") is False, r)
check("tools/call: output", r.get("content", [{}])[0].get("text") == "conformance\n", r)
m = rpc(4, "tools/call", {"name": "run_command", "arguments": {"command": "exit 9"}})
r = m.get("result", {})
check("tools/call failing: isError true", r.get("isError") is True and content_ok(r.get("content")), r)

m = rpc(9, "tools/call", {"name": "list_runtimes", "arguments": {}})
r = m.get("result", {})
check("list_runtimes: content", content_ok(r.get("content")) and r.get("isError") is False, r)
check("list_runtimes: structuredContent.runtimes",
      isinstance(r.get("structuredContent", {}).get("runtimes"), list), r)
names = [t.get("name") for t in tools or []]
for want in ("session_command_status", "session_command_output", "list_runtimes"):
    check("tools/list has %s" % want, want in names, names)
for t in tools or []:
    for k, v in (t.get("inputSchema") or {}).get("properties", {}).items():
        check("tool %s: property %s is a schema object" % (t.get("name"), k), isinstance(v, dict), v)

# Streamable HTTP: GET opens an optional SSE stream; a server without one answers 405.
req = urllib.request.Request(URL, method="GET")
req.add_header("Accept", "text/event-stream")
req.add_header("Authorization", "Bearer " + TOKEN)
try:
    with urllib.request.urlopen(req, context=CTX, timeout=TIMEOUT) as resp:
        st, h, body = resp.status, resp.headers, resp.read()
except urllib.error.HTTPError as e:
    st, h, body = e.code, e.headers, e.read()
check("GET: 405 (no SSE stream offered)", st == 405, st)
check("GET: Allow: POST", h.get("Allow") == "POST", h.get("Allow"))
try:
    m = json.loads(body)
except ValueError:
    m = None
check("GET: a JSON-RPC error body", isinstance(m, dict) and m.get("jsonrpc") == "2.0" and
      m.get("id") is None and isinstance(m.get("error", {}).get("code"), int), body[:200])

# JSON-RPC errors
m = rpc(5, "no/such/method")
check("unknown method: -32601", is_error(m, -32601), m)
m = rpc(6, "tools/call", {"name": "run_command", "arguments": {"command": 1}})
check("invalid params: -32602", is_error(m, -32602), m)
st, _, body = post(None, raw=b'{"jsonrpc":"2.0",')
m = json.loads(body) if body else {}
check("parse error: -32700 with id null", is_error(m, -32700) and m.get("id") is None, (st, m))
st, _, body = post({"jsonrpc": "1.0", "id": 7, "method": "ping"})
m = json.loads(body) if body else {}
check("jsonrpc 1.0: -32600", is_error(m, -32600), m)
st, h, _ = post({"jsonrpc": "2.0", "id": 8, "method": "ping"}, token=None)
check("no token: 401 with WWW-Authenticate", st == 401 and "Bearer" in h.get("WWW-Authenticate", ""), st)

print("%d passed, %d failed" % (PASSED[0], len(FAILED)))
sys.exit(1 if FAILED else 0)

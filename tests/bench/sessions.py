#!/usr/bin/env python3
"""Session measurements for tests/bench/run.sh (python3 stdlib only; issue 9).

    sessions.py ready     --n N --out FILE   create -> ready, p50/p99 (each closed after)
    sessions.py roundtrip --n N --out FILE   `true` in a ready session: POST -> exit seen
    sessions.py outlat    --n N --out FILE   a write inside the sandbox -> a tailing client
    sessions.py idle      --n N --out FILE   N idle sessions at once: host memory each

Environment as measure.py (SANDBOX_URL, SANDBOX_CACERT, SANDBOX_DB_SOCKET, BENCH_TOKEN,
and SANDBOX_CONFIG for the runner's uid base). Every subcommand writes one JSON document
to --out; on failure it holds "error" and the exit status is 1.
"""
import argparse
import base64
import http.client
import json
import os
import ssl
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402
from measure import Client, Failure, UUID_RE  # noqa: E402

ENDED = {"closed", "expired", "failed", "lost"}
CMD_TERMINAL = {"succeeded", "failed", "timed_out", "output_limit", "killed", "cancelled",
                "error", "lost"}


def create(client):
    status, doc = client.request("POST", "/v1/sessions", json.dumps({"idle_seconds": 600}))
    if status != 201 or not doc or not UUID_RE.match(str(doc.get("id", ""))):
        raise Failure("POST /v1/sessions: %s %s" % (status, doc))
    return doc["id"]


def await_ready(client, sid, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, doc = client.request("GET", "/v1/sessions/%s?wait=10" % sid)
        st = (doc or {}).get("status")
        if st == "ready":
            return
        if st in ENDED or status != 200:
            raise Failure("session %s: %s %s" % (sid, status, doc))
    raise Failure("session %s not ready within %d s" % (sid, timeout))


def close(client, sid):
    client.request("POST", "/v1/sessions/%s/close" % sid, "{}")


def run_cmd(client, sid, body):
    status, doc = client.request("POST", "/v1/sessions/%s/commands" % sid, json.dumps(body))
    if status != 202 or not doc or "id" not in doc:
        raise Failure("POST command: %s %s" % (status, doc))
    return doc["id"]


def await_cmd(client, sid, cid, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, doc = client.request("GET", "/v1/sessions/%s/commands/%s?wait=10" % (sid, cid))
        if (doc or {}).get("status") in CMD_TERMINAL:
            return doc
        if status != 200:
            raise Failure("GET command: %s %s" % (status, doc))
    raise Failure("command %s did not end within %d s" % (cid, timeout))


def cmd_ready(a):
    client = Client()
    lat = []
    for _ in range(a.n):
        t0 = time.perf_counter()
        sid = create(client)
        await_ready(client, sid)
        lat.append((time.perf_counter() - t0) * 1e3)
        close(client, sid)
    return {"n": a.n, "latency_ms": stats.summary(lat), "samples_ms": lat}


def cmd_roundtrip(a):
    client = Client()
    sid = create(client)
    try:
        await_ready(client, sid)
        for _ in range(3):  # warm-up
            await_cmd(client, sid, run_cmd(client, sid, {"argv": ["/bin/true"]}))
        lat = []
        for _ in range(a.n):
            t0 = time.perf_counter()
            doc = await_cmd(client, sid, run_cmd(client, sid, {"argv": ["/bin/true"]}))
            lat.append((time.perf_counter() - t0) * 1e3)
            if doc.get("status") != "succeeded":
                raise Failure("true ended %s" % doc.get("status"))
    finally:
        close(client, sid)
    return {"n": a.n, "latency_ms": stats.summary(lat), "samples_ms": lat}


def cmd_outlat(a):
    """The command prints CLOCK_REALTIME in ns (the sandbox shares the host's clock)
    every 100 ms; the client tails with ?wait and takes, for each line, the time it
    arrived minus the time it was written."""
    client = Client()
    sid = create(client)
    lat = []
    try:
        await_ready(client, sid)
        prog = ("for i in $(seq %d); do date +%%s%%N; sleep 0.1; done" % a.n)
        cid = run_cmd(client, sid, {"command": prog})
        off, buf, deadline = 0, b"", time.monotonic() + a.n * 0.1 + 60
        while len(lat) < a.n and time.monotonic() < deadline:
            status, doc = client.request(
                "GET", "/v1/sessions/%s/commands/%s/output?stream=stdout&offset=%d"
                "&encoding=base64&wait=5" % (sid, cid, off))
            now = time.time_ns()
            if status != 200 or doc is None:
                raise Failure("output: %s %s" % (status, doc))
            data = base64.b64decode(doc.get("data_base64", ""))
            off = doc["next_offset"]
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                lat.append((now - int(line)) / 1e6)
            if doc.get("eof"):
                break
    finally:
        close(client, sid)
    return {"n": len(lat), "latency_ms": stats.summary(lat), "samples_ms": lat}


def mem_available_kb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return None


def pss_kb(pids):
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def session_pids(uids, sids):
    """Processes of the sessions' uids (sandbox, agent) and their supervisors."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/status" % d) as f:
                st = f.read()
            uid = int(st.split("Uid:")[1].split()[1])
            if uid in uids:
                pids.append(int(d))
                continue
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().split(b"\0")
            if b"--supervise-session" in cmd and any(s.encode() in cmd for s in sids):
                pids.append(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return pids


def cmd_idle(a):
    client = Client()
    base = int(subprocess.run(["sed", "-n", "s/^runner_uid_base = //p", os.environ["SANDBOX_CONFIG"]],
                              capture_output=True, text=True).stdout.strip() or 200000)
    before = mem_available_kb()
    sids = []
    try:
        t0 = time.perf_counter()
        for _ in range(a.n):
            sids.append(create(client))
        for sid in sids:
            await_ready(client, sid, timeout=120)
        t_all = (time.perf_counter() - t0) * 1e3
        time.sleep(2)  # let start-up garbage settle
        after = mem_available_kb()
        uids = set(range(base + 1000, base + 1000 + 10000))
        pids = session_pids(uids, sids)
        pss = pss_kb(pids)
    finally:
        for sid in sids:
            close(client, sid)
    return {"n": a.n, "all_ready_ms": t_all, "processes": len(pids),
            "pss_kb_total": pss, "pss_kb_per_session": pss / a.n,
            "memavailable_drop_kb_per_session": (before - after) / a.n}


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("ready", "roundtrip", "outlat", "idle"):
        p = sub.add_parser(name)
        p.add_argument("--n", type=int, required=True)
        p.add_argument("--out", required=True)
    a = ap.parse_args()
    fn = {"ready": cmd_ready, "roundtrip": cmd_roundtrip, "outlat": cmd_outlat,
          "idle": cmd_idle}[a.cmd]
    rc = 0
    try:
        doc = fn(a)
    except (Failure, OSError, http.client.HTTPException, ssl.SSLError, KeyError,
            ValueError) as e:
        doc = {"error": "%s: %s" % (type(e).__name__, e)}
        print("sessions.py %s: %s" % (a.cmd, doc["error"]), file=sys.stderr)
        rc = 1
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())

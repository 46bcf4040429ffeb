#!/usr/bin/env python3
"""Client-side measurements for tests/bench/run.sh (python3 stdlib only).

    measure.py e2e        --n N --warmup W --out FILE
    measure.py throughput --n N --threads T --key-id ID --timeout S --out FILE
    measure.py poll       --n N --ids FILE --label L --out FILE
    measure.py rss        --label L --out FILE
    measure.py wrk        --url URL -c C -d SECONDS --label L --out FILE [--method POST]
    measure.py sql        "SQL"      (prints the rows, tab-separated)

Environment (from var/bench/env): SANDBOX_URL, SANDBOX_CACERT, SANDBOX_DB_SOCKET,
SANDBOX_VAR; BENCH_TOKEN is the bearer token (kept off command lines). Every
subcommand writes one JSON document to --out; on failure it holds "error" and the
exit status is 1. Client timings use time.perf_counter (CLOCK_MONOTONIC).
"""
import argparse
import calendar
import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402

TERMINAL = {"succeeded", "failed", "timed_out", "output_limit", "resource_limit",
            "blocked", "error", "cancelled", "lost"}
TRIVIAL_JOB = json.dumps({"argv": ["/bin/true"]})
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class Failure(Exception):
    pass


def env(name):
    v = os.environ.get(name)
    if not v:
        raise Failure("%s is not set (source var/bench/env)" % name)
    return v


# --------------------------------------------------------------------- HTTP client

class Client:
    """One kept-alive TLS connection, verified against the stack's CA file. nginx
    closes a keep-alive connection after keepalive_requests; http.client then
    reconnects on the next request (counted in .reconnects)."""

    def __init__(self, timeout=60):
        url = urllib.parse.urlsplit(env("SANDBOX_URL"))
        self.host, self.port = url.hostname, url.port or 443
        self.ctx = ssl.create_default_context(cafile=env("SANDBOX_CACERT"))
        self.token = env("BENCH_TOKEN")
        self.timeout = timeout
        self.conn = None
        self.reconnects = 0

    def _connect(self):
        if self.conn is not None:
            self.conn.close()
            self.reconnects += 1
        self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                timeout=self.timeout)

    def request(self, method, path, body=None):
        """(status, parsed JSON or None). One retry when the server had closed the
        kept-alive connection before answering (no response was read)."""
        headers = {"Authorization": "Bearer " + self.token}
        if body is not None:
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):
            if self.conn is None:
                self._connect()
            try:
                self.conn.request(method, path, body=body, headers=headers)
                resp = self.conn.getresponse()
                data = resp.read()
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError, http.client.CannotSendRequest) as e:
                self._connect()
                if attempt:
                    raise Failure("%s %s: %s" % (method, path, e))
                continue
            if resp.getheader("Connection", "").lower() == "close":
                self._connect()
            try:
                doc = json.loads(data) if data else None
            except ValueError:
                doc = None
            return resp.status, doc
        raise Failure("unreachable")

    def submit(self):
        status, doc = self.request("POST", "/v1/jobs", TRIVIAL_JOB)
        if status != 202 or not doc or not UUID_RE.match(str(doc.get("id", ""))):
            return status, None
        return status, doc["id"]


# ------------------------------------------------------------------------ MariaDB

def sql(query):
    """Rows of a query as lists of strings, through the mariadb client as root over
    the stack's socket (socket authentication)."""
    p = subprocess.run(["mariadb", "--no-defaults", "-S", env("SANDBOX_DB_SOCKET"), "-u",
                        "root", "sandbox", "-N", "-B", "-e", query],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise Failure("mariadb: %s" % p.stderr.strip()[:300])
    return [line.split("\t") for line in p.stdout.splitlines()]


def check_uuid(v):
    if not UUID_RE.match(v):
        raise Failure("not a UUID: %r" % v)
    return v


def ms_between(a, b):
    """Milliseconds between two API timestamps 'YYYY-MM-DDTHH:MM:SS.mmmZ'."""
    def parse(t):
        return calendar.timegm(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")) + int(t[20:23]) / 1e3
    return (parse(b) - parse(a)) * 1e3


# --------------------------------------------------------------------- end to end

def wait_terminal(client, job_id, deadline):
    """GET ?wait=30 until the job is terminal: its last document."""
    while True:
        status, doc = client.request("GET", "/v1/jobs/%s?wait=30" % job_id)
        if status != 200 or not doc:
            raise Failure("GET job %s: HTTP %s" % (job_id, status))
        if doc.get("status") in TERMINAL:
            return doc
        if time.monotonic() > deadline:
            raise Failure("job %s still %s after the time budget" % (job_id, doc.get("status")))


def cmd_e2e(a):
    """One job at a time: POST, then GET ?wait=30 until terminal. The latency is
    from sending the POST to reading the terminal document."""
    client = Client()
    lat, post, queued, run, rest, bad, refused = [], [], [], [], [], {}, {}
    deadline = time.monotonic() + a.timeout
    i = 0
    while i < a.warmup + a.n:
        t0 = time.perf_counter()
        status, job_id = client.submit()
        t1 = time.perf_counter()
        if job_id is None:  # counted, not a sample; the same job is tried again
            refused[str(status)] = refused.get(str(status), 0) + 1
            if sum(refused.values()) > max(10, a.n // 10):
                raise Failure("POST /v1/jobs keeps failing: %s" % refused)
            time.sleep(0.1)
            continue
        i += 1
        doc = wait_terminal(client, job_id, deadline)
        t2 = time.perf_counter()
        if i <= a.warmup:
            continue
        lat.append((t2 - t0) * 1e3)
        post.append((t1 - t0) * 1e3)
        if doc["status"] != "succeeded":
            bad[doc["status"]] = bad.get(doc["status"], 0) + 1
        if doc.get("started_at") and doc.get("finished_at"):
            q = ms_between(doc["created_at"], doc["started_at"])
            r = ms_between(doc["started_at"], doc["finished_at"])
            queued.append(q)
            run.append(r)
            rest.append(lat[-1] - post[-1] - q - r)
    return {"latency_ms": stats.summary(lat), "post_ms": stats.summary(post),
            "queued_ms": stats.summary(queued), "run_ms": stats.summary(run),
            "rest_ms": stats.summary(rest), "not_succeeded": bad, "refused": refused,
            "reconnects": client.reconnects}


# --------------------------------------------------------------------- throughput

def submit_all(n, threads):
    """n trivial jobs from `threads` threads, each with its own connection, as fast
    as the API takes them. A refused submission (429, 5xx) is counted and retried
    after a short pause, so n jobs are accepted in the end."""
    lock = threading.Lock()
    state = {"next": 0, "accepted": 0, "refused": {}, "error": None}

    def worker():
        try:
            client = Client()
            while True:
                with lock:
                    if state["next"] >= n or state["error"]:
                        return
                    state["next"] += 1
                while True:
                    status, job_id = client.submit()
                    if job_id is not None:
                        break
                    with lock:
                        state["refused"][str(status)] = state["refused"].get(str(status), 0) + 1
                        if sum(state["refused"].values()) > 10 * n + 100:
                            raise Failure("the API keeps refusing submissions (%s)"
                                          % state["refused"])
                    time.sleep(0.05)
                with lock:
                    state["accepted"] += 1
        except Exception as e:  # reported by the main thread
            with lock:
                state["error"] = "%s: %s" % (type(e).__name__, e)

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if state["error"]:
        raise Failure(state["error"])
    return state


def cmd_throughput(a):
    key = check_uuid(a.key_id)
    t0 = time.monotonic()
    st = submit_all(a.n, a.threads)
    t_sub = time.monotonic()
    terminal = ",".join("'%s'" % s for s in sorted(TERMINAL))
    done = 0
    while time.monotonic() - t0 < a.timeout:
        done = int(sql("SELECT COUNT(*) FROM jobs WHERE key_id = '%s' AND state IN (%s)"
                       % (key, terminal))[0][0])
        if done >= a.n:
            break
        time.sleep(0.2)
    t_done = time.monotonic()
    rows = sql("SELECT state, TIMESTAMPDIFF(MICROSECOND, created_at, started_at),"
               " TIMESTAMPDIFF(MICROSECOND, started_at, finished_at),"
               " UNIX_TIMESTAMP(created_at), UNIX_TIMESTAMP(finished_at)"
               " FROM jobs WHERE key_id = '%s'" % key)
    fin = [r for r in rows if r[0] in TERMINAL and r[1] != "NULL" and r[2] != "NULL"]
    states = {}
    for r in rows:
        states[r[0]] = states.get(r[0], 0) + 1
    out = {"jobs": a.n, "threads": a.threads, "accepted": st["accepted"],
           "refused": st["refused"], "states": states, "completed": len(fin),
           "complete": done >= a.n,
           "submit_seconds": t_sub - t0, "submit_per_s": a.n / (t_sub - t0),
           "client_seconds": t_done - t0}
    if fin:
        first = min(float(r[3]) for r in rows)
        last = max(float(r[4]) for r in fin)
        out["db_seconds"] = last - first
        out["completed_per_s"] = len(fin) / (last - first) if last > first else None
        out["queue_wait_ms"] = stats.summary([int(r[1]) / 1e3 for r in fin])
        out["run_ms"] = stats.summary([int(r[2]) / 1e3 for r in fin])
    if not fin:
        raise Failure("no job of the throughput run finished (states %s)" % states)
    return out


# --------------------------------------------------------------------------- poll

def cmd_poll(a):
    """Sequential GET /v1/jobs/{id} over the given ids, round robin."""
    ids = [check_uuid(x.strip()) for x in open(a.ids) if x.strip()]
    if not ids:
        raise Failure("no job ids to poll")
    client = Client()
    lat, bad = [], {}
    for i in range(a.warmup + a.n):
        job_id = ids[i % len(ids)]
        t0 = time.perf_counter()
        status, _ = client.request("GET", "/v1/jobs/%s" % job_id)
        t1 = time.perf_counter()
        if i < a.warmup:
            continue
        if status != 200:
            bad[str(status)] = bad.get(str(status), 0) + 1
            continue
        lat.append((t1 - t0) * 1e3)
    if not lat:
        raise Failure("every GET failed: %s" % bad)
    return {"label": a.label, "ids": len(ids), "latency_ms": stats.summary(lat),
            "samples_ms": lat, "non_200": bad, "reconnects": client.reconnects}


# ---------------------------------------------------------------------------- rss

def proc_status(pid):
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                out[k] = v.strip()
    except OSError:
        return None
    return out


def kb(st, key):
    v = (st or {}).get(key, "")
    return int(v.split()[0]) if v else None


def read_pid(path):
    try:
        return int(open(path).read().strip())
    except (OSError, ValueError):
        return None


def children(ppid, name):
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        st = proc_status(int(d))
        if st and st.get("Name") == name and st.get("PPid") == str(ppid):
            pids.append(int(d))
    return sorted(pids)


def cmd_rss(a):
    """VmRSS (kB) of the API master, each API worker, and the runner dispatcher."""
    run = os.path.join(env("SANDBOX_VAR"), "run")
    api = read_pid(os.path.join(run, "api.pid"))
    runner = read_pid(os.path.join(run, "runner.pid"))
    if api is None or proc_status(api) is None:
        raise Failure("the API master is not running")
    workers = {str(p): kb(proc_status(p), "VmRSS") for p in children(api, "sandbox-api")}
    return {"label": a.label, "api_master_kb": kb(proc_status(api), "VmRSS"),
            "api_workers_kb": workers, "runner_pid": runner,
            "runner_kb": kb(proc_status(runner), "VmRSS") if runner else None}


# ---------------------------------------------------------------------------- wrk

def cmd_wrk(a):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wrk.lua")
    e = dict(os.environ, BENCH_METHOD=a.method)
    if a.method == "POST":
        e["BENCH_BODY"] = TRIVIAL_JOB
    threads = max(1, min(a.threads, a.c))
    cmd = ["wrk", "-t%d" % threads, "-c%d" % a.c, "-d%ds" % a.d, "--timeout", "10s",
           "-s", script, a.url]
    p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=a.d + 60)
    line = [x for x in p.stdout.splitlines() if x.startswith("BENCHJSON ")]
    if p.returncode != 0 or not line:
        raise Failure("wrk failed (%d): %s" % (p.returncode, (p.stderr or p.stdout)[-300:]))
    r = json.loads(line[-1][len("BENCHJSON "):])
    secs = r["duration_us"] / 1e6
    err = r["errors"]
    ok = r["requests"] - err["status"]
    return {"label": a.label, "url_path": urllib.parse.urlsplit(a.url).path,
            "method": a.method, "concurrency": a.c, "threads": threads, "seconds": secs,
            "requests": r["requests"], "non_2xx": err["status"],
            "socket_errors": err["connect"] + err["read"] + err["write"] + err["timeout"],
            "errors": err, "req_per_s": r["requests"] / secs, "ok_per_s": ok / secs,
            "latency_ms": {k: v / 1e3 for k, v in r["latency_us"].items()}}


# --------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("e2e")
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--timeout", type=float, default=600)
    p = sub.add_parser("throughput")
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--key-id", required=True)
    p.add_argument("--timeout", type=float, default=600)
    p = sub.add_parser("poll")
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--ids", required=True)
    p.add_argument("--label", required=True)
    p = sub.add_parser("rss")
    p.add_argument("--label", required=True)
    p = sub.add_parser("wrk")
    p.add_argument("--url", required=True)
    p.add_argument("-c", type=int, required=True)
    p.add_argument("-d", type=int, required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--method", default="GET", choices=["GET", "POST"])
    p.add_argument("--label", required=True)
    p = sub.add_parser("sql")
    p.add_argument("query")
    for name, sp in sub.choices.items():
        if name != "sql":
            sp.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.cmd == "sql":
        try:
            for row in sql(a.query):
                print("\t".join(row))
        except Failure as e:
            print("measure.py: %s" % e, file=sys.stderr)
            return 1
        return 0
    fn = {"e2e": cmd_e2e, "throughput": cmd_throughput, "poll": cmd_poll, "rss": cmd_rss,
          "wrk": cmd_wrk}[a.cmd]
    rc = 0
    try:
        doc = fn(a)
    except (Failure, OSError, http.client.HTTPException, ssl.SSLError,
            subprocess.TimeoutExpired) as e:
        doc = {"error": "%s: %s" % (type(e).__name__, e)}
        print("measure.py %s: %s" % (a.cmd, doc["error"]), file=sys.stderr)
        rc = 1
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())

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


def stamp_job():
    """The job-start job: build/bench-stamp as an input file, run as the command."""
    exe = os.environ.get("BENCH_STAMP") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bench-stamp")
    import base64
    with open(exe, "rb") as f:
        data = base64.b64encode(f.read()).decode()
    return json.dumps({"argv": ["./bench-stamp"], "files": [
        {"path": "bench-stamp", "content_base64": data, "executable": True}]})


def claimed_us(ids):
    """job id -> the dispatcher's claimed_us (its job_claimed log line)."""
    want, out = set(ids), {}
    path = os.path.join(env("SANDBOX_VAR"), "log", "runner.log")
    rx = re.compile(r"event=job_claimed job=([0-9a-f-]{36}) .*claimed_us=([0-9]+)")
    with open(path, errors="replace") as f:
        for line in f:
            m = rx.search(line)
            if m and m.group(1) in want:
                out[m.group(1)] = int(m.group(2))
    return out
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class Failure(Exception):
    pass


class Bare:
    """build/bench-launch --serve: bare-bwrap launches (and the ceiling) on request,
    so that they interleave with the samples of the measured variant."""

    def __init__(self):
        exe = os.environ.get("BENCH_LAUNCH") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bench-launch")
        self.p = subprocess.Popen([exe, "--serve", "--config", env("SANDBOX_CONFIG")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if json.loads(self.p.stdout.readline() or "{}").get("ready") is not True:
            raise Failure("bench-launch --serve did not start")

    def ask(self, req):
        self.p.stdin.write(req + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise Failure("bench-launch --serve went away")
        d = json.loads(line)
        if not d.get("ok"):
            raise Failure("bench-launch %s: %s" % (req, d.get("error", "failed")))
        return d

    def close(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
        except OSError:
            pass
        self.p.wait(timeout=60)


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
    from sending the POST to reading the terminal document. Interleaved with it,
    in rotating order (A B C, B C A, ...): one bare bwrap launch (the limit) and one
    job-start sample (build/bench-stamp as the job: the ns it printed at exec minus
    the dispatcher's claimed_us)."""
    client = Client()
    bare = Bare()
    sjob = stamp_job()
    lat, post, queued, run, rest, bad, refused = [], [], [], [], [], {}, {}
    bare_ms, bare_cpu, stamps, sbad = [], [], {}, {}
    deadline = time.monotonic() + a.timeout
    i = 0

    def one_bare():
        d = bare.ask("bare")
        if i > a.warmup:
            bare_ms.append(d["total_ms"])
            bare_cpu.append(d["cpu_ns"] / 1e6)

    def one_start():
        status, doc = client.request("POST", "/v1/jobs", sjob)
        if status != 202 or not doc or not UUID_RE.match(str(doc.get("id", ""))):
            raise Failure("POST of the job-start job: HTTP %s %s" % (status, doc))
        d = wait_terminal(client, doc["id"], deadline)
        out = ((d.get("result") or {}).get("stdout") or "").strip()
        if d["status"] != "succeeded" or not out.isdigit():
            sbad[d["status"]] = sbad.get(d["status"], 0) + 1
        elif i > a.warmup:
            stamps[doc["id"]] = int(out)

    while i < a.warmup + a.n:
        extras = [one_bare, one_start]
        if i % 3 == 1:
            extras.reverse()
        if i % 3 == 2:  # C A B: the extras first
            for fn in extras:
                fn()
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
        if (i - 1) % 3 != 2:
            for fn in extras:
                fn()
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
    bare.close()
    cl = claimed_us(stamps)
    start = [(stamps[j] / 1e3 - cl[j]) / 1e3 for j in stamps if j in cl]
    if not start:
        raise Failure("no job-start sample (claimed_us missing from runner.log?)")
    return {"latency_ms": stats.summary(lat), "latency_samples": lat,
            "bare_ms": stats.summary(bare_ms), "bare_samples": bare_ms,
            "bare_cpu_ms": stats.summary(bare_cpu),
            "start_ms": stats.summary(start), "start_samples": start,
            "start_not_succeeded": sbad, "start_unmatched": len(stamps) - len(start),
            "post_ms": stats.summary(post),
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
    """Rounds of (a.n / a.rounds jobs through the runner, the bare-bwrap ceiling
    with a.slots loops for a.ceiling_seconds), alternating which goes first."""
    bare = Bare()
    per = max(1, a.n // a.rounds)
    rounds = []
    for r in range(a.rounds):
        ceil = None
        if r % 2:
            ceil = bare.ask("ceiling %d %g" % (a.slots, a.ceiling_seconds))
        d = throughput_round(a, per)
        if not r % 2:
            ceil = bare.ask("ceiling %d %g" % (a.slots, a.ceiling_seconds))
        d["ceiling"] = ceil
        d["ratio"] = (d.get("completed_per_s") or 0) / ceil["per_s"] if ceil["per_s"] else None
        rounds.append(d)
    bare.close()
    out = dict(rounds[-1])
    for k in ("completed", "accepted"):
        out[k] = sum(x[k] for x in rounds)
    out["jobs"] = per * a.rounds
    out["complete"] = all(x["complete"] for x in rounds)
    states = {}
    for x in rounds:
        for k, v in x["states"].items():
            states[k] = states.get(k, 0) + v
    out["states"] = states
    refused = {}
    for x in rounds:
        for k, v in x["refused"].items():
            refused[k] = refused.get(k, 0) + v
    out["refused"] = refused
    out["rounds"] = rounds
    out["slots"] = a.slots
    out["completed_per_s"] = stats.median([x.get("completed_per_s") or 0 for x in rounds])
    out["ceiling_per_s"] = stats.median([x["ceiling"]["per_s"] for x in rounds])
    out["submit_per_s"] = stats.median([x["submit_per_s"] for x in rounds])
    return out


def throughput_round(a, n):
    key = check_uuid(a.key_id)
    seq0 = int(sql("SELECT COALESCE(MAX(seq), 0) FROM jobs")[0][0])
    t0 = time.monotonic()
    st = submit_all(n, a.threads)
    t_sub = time.monotonic()
    terminal = ",".join("'%s'" % s for s in sorted(TERMINAL))
    done = 0
    while time.monotonic() - t0 < a.timeout:
        done = int(sql("SELECT COUNT(*) FROM jobs WHERE key_id = '%s' AND seq > %d"
                       " AND state IN (%s)" % (key, seq0, terminal))[0][0])
        if done >= n:
            break
        time.sleep(0.2)
    t_done = time.monotonic()
    rows = sql("SELECT state, TIMESTAMPDIFF(MICROSECOND, created_at, started_at),"
               " TIMESTAMPDIFF(MICROSECOND, started_at, finished_at),"
               " UNIX_TIMESTAMP(created_at), UNIX_TIMESTAMP(finished_at)"
               " FROM jobs WHERE key_id = '%s' AND seq > %d" % (key, seq0))
    fin = [r for r in rows if r[0] in TERMINAL and r[1] != "NULL" and r[2] != "NULL"]
    states = {}
    for r in rows:
        states[r[0]] = states.get(r[0], 0) + 1
    out = {"jobs": n, "threads": a.threads, "accepted": st["accepted"],
           "refused": st["refused"], "states": states, "completed": len(fin),
           "complete": done >= n,
           "submit_seconds": t_sub - t0, "submit_per_s": n / (t_sub - t0),
           "client_seconds": t_done - t0}
    if fin:
        first = min(float(r[3]) for r in rows)
        last = max(float(r[4]) for r in fin)
        out["db_seconds"] = last - first
        out["completed_per_s"] = len(fin) / (last - first) if last > first else None
        out["queue_wait_ms"] = stats.summary([int(r[1]) / 1e3 for r in fin])
        out["queue_wait_samples"] = [int(r[1]) / 1e3 for r in fin]
        out["run_ms"] = stats.summary([int(r[2]) / 1e3 for r in fin])
    if not fin:
        raise Failure("no job of the throughput run finished (states %s)" % states)
    return out


# ---------------------------------------------------------------------------- cpu

CPUACCT = "/sys/fs/cgroup/cpuacct"


def cg_usage(path):
    with open(os.path.join(path, "cpuacct.usage")) as f:
        return int(f.read().strip())


def cmd_cpu(a):
    """Launch CPU cost: user+sys of everything the runner starts for a job, per job.
    The dispatcher is moved into a cpuacct cgroup of our own (its supervisors and
    their children before bwrap inherit it); bwrap and the command are charged to
    the runner's slot cgroups, whose parent (runner_cgroup_name) keeps their usage
    after they are removed. Per round: the idle rate of both over 1 s (the
    dispatcher's polling, which runs with or without jobs, is subtracted), then
    a.n /bin/true jobs submitted at once and run; then a.n bare bwrap launches and
    a.n posix_spawns of /bin/true (the command's own cost, subtracted from both)
    through bench-launch --serve; the two halves alternate which goes first."""
    if not os.path.isdir(CPUACCT):
        raise Failure("no cgroup v1 cpuacct hierarchy at %s" % CPUACCT)
    if not re.match(r"^[A-Za-z0-9_-]+$", a.slot_cgroup):
        raise Failure("bad cgroup name %r" % a.slot_cgroup)
    slots = os.path.join(CPUACCT, a.slot_cgroup)
    mine = os.path.join(CPUACCT, "sandbox-bench-cpu-%d" % os.getpid())
    os.mkdir(mine)
    bare = Bare()
    key = check_uuid(a.key_id)
    terminal = ",".join("'%s'" % x for x in sorted(TERMINAL))
    rounds = []
    try:
        with open(os.path.join(mine, "cgroup.procs"), "w") as f:
            f.write(str(a.runner_pid))

        def usage():
            return cg_usage(mine) + cg_usage(slots)

        def runner_half():
            u0, t0 = usage(), time.monotonic()
            time.sleep(1)
            idle = (usage() - u0) / (time.monotonic() - t0)
            seq0 = int(sql("SELECT COALESCE(MAX(seq), 0) FROM jobs")[0][0])
            u1, t1 = usage(), time.monotonic()
            submit_all(a.n, 4)
            while True:
                done = int(sql("SELECT COUNT(*) FROM jobs WHERE key_id = '%s' AND seq > %d"
                               " AND state IN (%s)" % (key, seq0, terminal))[0][0])
                if done >= a.n:
                    break
                if time.monotonic() - t1 > 300:
                    raise Failure("the cpu round's jobs did not finish")
                time.sleep(0.05)
            time.sleep(0.2)  # the last supervisors exit after their result commit
            du, dt = usage() - u1, time.monotonic() - t1
            return {"idle_ns_per_s": idle, "delta_ns": du, "seconds": dt,
                    "per_job_ns": (du - idle * dt) / a.n}

        def bare_half():
            b = sum(bare.ask("bare")["cpu_ns"] for _ in range(a.n))
            c = sum(bare.ask("spawn")["cpu_ns"] for _ in range(a.n))
            return {"bare_per_launch_ns": b / a.n, "command_ns": c / a.n}

        for r in range(a.rounds):
            if r % 2:
                d = bare_half()
                d.update(runner_half())
            else:
                d = runner_half()
                d.update(bare_half())
            d["runner_ms"] = (d["per_job_ns"] - d["command_ns"]) / 1e6
            d["bare_ms"] = (d["bare_per_launch_ns"] - d["command_ns"]) / 1e6
            d["ratio"] = d["runner_ms"] / d["bare_ms"] if d["bare_ms"] > 0 else None
            rounds.append(d)
    finally:
        bare.close()
        try:
            with open(os.path.join(CPUACCT, "cgroup.procs"), "w") as f:
                f.write(str(a.runner_pid))
        except OSError:
            pass
        for _ in range(50):
            try:
                os.rmdir(mine)
                break
            except OSError:
                time.sleep(0.1)
    return {"n": a.n, "rounds": rounds,
            "runner_ms": stats.median([x["runner_ms"] for x in rounds]),
            "bare_ms": stats.median([x["bare_ms"] for x in rounds]),
            "command_ms": stats.median([x["command_ns"] / 1e6 for x in rounds])}


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


def stack_procs(api, runner):
    """Every process of this stack, found by name: the ones whose command line names
    the stack's directory (API master, runner processes, mariadbd, nginx's master)
    and their children of the same name (API and nginx workers). pid, name, role,
    VmRSS kB."""
    var = env("SANDBOX_VAR")
    names = {"sandbox-api", "sandbox-runner", "mariadbd", "nginx"}
    st, own = {}, set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        x = proc_status(int(d))
        if not x or x.get("Name") not in names:
            continue
        st[int(d)] = x
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if var.encode() in f.read():
                    own.add(int(d))
        except OSError:
            pass
    out = []
    for pid, x in sorted(st.items()):
        ppid = int(x.get("PPid", "0"))
        if pid not in own and not (ppid in own and st.get(ppid, {}).get("Name") == x["Name"]):
            continue
        name = x["Name"]
        role = name
        if name == "sandbox-api":
            role = "api master" if pid == api else "api worker"
        elif name == "sandbox-runner":
            role = "runner dispatcher" if pid == runner else "runner child (supervisor)"
        elif name == "nginx":
            role = "nginx master" if pid in own else "nginx worker"
        out.append({"pid": pid, "name": name, "role": role, "kb": kb(x, "VmRSS")})
    return out


def cmd_rss(a):
    """VmRSS (kB) of the API master, each API worker, and the runner dispatcher."""
    run = os.path.join(env("SANDBOX_VAR"), "run")
    api = read_pid(os.path.join(run, "api.pid"))
    runner = read_pid(os.path.join(run, "runner.pid"))
    if api is None or proc_status(api) is None:
        raise Failure("the API master is not running")
    workers = {str(p): kb(proc_status(p), "VmRSS") for p in children(api, "sandbox-api")}
    return {"label": a.label, "procs": stack_procs(api, runner),
            "api_master_kb": kb(proc_status(api), "VmRSS"),
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
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--slots", type=int, required=True)
    p.add_argument("--ceiling-seconds", type=float, default=5)
    p = sub.add_parser("cpu")
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--key-id", required=True)
    p.add_argument("--runner-pid", type=int, required=True)
    p.add_argument("--slot-cgroup", required=True)
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
          "cpu": cmd_cpu,
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

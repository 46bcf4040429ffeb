#!/usr/bin/env python3
"""The benchmark's one table, from the raw results run.sh left in a directory.

    report.py RAW_DIR

Prints markdown on stdout. Every figure comes from samples taken in the same run;
a ratio's baseline is named beside it. A target missed is a MISS in the table and
nothing else: the exit status is 1 only when a measurement has no figure at all
(its step failed or left nothing to read), so `make bench-smoke` fails on broken
measurement code and never on a slow machine.
"""
import glob
import json
import os
import platform
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402

RAW = sys.argv[1] if len(sys.argv) > 1 else "var/bench/raw"
ROWS = []
MISSING = []


def load(name):
    p = os.path.join(RAW, name)
    try:
        with open(p) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return None if "error" in doc else doc


def load_jsonl(pattern):
    out = []
    for p in sorted(glob.glob(os.path.join(RAW, pattern))):
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    out.append(json.loads(line))
    return out


def step_error(step):
    try:
        with open(os.path.join(RAW, step + ".error")) as f:
            return f.read().strip().splitlines()[-1][:200]
    except (OSError, IndexError):
        return None


def ms(v, digits=2):
    return "-" if v is None else ("%.*f ms" % (digits, v))


def lat(s, keys=("p50", "p95", "p99")):
    if not s or not s.get("n"):
        return "-"
    return ", ".join("%s %s" % (k, ms(s[k])) for k in keys) + " (n=%d)" % s["n"]


def ratio(a, b):
    return None if a is None or not b else a / b


def fx(r):
    return "-" if r is None else "%.2fx" % r


def fci(r, ci):
    """A ratio with its 95% interval."""
    if r is None:
        return "-"
    return "%.2fx" % r + (" [CI95 %.2f-%.2f]" % tuple(ci) if ci else "")


def pct_ci(r, ci):
    if r is None:
        return "-"
    return "%.1f%%" % (100 * r) + (" [CI95 %.1f-%.1f]" % (100 * ci[0], 100 * ci[1])
                                   if ci else "") + " of ceiling"


def verdict(ok):
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def row(area, what, value, reference="", rat="", target="", result=""):
    ROWS.append((area, what, value, reference, rat, target, result))


def missing(area, what, step, target=""):
    why = step_error(step) or "no result (step %s did not run)" % step
    MISSING.append("%s / %s: %s" % (area, what, why))
    row(area, what, "not measured: " + why.replace("|", "/"), "", "", target, "n/a")


# ------------------------------------------------------------------------ launch

def launch():
    samples = load_jsonl("launch.jsonl")
    by = {v: [s for s in samples if s["variant"] == v] for v in ("spawn", "bwrap", "runner")}
    tot = {v: [s["total_ms"] for s in by[v] if s["ok"]] for v in by}
    fails = {v: sum(1 for s in by[v] if not s["ok"]) for v in by}
    if not all(tot.values()):
        missing("launch", "sandbox launch of /bin/true", "launch", "runner <= 1.15x bare bwrap")
        return
    su = {v: stats.summary(tot[v]) for v in tot}

    def fig(v):
        s = su[v]
        ci = s["p50_ci95"]
        c = " [CI95 %.2f-%.2f]" % tuple(ci) if ci else ""
        f = " (%d failed)" % fails[v] if fails[v] else ""
        return "median %s%s, p90 %s, p99 %s, n=%d%s" % (ms(s["p50"]), c, ms(s["p90"]),
                                                         ms(s["p99"]), s["n"], f)
    r = ratio(su["runner"]["p50"], su["bwrap"]["p50"])
    row("launch", "runner's full launch path (ws_create .. ws_destroy), /bin/true",
        fig("runner"), "bare bwrap median %s" % ms(su["bwrap"]["p50"]), fx(r),
        "<= 1.15x bare bwrap", verdict(r <= 1.15))
    row("launch", "bare bwrap --unshare-all --die-with-parent --new-session, same "
        "mounts, unprivileged uid", fig("bwrap"),
        "posix_spawn median %s" % ms(su["spawn"]["p50"]),
        fx(ratio(su["bwrap"]["p50"], su["spawn"]["p50"])))
    row("launch", "bare posix_spawn of /bin/true (root)", fig("spawn"))
    # Means add up to the mean total (medians of bimodal phases do not).
    ok = [s for s in by["runner"] if s["ok"]]
    mean_total = su["runner"]["mean"]
    for p in ok[0]["phases_ms"]:
        s = stats.summary([x["phases_ms"][p] for x in ok])
        row("launch phase", p, "mean %s, median %s, p90 %s, max %s" % (
            ms(s["mean"], 3), ms(s["p50"], 3), ms(s["p90"], 3), ms(s["max"], 3)),
            "%.0f%% of the runner's mean %s" % (100 * s["mean"] / mean_total, ms(mean_total)))
    row("launch phase", "runner - bare bwrap", "median %s, mean %s" % (
        ms(su["runner"]["p50"] - su["bwrap"]["p50"]), ms(mean_total - su["bwrap"]["mean"])))
    # CPU (user+sys of bench-launch and its reaped children) of each variant and phase
    cpu = {v: [x["cpu_ms"] for x in by[v] if x["ok"] and "cpu_ms" in x] for v in by}
    if cpu["runner"] and cpu["bwrap"]:
        r, ci = stats.ratio_ci95(cpu["runner"], cpu["bwrap"], 50)
        row("launch cpu", "user+sys CPU of the runner's launch path in-process (supervise_local: "
            "no supervisor exec, no DB), /bin/true included in both", "median %s (n=%d)" % (
                ms(stats.median(cpu["runner"])), len(cpu["runner"])),
            "bare bwrap median %s" % ms(stats.median(cpu["bwrap"])), fci(r, ci))
        if "phases_cpu_ms" in ok[0]:
            tops = sorted(((stats.summary([x["phases_cpu_ms"][p] for x in ok])["mean"], p)
                           for p in ok[0]["phases_cpu_ms"]), reverse=True)[:4]
            row("launch cpu", "largest phases by mean CPU", ", ".join(
                "%s %s" % (p, ms(m, 3)) for m, p in tops))


# --------------------------------------------------------------------------- e2e

def e2e():
    d = load("e2e.json")
    if d is None:
        missing("e2e", "submit + ?wait= until terminal, one job at a time", "e2e",
                "p50 <= 40 ms, p99 <= 120 ms")
        return
    s = d["latency_ms"]
    bad = sum(d["not_succeeded"].values())
    notes = ""
    if bad:
        notes += "; %d not succeeded %s" % (bad, d["not_succeeded"])
    if d.get("refused"):
        notes += "; submissions refused and retried (HTTP status: count) %s" % d["refused"]
    bs = d.get("bare_samples") or []
    bm = stats.median(bs)
    ref = "bare bwrap launch median %s [CI95 %s] (n=%d, interleaved)" % (
        ms(bm), "-".join("%.2f" % x for x in (stats.median_ci95(bs) or ())), len(bs))
    r50, c50 = stats.ratio_ci95(d.get("latency_samples") or [], bs, 50)
    row("e2e", "POST /v1/jobs then GET ?wait=30 until terminal, one at a time, one "
        "kept-alive TLS connection: p50", lat(s) + notes, ref, fci(r50, c50),
        "p50 <= 2.5x bare bwrap", verdict(None if r50 is None else r50 <= 2.5))
    r99 = ratio(s["p99"], bm)
    row("e2e", "... p99", ms(s["p99"]), "bare bwrap launch median %s" % ms(bm), fx(r99),
        "p99 <= 5x bare bwrap", verdict(None if r99 is None else r99 <= 5))
    st = d.get("start_samples") or []
    if not st:
        missing("job start", "claim -> the command exec'd", "e2e", "<= 0.7x bare bwrap")
    else:
        sst = stats.summary(st)
        rs, cs = stats.ratio_ci95(st, bs, 50)
        extra = ""
        if d.get("start_not_succeeded"):
            extra += "; not succeeded %s" % d["start_not_succeeded"]
        if d.get("start_unmatched"):
            extra += "; %d without a claimed_us line" % d["start_unmatched"]
        row("job start", "claim (dispatcher's claimed_us after store_claim) -> the job's "
            "command exec'd (build/bench-stamp's first act: CLOCK_REALTIME), median",
            "median %s [CI95 %s], p90 %s, p99 %s, n=%d%s" % (
                ms(sst["p50"]), "-".join("%.2f" % x for x in (sst["p50_ci95"] or ())),
                ms(sst["p90"]), ms(sst["p99"]), sst["n"], extra), ref, fci(rs, cs),
            "<= 0.7x bare bwrap", verdict(rs <= 0.7))
    row("e2e breakdown", "medians: POST round trip / created->started / started->finished "
        "/ rest (result seen by the long-poll + GET)",
        " / ".join(ms(d[k]["p50"]) for k in ("post_ms", "queued_ms", "run_ms", "rest_ms")))


# -------------------------------------------------------------------- throughput

def throughput():
    d = load("throughput.json")
    if d is None:
        missing("throughput", "trivial jobs completed per second", "throughput",
                ">= 100 jobs/s")
        return
    rate = d.get("completed_per_s")
    states = ", ".join("%s %d" % kv for kv in sorted(d["states"].items()))
    refused = ", ".join("HTTP %s: %d" % kv for kv in sorted(d["refused"].items())) or "none"
    slots = META.get("runner_slots", "?")
    rounds = d.get("rounds") or []
    rr = [x["ratio"] for x in rounds if x.get("ratio") is not None]
    r, ci = stats.pairs_ci95(rr)
    row("throughput", "%d trivial jobs from %d threads in %d rounds; completed per second "
        "(first created_at to last finished_at of a round, median of rounds), "
        "runner_slots=%s" % (d["jobs"], d["threads"], len(rounds), slots),
        "%.1f jobs/s (rounds %s; %d of %d finished%s; states: %s)" % (
            rate or 0, ", ".join("%.1f" % (x.get("completed_per_s") or 0) for x in rounds),
            d["completed"], d["jobs"], "" if d["complete"] else ", TIME BUDGET RAN OUT",
            states),
        "bare-bwrap ceiling (%s parallel loops, interleaved rounds) %.1f launches/s "
        "(rounds %s)" % (slots, d.get("ceiling_per_s") or 0, ", ".join(
            "%.1f" % x["ceiling"]["per_s"] for x in rounds)),
        pct_ci(r, ci), ">= 50% of the ceiling", verdict(None if r is None else r >= 0.5))
    row("throughput", "queue wait (started_at - created_at, MariaDB)", lat(d["queue_wait_ms"],
                                                                        ("p50", "p99")))
    row("throughput", "run time (finished_at - started_at)", lat(d["run_ms"], ("p50", "p99")))
    row("throughput", "submission rate while the runner works", "%.0f submissions/s; "
        "refused and retried: %s" % (d["submit_per_s"], refused))


# --------------------------------------------------------------------------- api

def wrk_runs(label):
    out = {}
    for p in sorted(glob.glob(os.path.join(RAW, "wrk-%s-c*-r*.json" % label))):
        with open(p) as f:
            d = json.load(f)
        if "error" in d:
            continue
        out.setdefault(d["concurrency"], []).append(d)
    return out


def wrk_fig(runs):
    okps = [r["ok_per_s"] for r in runs]
    p50 = stats.median([r["latency_ms"]["p50"] for r in runs])
    p99 = stats.median([r["latency_ms"]["p99"] for r in runs])
    non2 = sum(r["non_2xx"] for r in runs)
    sock = sum(r["socket_errors"] for r in runs)
    spread = " (rounds %s)" % ", ".join("%.0f" % x for x in okps) if len(okps) > 1 else ""
    return stats.median(okps), "%.0f 2xx/s%s; latency p50 %s p99 %s; non-2xx %d, socket " \
        "errors %d; %d x %.0f s" % (stats.median(okps), spread, ms(p50), ms(p99), non2, sock,
                                    len(runs), runs[0]["seconds"])


def api():
    get, static, post = wrk_runs("get"), wrk_runs("static"), wrk_runs("post")
    for c in META.get("concurrencies", sorted(set(get) | set(static))):
        tgt = ">= 40% of the ceiling" if c == 64 else ""
        if c not in get or c not in static:
            missing("api", "GET /v1/jobs/{id} and /_bench/static, c=%d (wrk)" % c, "api", tgt)
            continue
        g, s = wrk_fig(get[c]), wrk_fig(static[c])
        r = ratio(g[0], s[0])
        pr = [ratio(a["ok_per_s"], b["ok_per_s"]) for a, b in zip(get[c], static[c])]
        _, ci = stats.pairs_ci95([x for x in pr if x is not None])
        row("api", "GET /v1/jobs/{id} through nginx, c=%d" % c, g[1],
            "ceiling /_bench/static c=%d: %s" % (c, s[1]), pct_ci(r, ci), tgt,
            verdict(r >= 0.40) if c == 64 else "")
    if not post:
        missing("api", "POST /v1/jobs rate (wrk, runner stopped)", "post", ">= 2000/s")
        return
    pm = load("post-rows.json") or {}
    spost = wrk_runs("static-post")
    for c in sorted(post):
        v, text = wrk_fig(post[c])
        if pm:
            text += "; 2xx answers %d, rows in jobs %s (deleted afterwards: %s)" % (
                sum(r["requests"] - r["non_2xx"] for r in post[c]), pm.get("created"),
                pm.get("deleted"))
        if c in spost:
            sv, stext = wrk_fig(spost[c])
            pr = [ratio(a["ok_per_s"], b["ok_per_s"]) for a, b in zip(post[c], spost[c])]
            r = ratio(v, sv)
            _, ci = stats.pairs_ci95([x for x in pr if x is not None])
            ref = "ceiling /_bench/static c=%d (interleaved rounds): %s" % (c, stext)
        else:
            r, ci, ref = None, None, "no interleaved static run"
        row("api", "POST /v1/jobs {\"argv\":[\"/bin/true\"]} through nginx, c=%d, one key "
            "(max_queued 1000000), runner stopped" % c, text, ref, pct_ci(r, ci),
            ">= 7% of the ceiling" if c == 64 else "",
            verdict(None if r is None else r >= 0.07) if c == 64 else "")


# ------------------------------------------------------------------------- scale

def poll_runs(lab):
    """Latency samples of every poll round at one scale, and their non-200 counts."""
    xs, bad, any_run = [], {}, False
    for p in sorted(glob.glob(os.path.join(RAW, "poll-%s-r*.json" % lab))):
        with open(p) as f:
            d = json.load(f)
        if "error" in d:
            continue
        any_run = True
        xs += d["samples_ms"]
        for k, v in d["non_200"].items():
            bad[k] = bad.get(k, 0) + v
    return (xs, bad) if any_run else (None, None)


def scale():
    got = {}
    for lab in ("small", "large"):
        polls, bad = poll_runs(lab)
        claims = [s["claim_ms"] for s in load_jsonl("claim-%s-r*.jsonl" % lab) if s["ok"]]
        rows = load("rows-%s.json" % lab)
        name = "%s rows" % ("{:,}".format(rows["rows"]) if rows else "?")
        if rows and rows.get("tenants"):
            name += " over %d tenants" % rows["tenants"]
        got[lab] = (polls, claims)
        if polls is None:
            missing("scale", "poll latency at %s" % name, "scale-%s" % lab)
        else:
            row("scale", "poll GET /v1/jobs/{id} latency, sequential, %s" % name,
                lat(stats.summary(polls), ("p50", "p99")) + ("; non-200 %s" % bad if bad else ""))
        if not claims:
            missing("scale", "claim latency at %s" % name, "scale-%s" % lab)
        else:
            row("scale", "claim latency (store_claim: SELECT + UPDATE + event + COMMIT), %s"
                % name, lat(stats.summary(claims), ("p50", "p99")))
        got[lab] += (name,)
    # MariaDB's own work per operation: independent of the machine's load
    for what in ("poll", "claim"):
        h = {}
        for lab in ("small", "large"):
            docs = [d for d in (load(os.path.basename(p)) for p in sorted(glob.glob(
                os.path.join(RAW, "handlers-%s-%s-r*.json" % (what, lab))))) if d]
            if docs:
                h[lab] = {k: stats.median([d.get(k, 0) for d in docs]) for k in docs[0]}
        if len(h) < 2:
            continue

        def rows_read(x):
            return sum(v for k, v in x.items() if k.startswith("Handler_read"))
        a, b = h["large"], h["small"]
        rr = ratio(rows_read(a), rows_read(b))
        pr = ratio(a.get("Innodb_buffer_pool_read_requests"),
                   b.get("Innodb_buffer_pool_read_requests"))
        row("scale", "MariaDB work per %s%s: rows read (Handler_read_*) / buffer pool page "
            "requests, at %s vs %s" % (what, " (with bench-claim's untimed insert and finish)"
                                       if what == "claim" else "", got["large"][2],
                                       got["small"][2]),
            "%.1f / %.1f vs %.1f / %.1f" % (rows_read(a), a.get("Innodb_buffer_pool_read_requests", 0),
                                            rows_read(b), b.get("Innodb_buffer_pool_read_requests", 0)),
            "load-independent", "rows %s, pages %s" % (fx(rr), fx(pr)), "rows <= 1.5x",
            verdict(None if rr is None else rr <= 1.5))
    for big in ("large",):
        for i, what in ((0, "poll"), (1, "claim")):
            a, b = got[big][i], got["small"][i]
            r, ci = stats.ratio_ci95(a or [], b or [], 50)
            row("scale", "%s p50 at %s / at %s" % (what, got[big][2], got["small"][2]),
                fx(r), "%s p50 at %s: %s" % (what, got["small"][2], ms(stats.median(b or []))),
                fci(r, ci), "<= 1.5x", verdict(None if r is None else r <= 1.5))


# --------------------------------------------------------------------------- cpu

def cpu():
    d = load("cpu.json")
    if d is None:
        missing("launch cpu", "user+sys of what the runner starts per job", "cpu", "<= 1.3x")
        return
    rr = [x["ratio"] for x in d["rounds"] if x.get("ratio") is not None]
    r, ci = stats.pairs_ci95(rr)
    row("launch cpu", "user+sys CPU per /bin/true job of everything the runner starts "
        "(dispatcher share over its idle polling, supervisor, bwrap, helpers; cpuacct), "
        "the command's own (a posix_spawn of /bin/true: %.2f ms) taken off, %d jobs x %d "
        "rounds" % (d["command_ms"], d["n"], len(d["rounds"])),
        "%.2f ms per job (rounds %s)" % (d["runner_ms"], ", ".join(
            "%.2f" % x["runner_ms"] for x in d["rounds"])),
        "bare bwrap (same mounts, getrusage of the reaped children), interleaved: "
        "%.2f ms" % d["bare_ms"], fci(r, ci), "<= 1.3x bare bwrap",
        verdict(None if r is None else r <= 1.3))


# ------------------------------------------------------------------------ memory

def memory():
    points = ["start", "after-e2e", "after-throughput", "after-api", "after-post",
              "after-longpoll", "after-sessions", "end"]
    got = {k: load("rss-%s.json" % k) for k in points}
    if got["start"] is None or "procs" not in got["start"]:
        missing("memory", "VmRSS of the stack's long-lived processes", "rss")
        return
    by = {}
    for k in points:
        for p in (got[k] or {}).get("procs", []):
            by.setdefault((p["role"], p["pid"]), []).append((k, p["kb"]))
    roles = {}
    for (role, pid), obs in by.items():
        roles.setdefault(role, []).append(obs)
    # A process's growth runs from its first reading to its last (steps restart the
    # API and the runner: the stretch each pid lived is what counts); an API worker's
    # from its second, as a fresh fork faults in its libraries on first requests.
    for role in sorted(roles):
        lived = [o for o in roles[role] if len(o) >= (3 if role == "api worker" else 2)]
        if not lived:
            if role != "runner child (supervisor)":  # per-job supervisors
                row("memory", "%s VmRSS" % role, "no process of this role was read twice "
                    "(%d seen)" % len(roles[role]))
            continue
        first = [o[1 if role == "api worker" else 0] for o in lived]
        last = [o[-1] for o in lived]
        growth = [(b[1] - a[1]) / 1024.0 for a, b in zip(first, last)]
        spans = sorted(set("%s -> %s" % (a[0], b[0]) for a, b in zip(first, last)))
        s0 = sum(a[1] for a in first) / 1024.0
        s1 = sum(b[1] for b in last) / 1024.0
        ours = role.startswith("api") or role.startswith("runner")
        row("memory", "%s VmRSS (%d process%s, %s)" % (
            role, len(lived), "es" if len(lived) > 1 else "", "; ".join(spans)),
            "%.1f MiB -> %.1f MiB (sum); largest growth of one %+.1f MiB" % (s0, s1, max(growth)),
            "", fx(ratio(s1, s0)),
            "no growth (<= +1 MiB per process)" if ours else "reported",
            verdict(max(growth) <= 1.0) if ours else "")


# ---------------------------------------------------------------------- header

def header():
    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return "?"
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    commit = sh(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse",
                 "--short", "HEAD"])
    dirty = sh(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "status",
                "--porcelain", "--untracked-files=no"])
    print("# sandbox benchmark (%s run)\n" % META.get("mode", "?"))
    print("%s; commit %s%s; %s; %d CPUs (%s); kernel %s; %s\n" % (
        META.get("date", "?"), commit, " (modified)" if dirty else "",
        platform.node(), os.cpu_count() or 0, cpu, platform.release(),
        META.get("settings", "")))


def longpoll():
    d = load("longpoll.json")
    n = d["n"] if d else 500
    what = "%d concurrent GET /v1/jobs/{id}?wait=30 on 50 queued jobs, the jobs end" % n
    if d is None:
        missing("longpoll", what, "longpoll", "all answered, p99 <= 200 ms")
        return
    lines = []
    try:
        with open(os.path.join(RAW, "lp-many.out")) as f:
            lines = [l.split() for l in f if l.strip()]
    except OSError:
        pass
    ok = [l for l in lines if len(l) >= 5 and l[1] == "200" and l[2] == "succeeded"]
    after = sorted(max(0, int(l[4]) - d["t_change_ms"]) for l in ok)

    def pct(p):
        return after[min(len(after) - 1, int(p * len(after)))] if after else None
    p50, p99 = pct(0.50), pct(0.99)
    row("longpoll", what + ": answered 200 with the final state",
        "%d of %d" % (len(ok), n), "", "", "all", verdict(len(ok) == n))
    row("longpoll", "answer latency from the jobs' finished_at (the UPDATE's NOW(3), just before COMMIT)",
        "p50 %s, p99 %s, max %s" % (ms(p50, 0), ms(p99, 0), ms(after[-1] if after else None, 0)),
        "", "", "p99 <= 200 ms", verdict(p99 is not None and p99 <= 200))
    q = ratio(d["qps_n"], d["qps_10"])
    row("longpoll", "MariaDB Questions/s with %d waiting (window %d s)" % (n, d["window_s"]),
        "%.1f/s" % d["qps_n"], "10 waiting: %.1f/s; idle: %.1f/s" % (d["qps_10"], d["qps_idle"]),
        fx(q), "<= 2x of 10 waiting", verdict(q is not None and q <= 2))


def sessions():
    def get(name):
        return load("sessions-%s.json" % name)
    bw = None
    samples = load_jsonl("launch.jsonl")
    t = [x["total_ms"] for x in samples if x["variant"] == "bwrap" and x["ok"]]
    if t:
        bw = stats.summary(t)["p50"]
    e2e_d = load("e2e.json")
    d = get("ready")
    if d is None:
        missing("sessions", "POST /v1/sessions -> GET ?wait until ready", "sessions",
                "p50 <= 50 ms")
    else:
        s = d["latency_ms"]
        row("sessions", "POST /v1/sessions -> GET ?wait until ready, one at a time (n=%d)" % d["n"],
            lat(s, ("p50", "p99")), "bare bwrap launch median %s" % ms(bw) if bw else "",
            fx(ratio(s["p50"], bw)) if bw else "", "p50 <= 50 ms", verdict(s["p50"] <= 50))
    d = get("roundtrip")
    if d is None:
        missing("sessions", "`true` in a ready session: POST -> exit seen", "sessions",
                "p50 <= 15 ms")
    else:
        s = d["latency_ms"]
        ref = e2e_d["latency_ms"]["p50"] if e2e_d else None
        row("sessions", "`true` in a ready session: POST command -> GET ?wait sees its exit "
            "(n=%d)" % d["n"], lat(s, ("p50", "p99")),
            "job e2e median %s" % ms(ref) if ref else "", fx(ratio(s["p50"], ref)) if ref else "",
            "p50 <= 15 ms", verdict(s["p50"] <= 15))
    d = get("outlat")
    if d is None:
        missing("sessions", "output latency: a write inside -> a tailing client", "sessions",
                "p50 <= 50 ms")
    else:
        s = d["latency_ms"]
        row("sessions", "output latency: a line written inside the sandbox -> the tailing "
            "client (output ?wait=5) has it (n=%d)" % d["n"], lat(s, ("p50", "p99")), "", "",
            "p50 <= 50 ms", verdict(s["p50"] <= 50))
    d = get("idle")
    if d is None:
        missing("sessions", "idle sessions' host memory", "sessions", "<= 4 MiB per session")
    else:
        per = d["pss_kb_per_session"] / 1024.0
        row("sessions", "%d idle sessions at once: PSS of their processes (supervisor, "
            "bwrap, agent) per session" % d["n"], "%.2f MiB" % per,
            "MemAvailable drop per session %.2f MiB; all ready in %s" % (
                d["memavailable_drop_kb_per_session"] / 1024.0, ms(d["all_ready_ms"], 0)),
            "", "<= 4 MiB", verdict(per <= 4))


def table():
    print("| area | measurement | figure | reference (same run) | ratio | target | result |")
    print("|---|---|---|---|---|---|---|")
    for r in ROWS:
        print("| " + " | ".join(str(x).replace("|", "/") for x in r) + " |")


META = {}


def main():
    global META
    try:
        with open(os.path.join(RAW, "meta.json")) as f:
            META = json.load(f)
    except (OSError, ValueError):
        META = {}
    for fn in (launch, e2e, throughput, cpu, api, longpoll, sessions, scale, memory):
        try:
            fn()
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
            MISSING.append("%s: unreadable results (%s: %s)" % (fn.__name__, type(e).__name__, e))
            row(fn.__name__, "results", "unreadable: %s" % e, "", "", "", "n/a")
    header()
    table()
    if MISSING:
        print("\nNot measured:\n")
        for m in MISSING:
            print("- " + m)
    print("\nTargets are reported, never enforced: a MISS does not fail the run.")
    return 1 if MISSING else 0


if __name__ == "__main__":
    sys.exit(main())

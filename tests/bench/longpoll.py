#!/usr/bin/env python3
"""Many concurrent long-polls from one process (tests/integration/waits.sh, the bench).

    longpoll.py --url https://127.0.0.1:PORT --token-file F --cacert C --ids FILE
                --n N --wait S --out FILE [--drop-after SEC]

N threads each send GET /v1/jobs/{id}?wait=S over their own TLS connection (ids from
FILE, one per line, round-robin). "ready" goes to stdout once every request is sent.
One line per request goes to --out when it ends:
    index http_status job_status sent_ms done_ms       (epoch milliseconds)
http_status 0: no answer (error text in place of job_status). --drop-after SEC: each
client closes its connection SEC seconds after sending, without reading (a client
that goes away); its line says "dropped". The token is read from a file, never argv.
"""
import argparse
import http.client
import json
import ssl
import sys
import threading
import time


def now_ms():
    return int(time.time() * 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--cacert", required=True)
    ap.add_argument("--ids", required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--wait", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--drop-after", type=float, default=0)
    a = ap.parse_args()
    with open(a.token_file) as f:
        token = f.read().strip()
    with open(a.ids) as f:
        ids = [line.strip() for line in f if line.strip()]
    host_port = a.url.split("://", 1)[1].rstrip("/")
    host, port = host_port.rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=a.cacert)
    lock = threading.Lock()
    sent = [0]
    lines = []
    threading.stack_size(256 * 1024)

    def mark_sent():
        with lock:
            sent[0] += 1
            if sent[0] == a.n:
                print("ready", flush=True)

    def one(i):
        sent_ms = now_ms()
        conn = None
        counted = False
        try:
            conn = http.client.HTTPSConnection(host, int(port), context=ctx,
                                               timeout=a.wait + 30)
            conn.request("GET", "/v1/jobs/%s?wait=%d" % (ids[i % len(ids)], a.wait),
                         headers={"Authorization": "Bearer " + token})
            sent_ms = now_ms()
            counted = True
            mark_sent()
            if a.drop_after > 0:
                time.sleep(a.drop_after)
                conn.sock.close()
                line = "%d 0 dropped %d %d" % (i, sent_ms, now_ms())
            else:
                resp = conn.getresponse()
                body = resp.read()
                try:
                    st = json.loads(body).get("status", "-")
                except ValueError:
                    st = "not-json"
                line = "%d %d %s %d %d" % (i, resp.status, st, sent_ms, now_ms())
        except Exception as e:  # one failed client is a line, not a crash
            if not counted:
                mark_sent()
            line = "%d 0 %s %d %d" % (i, type(e).__name__, sent_ms, now_ms())
        finally:
            if conn is not None:
                conn.close()
        with lock:
            lines.append(line)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(a.n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

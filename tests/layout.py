#!/usr/bin/env python3
"""The tree's shape, checked (docs/ARCHITECTURE.md, "Folders"; issue 21).

1. No product source file (app/, sandbox-runner/, cli/, common/, agent/) over 900 lines,
   and each opens with a comment (what it owns, or which header says so).
2. No include circle between files: the graph of `#include "x.h"` edges, where a.c and
   a.h are one module, has no cycle.
3. Includes between folders run one way: every edge between two folders is one that
   ALLOWED below names (the map's "includes" column), and the folder graph has no cycle.

Prints every violation and exits 1 if there is one; `--graph` prints the folder edges.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRODUCT = ["common", "agent", "cli", "app", "sandbox-runner"]
MAX_LINES = 900

# folder -> the folders it may include (besides itself). Keep in step with the
# "Folders" table of docs/ARCHITECTURE.md.
ALLOWED = {
    "common": set(),
    "agent": set(),
    "cli": {"common"},
    "app/http": {"common"},
    "app/jobs": {"common", "app/http"},
    "app/sessions": {"common", "app/http", "app/jobs"},
    "app/mcp": {"common", "app/http", "app/jobs", "app/sessions"},
    "app/e2b": {"common", "app/http", "app/jobs", "app/sessions"},
    "app/admin": {"common", "app/http"},
    "sandbox-runner/launch": {"common", "agent"},
    "sandbox-runner/job": {"common", "agent", "sandbox-runner/launch"},
    "sandbox-runner/session": {"common", "agent", "sandbox-runner/launch",
                               "sandbox-runner/job"},
    "sandbox-runner/dispatch": {"common", "agent", "sandbox-runner/launch",
                                "sandbox-runner/job", "sandbox-runner/session"},
    "sandbox-runner/deliver": {"common", "app/http", "app/jobs"},
}


def sources():
    for top in PRODUCT:
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def main():
    files = list(sources())
    problems = []
    by_name = {}
    for p in files:
        by_name.setdefault(os.path.basename(p), []).append(p)

    for p in files:
        with open(os.path.join(ROOT, p), encoding="utf-8", errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_LINES:
            problems.append(f"{p}: {n} lines (more than {MAX_LINES})")
        with open(os.path.join(ROOT, p), encoding="utf-8", errors="replace") as fh:
            first = next((line for line in fh if line.strip()), "")
        if not first.lstrip().startswith(("/*", "//")):
            problems.append(f"{p}: does not open with a comment saying what it owns")

    def module(p):
        return os.path.splitext(p)[0]

    def resolve(src, name):
        here = os.path.join(os.path.dirname(src), name)
        if here in by_name.get(name, []):
            return here
        cands = by_name.get(name, [])
        return cands[0] if len(cands) == 1 else None

    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    edges = {}
    for p in files:
        with open(os.path.join(ROOT, p), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for name in inc.findall(text):
            target = resolve(p, os.path.basename(name))
            if target is None:
                if name in by_name:
                    problems.append(f"{p}: #include \"{name}\" names {len(by_name[name])} files")
                continue  # a header outside the product (tests/unit/check.h ...)
            a, b = module(p), module(target)
            if a != b:
                edges.setdefault(a, set()).add(b)

    # file-level cycles (Tarjan's strongly connected components)
    index, low, stack, onstack, sccs = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        onstack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in onstack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            strong(v)
    for comp in sccs:
        problems.append("include circle: " + " <-> ".join(comp))

    def folder(m):
        return os.path.dirname(m)

    fedges = {}
    for a, ws in edges.items():
        for b in ws:
            fa, fb = folder(a), folder(b)
            if fa != fb:
                fedges.setdefault((fa, fb), []).append(f"{a} -> {b}")
    for (fa, fb), why in sorted(fedges.items()):
        if fa not in ALLOWED:
            problems.append(f"folder {fa} is not in the map (tests/layout.py ALLOWED)")
        elif fb not in ALLOWED[fa]:
            problems.append(f"{fa} includes {fb}, which the map does not allow: {why[0]}"
                            + (f" (+{len(why) - 1} more)" if len(why) > 1 else ""))
    for p in files:
        if folder(module(p)) not in ALLOWED:
            problems.append(f"{p}: folder {folder(p)} is not in the map")
            break

    if "--graph" in sys.argv:
        for (fa, fb), why in sorted(fedges.items()):
            print(f"{fa} -> {fb} ({len(why)})")
    for p in problems:
        print("layout: " + p)
    print(f"layout: {len(files)} files, {sum(len(w) for w in edges.values())} include edges, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

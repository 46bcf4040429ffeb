#!/usr/bin/env node
// Whether a Node.js version satisfies engines.node of this folder's package.json (the
// pinned client SDKs' own floor), so that tests/deps.sh can decide before `npm ci` whether
// the machine's node will do. The version is an argument, not process.version, so that
// the caller checks the node it will run (`node engines.cjs "$(node --version)"`).
//
// Usage: node engines.cjs VERSION   (e.g. v20.20.2)
// Exit 0: satisfied; 1: not (the range is printed); 2: a range or version this does not
// understand. Ranges: "A || B || ...", each part space-separated comparators
// (>=X, >X, <=X, <X, =X or X; X is MAJOR[.MINOR[.PATCH]]), all of which must hold.
'use strict';
const path = require('path');

const range = require(path.join(__dirname, 'package.json')).engines.node;

function parse(v) {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(v);
  if (!m) {
    console.error('engines.cjs: not a version: ' + JSON.stringify(v));
    process.exit(2);
  }
  return [+m[1], +(m[2] || 0), +(m[3] || 0)];
}

function cmp(a, b) {
  for (let i = 0; i < 3; i++) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return 0;
}

function holds(version, comparator) {
  const m = /^(>=|<=|>|<|=)?(.+)$/.exec(comparator);
  const c = cmp(version, parse(m[2]));
  switch (m[1]) {
    case '>=': return c >= 0;
    case '<=': return c <= 0;
    case '>': return c > 0;
    case '<': return c < 0;
    default: return c === 0;
  }
}

const version = parse(process.argv[2] || '');
const ok = range.split('||').some((part) =>
  part.trim().split(/\s+/).every((comparator) => holds(version, comparator)));
if (!ok) {
  console.error('node ' + process.argv[2] + ' does not satisfy "' + range + '"');
}
process.exit(ok ? 0 : 1);

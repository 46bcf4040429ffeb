// The check lines of the SDK scripts that tests/integration/e2b.sh runs (e2b_sdk_run):
// one "ok - NAME" or "not ok - NAME: DETAIL" line per check, then "all passed" when
// every check ran and passed (done() exits 0 only then).
let failed = 0
let ran = 0

export function check(name, cond, detail) {
  ran++
  if (cond) {
    console.log(`ok - ${name}`)
  } else {
    failed++
    console.log(`not ok - ${name}: ${detail === undefined ? '' : JSON.stringify(detail)}`)
  }
}

// Runs fn; an exception is one failed check named name.
export async function attempt(name, fn) {
  try {
    await fn()
  } catch (e) {
    check(name, false, `${e && e.name}: ${e && e.message}`)
  }
}

export function done() {
  if (failed === 0 && ran > 0) console.log('all passed')
  process.exit(failed === 0 && ran > 0 ? 0 : 1)
}

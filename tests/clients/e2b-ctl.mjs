// The real E2B SDK (e2b, pinned in package-lock.json) driving the control plane
// (app/e2b/e2bapi.c, e2blist.c): Sandbox.create with metadata, getInfo, setTimeout,
// Sandbox.list by metadata, Sandbox.connect (which must not kill or restart), kill ->
// true then false, connect/getInfo of a killed sandbox -> SandboxNotFoundError, a bad
// key -> AuthenticationError, pause -> false. Run by tests/integration/e2b/ctl.sh with
// E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY, NODE_EXTRA_CA_CERTS and E2B_TEST_RUN set;
// prints one "ok - " or "not ok - " line per check, then "all passed" when every check
// ran and passed.
import { Sandbox, SandboxNotFoundError, AuthenticationError } from 'e2b'
import { attempt, check, done } from './tap.mjs'

const run = process.env.E2B_TEST_RUN || String(Date.now())
async function expectThrow(name, cls, fn) {
  try {
    await fn()
    check(name, false, 'no error')
  } catch (e) {
    check(name, e instanceof cls, `${e && e.name}: ${e && e.message}`)
  }
}

let sbx
await attempt('Sandbox.create', async () => {
  sbx = await Sandbox.create({ metadata: { suite: 'e2b-ctl', run }, timeoutMs: 120_000 })
  check('Sandbox.create: an id', typeof sbx.sandboxId === 'string' && sbx.sandboxId.length === 36, sbx.sandboxId)
})

if (sbx) {
  const id = sbx.sandboxId
  let info
  await attempt('getInfo', async () => {
    info = await sbx.getInfo()
    check('getInfo: id, template, metadata, state', info.sandboxId === id && info.templateId === 'base' &&
      info.metadata.run === run && info.metadata.suite === 'e2b-ctl' && info.state === 'running',
    info)
    const left = info.endAt.getTime() - Date.now()
    check('getInfo: endAt is the timeout from now', left > 60_000 && left <= 121_000, left)
  })
  await attempt('setTimeout', async () => {
    await sbx.setTimeout(600_000)
    const i2 = await Sandbox.getInfo(id)
    const left = i2.endAt.getTime() - Date.now()
    check('setTimeout: endAt moved to 600 s from now', left > 500_000 && left <= 601_000, left)
  })
  await attempt('Sandbox.list by metadata', async () => {
    const items = await Sandbox.list({ query: { metadata: { run, suite: 'e2b-ctl' } } }).nextItems()
    check('Sandbox.list by metadata: exactly this sandbox', items.length === 1 && items[0].sandboxId === id &&
      items[0].metadata.run === run && items[0].state === 'running', items.map((s) => s.sandboxId))
    const none = await Sandbox.list({ query: { metadata: { run, suite: 'other' } } }).nextItems()
    check('Sandbox.list: a pair that does not match: none', none.length === 0, none.length)
  })
  await attempt('Sandbox.list paged', async () => {
    const extra = await Sandbox.create({ metadata: { suite: 'e2b-ctl', run }, timeoutMs: 60_000 })
    const p = Sandbox.list({ query: { metadata: { run } }, limit: 1 })
    const first = await p.nextItems()
    check('Sandbox.list limit 1: one item and a next page', first.length === 1 && p.hasNext, [first.length, p.hasNext])
    const second = await p.nextItems()
    check('Sandbox.list: the next page, then the end', second.length === 1 && !p.hasNext &&
      second[0].sandboxId !== first[0].sandboxId, [second.length, p.hasNext])
    check('kill the extra one', await extra.kill() === true)
  })
  await attempt('Sandbox.connect', async () => {
    const c = await Sandbox.connect(id)
    check('Sandbox.connect: the same sandbox', c.sandboxId === id, c.sandboxId)
    const i3 = await Sandbox.getInfo(id)
    check('Sandbox.connect: still running, not restarted', i3.state === 'running' &&
      i3.startedAt.getTime() === info.startedAt.getTime(), i3)
  })
  await attempt('pause', async () => {
    check('pause: false (not supported)', await sbx.pause() === false)
  })
  await attempt('kill', async () => {
    check('kill: true', await sbx.kill() === true)
    check('kill again: false', await Sandbox.kill(id) === false)
  })
  await expectThrow('Sandbox.connect on a killed sandbox: SandboxNotFoundError', SandboxNotFoundError,
    () => Sandbox.connect(id))
  await expectThrow('getInfo of a killed sandbox: SandboxNotFoundError', SandboxNotFoundError,
    () => Sandbox.getInfo(id))
}
await expectThrow('a wrong API key: AuthenticationError', AuthenticationError,
  () => Sandbox.create({ apiKey: 'sbx_' + '0'.repeat(64) }))

done()

// The real E2B SDK (e2b, pinned in package-lock.json) driving a sandbox's commands over
// envd's process service (app/e2b/eprocess.c): foreground and background commands,
// streamed output, a non-zero exit as CommandExitError with its output, connect(pid)
// to a running and to a finished command, kill, stdin, envs and cwd, list, a stream's
// timeout, large output. Run by tests/integration/e2b/process.sh with E2B_API_URL,
// E2B_SANDBOX_URL, E2B_API_KEY and NODE_EXTRA_CA_CERTS set; prints one "ok - " or
// "not ok - " line per check, then "all passed" when every check ran and passed.
import { Sandbox, CommandExitError, TimeoutError } from 'e2b'
import { attempt, check, done } from './tap.mjs'

const scale = Number(process.env.SANDBOX_TIME_SCALE || '1')
// Resolves when pred() holds, polling every 50 ms, or rejects after ms.
function until(pred, ms, what) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now()
    const tick = () => {
      if (pred()) return resolve()
      if (Date.now() - t0 > ms) return reject(new Error(`timed out waiting for ${what}`))
      setTimeout(tick, 50)
    }
    tick()
  })
}

// envs and allowInternetAccess at create (Sandbox.create's arguments the reference SDK
// passes): the envs reach every command; no network asked for, none given
const sbx = await Sandbox.create({
  timeoutMs: 300_000 * scale, envs: { SBX_CREATE_ENV: 'from create' }, allowInternetAccess: false
})
try {
  await attempt('foreground echo', async () => {
    const r = await sbx.commands.run('echo hi')
    check('foreground echo: stdout', r.stdout === 'hi\n', r.stdout)
    check('foreground echo: exit code 0', r.exitCode === 0, r.exitCode)
    check('foreground echo: no stderr', r.stderr === '', r.stderr)
  })

  await attempt('non-zero exit', async () => {
    try {
      await sbx.commands.run('echo out; echo err >&2; exit 3')
      check('non-zero exit throws CommandExitError', false, 'no exception')
    } catch (e) {
      check('non-zero exit throws CommandExitError', e instanceof CommandExitError, e && e.name)
      check('CommandExitError.exitCode', e.exitCode === 3, e.exitCode)
      check('CommandExitError.stdout', e.stdout === 'out\n', e.stdout)
      check('CommandExitError.stderr', e.stderr === 'err\n', e.stderr)
    }
  })

  await attempt('envs at create', async () => {
    const r = await sbx.commands.run('echo "$SBX_CREATE_ENV"')
    check('Sandbox.create envs reach a command', r.stdout === 'from create\n', r.stdout)
    const info = await sbx.getInfo()
    check('allowInternetAccess false at create: getInfo says so', info.allowInternetAccess === false,
      info.allowInternetAccess)
  })

  await attempt('envs and cwd', async () => {
    const r = await sbx.commands.run('echo "$FOO"; pwd; echo "$HOME"', {
      envs: { FOO: 'bar baz' }, cwd: '/home/user'
    })
    check('envs and cwd: output', r.stdout === 'bar baz\n/home/user\n/home/user\n', r.stdout)
  })

  await attempt('streamed output', async () => {
    const seen = []
    const h = await sbx.commands.run('echo first; sleep 60; echo never', {
      background: true, onStdout: (d) => seen.push(d), timeoutMs: 0
    })
    check('background: a pid', Number.isInteger(h.pid) && h.pid > 0, h.pid)
    // the first line arrives while the command still runs: the stream is live
    await until(() => seen.join('') === 'first\n', 20_000 * scale, 'the first line')
    check('streamed output: the first line before the end', seen.join('') === 'first\n', seen)
    const procs = await sbx.commands.list()
    const mine = procs.find((p) => p.pid === h.pid)
    check('list: the running command', mine !== undefined, procs)
    check('list: its cmd and args', mine && mine.cmd === '/bin/bash' && mine.args[2].startsWith('echo first'),
      mine)
    check('kill: true', (await h.kill()) === true)
    try {
      await h.wait()
      check('killed: wait throws', false, 'no exception')
    } catch (e) {
      check('killed: wait throws CommandExitError', e instanceof CommandExitError, e && e.name)
      check('killed: exit code -1, signal', e.exitCode === -1 && /signal: killed/.test(e.error || ''),
        { exitCode: e.exitCode, error: e.error })
    }
    check('kill an ended command: false', (await sbx.commands.kill(h.pid)) === false)
  })

  await attempt('background + connect', async () => {
    const h = await sbx.commands.run('sleep 1; echo done', { background: true })
    const c = await sbx.commands.connect(h.pid)
    const r = await c.wait()
    check('connect(pid): output after connecting', r.stdout === 'done\n', r.stdout)
    check('connect(pid): exit code 0', r.exitCode === 0, r.exitCode)
    const r0 = await h.wait()
    check('the first handle ends too', r0.stdout === 'done\n' && r0.exitCode === 0, r0)
    // a finished command: connect still gets its end (no output: envd does not replay)
    const again = await sbx.commands.connect(h.pid)
    const r2 = await again.wait()
    check('connect to a finished command: its end', r2.exitCode === 0 && r2.stdout === '', r2)
  })

  await attempt('stdin', async () => {
    const h = await sbx.commands.run('cat; echo end', { background: true, stdin: true })
    await sbx.commands.sendStdin(h.pid, 'abc\n')
    await sbx.commands.sendStdin(h.pid, 'def\n')
    await sbx.commands.closeStdin(h.pid)
    const r = await h.wait()
    check('stdin: what was sent, then EOF', r.stdout === 'abc\ndef\nend\n', r.stdout)
  })

  await attempt('large output', async () => {
    // past the REST API's default output_bytes (1 MiB): an E2B command may store as
    // much as the key allows (envd limits nothing)
    const r = await sbx.commands.run('head -c 2200000 /dev/zero | tr "\\0" x; echo', { timeoutMs: 0 })
    check('large output (2.2 MB): every byte', r.stdout.length === 2200001 && /^x+\n$/.test(r.stdout),
      r.stdout.length)
  })

  await attempt('stream timeout', async () => {
    try {
      await sbx.commands.run('sleep 30', { timeoutMs: 1500 })
      check('timeoutMs: TimeoutError', false, 'no exception')
    } catch (e) {
      check('timeoutMs: TimeoutError', e instanceof TimeoutError, `${e && e.name}: ${e && e.message}`)
    }
  })

  await attempt('unknown pid', async () => {
    check('kill an unknown pid: false', (await sbx.commands.kill(999999)) === false)
    try {
      await sbx.commands.connect(999999)
      check('connect to an unknown pid throws', false, 'no exception')
    } catch (e) {
      check('connect to an unknown pid throws NotFound', /not found/i.test(e.message), e.message)
    }
  })
} finally {
  await sbx.kill().catch(() => {})
}

done()

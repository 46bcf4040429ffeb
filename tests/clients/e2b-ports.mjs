// The real E2B SDK and a sandbox's port (docs/E2B.md "Ports"): getHost(port) is
// <port>-<sandbox id>.<E2B_DOMAIN>, and an HTTPS request to it reaches a python
// http.server inside the sandbox with the trafficAccessToken (and not without it).
// Run by tests/integration/e2b/ports.sh; "ok - " / "not ok - " lines, then "all passed".
import https from 'node:https'
import { Sandbox } from 'e2b'
import { attempt, check, done } from './tap.mjs'

const scale = Number(process.env.SANDBOX_TIME_SCALE || '1')
// GET https://host/path with headers; *.localhost names go to loopback (curl does this
// by itself; node asks the system resolver, which may not).
function get(host, path, headers) {
  const [name, port] = host.split(':')
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: name, port: Number(port || 443), path, headers, servername: name,
      lookup: (h, o, cb) => (o && o.all ? cb(null, [{ address: '127.0.0.1', family: 4 }])
        : cb(null, '127.0.0.1', 4))
    }, (res) => {
      let body = ''
      res.on('data', (d) => { body += d })
      res.on('end', () => resolve({ status: res.statusCode, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

const sbx = await Sandbox.create()
try {
  const host = sbx.getHost(8000)
  check('getHost(8000)', host === `8000-${sbx.sandboxId}.${process.env.E2B_DOMAIN}`, host)
  check('a traffic access token', typeof sbx.trafficAccessToken === 'string' &&
    /^[0-9a-f]{64}$/.test(sbx.trafficAccessToken), sbx.trafficAccessToken)
  await sbx.files.write('/home/user/www/hello.txt', 'hello from the sandbox\n')
  const server = await sbx.commands.run('cd /home/user/www && python3 -m http.server 8000 --bind 127.0.0.1',
    { background: true, timeoutMs: 0 })
  let r = { status: 0 }
  const t0 = Date.now()
  while (Date.now() - t0 < 20000 * scale) {
    r = await get(host, '/hello.txt', { 'e2b-traffic-access-token': sbx.trafficAccessToken })
    if (r.status === 200) break
    await new Promise((s) => setTimeout(s, 200))
  }
  check('a request to the port with the traffic token', r.status === 200 &&
    r.body === 'hello from the sandbox\n', r)
  const anon = await get(host, '/hello.txt', {})
  check('without it: 401', anon.status === 401, anon.status)
  await server.kill()
} catch (e) {
  check('ports', false, `${e && e.name}: ${e && e.message}`)
} finally {
  await sbx.kill().catch(() => {})
}
done()

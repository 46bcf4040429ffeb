// The real e2b SDK (tests/clients/node_modules/e2b, pinned) against this service's
// envd filesystem, run by tests/integration/e2b/fs.sh (e2b_sdk_run): each step's result
// is kept (a step that throws keeps {"error": class, "message"}), then each check is
// one "ok - " / "not ok - " line, and "all passed" closes a run without a failure.
//
// Environment: E2B_API_URL, E2B_SANDBOX_URL, E2B_DOMAIN, E2B_API_KEY (the stack's
// var/env), NODE_EXTRA_CA_CERTS (the stack's CA). The symlink and the fifo are planted
// through the session API (the sandbox id is a session id; the key is the bearer
// token), so that this check does not depend on the process streams.
import { Sandbox } from 'e2b';

const out = {};
const step = async (name, fn) => {
	try {
		out[name] = await fn();
	} catch (e) {
		out[name] = { error: e?.constructor?.name ?? 'Error', message: String(e?.message ?? e) };
	}
};
const entry = (e) => ({ name: e.name, type: e.type ?? null, path: e.path, symlinkTarget: e.symlinkTarget ?? null });

// A command through the session API, waited for: its status.
async function command(id, cmd) {
	const api = process.env.E2B_API_URL, auth = { Authorization: `Bearer ${process.env.E2B_API_KEY}` };
	let r = await fetch(`${api}/v1/sessions/${id}/commands`, {
		method: 'POST',
		headers: { ...auth, 'Content-Type': 'application/json' },
		body: JSON.stringify({ command: cmd }),
	});
	const c = await r.json();
	if (!r.ok) return `create ${r.status} ${JSON.stringify(c)}`;
	for (let i = 0; i < 10; i++) {
		r = await fetch(`${api}/v1/sessions/${id}/commands/${c.id}?wait=10`, { headers: auth });
		const s = await r.json();
		if (!['queued', 'running'].includes(s.status)) return s.status;
	}
	return 'still running';
}

const sbx = await Sandbox.create({ timeoutMs: 300_000 });
out.id = sbx.sandboxId;
const H = '/home/user';
await step('write_text', () => sbx.files.write(`${H}/dir/test.txt`, 'hello e2b\n'));
await step('read_text', () => sbx.files.read(`${H}/dir/test.txt`));
const all = Uint8Array.from({ length: 256 }, (_, i) => i);
await step('write_binary', () => sbx.files.write('bin/all.bin', all)); // relative: under the home
await step('read_binary', async () => {
	const b = await sbx.files.read(`${H}/bin/all.bin`, { format: 'bytes' });
	return { length: b.length, equal: b.length === 256 && b.every((v, i) => v === i) };
});
await step('write_octet', () => sbx.files.write(`${H}/oct/o.txt`, 'octet body', { useOctetStream: true }));
await step('read_octet', () => sbx.files.read(`${H}/oct/o.txt`));
await step('write_many', () =>
	sbx.files.write([
		{ path: `${H}/many/a.txt`, data: 'A' },
		{ path: `${H}/many/b.txt`, data: 'BB' },
	]));
await step('read_many', async () => [await sbx.files.read(`${H}/many/a.txt`), await sbx.files.read(`${H}/many/b.txt`)]);
await step('plant', () => command(sbx.sandboxId, 'ln -s /etc dir/etclink && mkfifo dir/fifo && mkdir -p dir/sub && echo s > dir/sub/s.txt'));
await step('list1', async () => (await sbx.files.list(`${H}/dir`)).map(entry));
await step('list_deep', async () => (await sbx.files.list(`${H}/dir`, { depth: 3 })).map(entry));
await step('exists', () => sbx.files.exists(`${H}/dir/test.txt`));
await step('exists_missing', () => sbx.files.exists(`${H}/dir/nope`));
await step('info_link', async () => entry(await sbx.files.getInfo(`${H}/dir/etclink`)));
await step('info_file', async () => {
	const i = await sbx.files.getInfo(`${H}/dir/test.txt`);
	return { size: i.size, mode: i.mode, permissions: i.permissions, owner: i.owner, group: i.group,
		 modified: i.modifiedTime instanceof Date && !isNaN(i.modifiedTime) };
});
await step('info_home', async () => entry(await sbx.files.getInfo(H)));
await step('mkdir', () => sbx.files.makeDir(`${H}/newdir/sub`));
await step('mkdir_again', () => sbx.files.makeDir(`${H}/newdir/sub`));
await step('rename', async () => entry(await sbx.files.rename(`${H}/dir/test.txt`, `${H}/newdir/renamed.txt`)));
await step('rename_old_gone', async () => !(await sbx.files.exists(`${H}/dir/test.txt`)));
await step('rename_read', () => sbx.files.read(`${H}/newdir/renamed.txt`));
await step('remove_tree', async () => {
	await sbx.files.remove(`${H}/dir`); // holds the link to /etc and the fifo
	return !(await sbx.files.exists(`${H}/dir`));
});
await step('remove_file', async () => {
	await sbx.files.remove(`${H}/newdir/renamed.txt`);
	return !(await sbx.files.exists(`${H}/newdir/renamed.txt`));
});
await step('read_missing', () => sbx.files.read(`${H}/nope.txt`));
await step('write_tmp', () => sbx.files.write('/tmp/x.txt', 'x'));
await step('list_tmp', () => sbx.files.list('/tmp'));
// watchDir (app/e2b/ewatch.c: polled listings): a create, a write, a remove
await step('watch', async () => {
	const seen = [];
	await sbx.files.makeDir(`${H}/w`);
	const h = await sbx.files.watchDir(`${H}/w`, (e) => seen.push(`${e.type} ${e.name}`), { timeoutMs: 0 });
	const saw = async (want) => {
		for (let i = 0; i < 150 && !seen.includes(want); i++) await new Promise((r) => setTimeout(r, 100));
		return seen.includes(want);
	};
	await sbx.files.write(`${H}/w/a.txt`, 'x');
	const created = await saw('create a.txt');
	await sbx.files.write(`${H}/w/a.txt`, 'xyz');
	const written = await saw('write a.txt');
	await sbx.files.remove(`${H}/w/a.txt`);
	const removed = await saw('remove a.txt');
	await h.stop();
	return { created, written, removed };
});
await step('watch_missing', () => sbx.files.watchDir(`${H}/no-such-dir`, () => {}));
await step('running', () => sbx.isRunning());
await step('kill', () => sbx.kill());
await step('running_after_kill', () => sbx.isRunning());

// ---- the checks
let failed = 0;
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const check = (name, got, want) => {
	const ok = typeof want === 'function' ? want(got) : same(got, want);
	if (!ok) failed++;
	console.log(`${ok ? 'ok' : 'not ok'} - ${name}${ok ? '' : `: got ${JSON.stringify(got)?.slice(0, 400)}${typeof want === 'function' ? '' : `, want ${JSON.stringify(want)}`}`}`);
};
const errName = (v) => v?.error ?? null;
check('write text: its WriteInfo', out.write_text, { name: 'test.txt', type: 'file', path: `${H}/dir/test.txt` });
check('read text back', out.read_text, 'hello e2b\n');
check('write binary (a relative path is under the home)', out.write_binary, { name: 'all.bin', type: 'file', path: `${H}/bin/all.bin` });
check('read binary back: all 256 byte values', out.read_binary, { length: 256, equal: true });
check('octet-stream upload', out.write_octet, { name: 'o.txt', type: 'file', path: `${H}/oct/o.txt` });
check('octet-stream read back', out.read_octet, 'octet body');
check('several files in one multipart upload', out.write_many, [
	{ name: 'a.txt', type: 'file', path: `${H}/many/a.txt` },
	{ name: 'b.txt', type: 'file', path: `${H}/many/b.txt` },
]);
check('several files read back', out.read_many, ['A', 'BB']);
check('a symlink and a fifo planted by a command', out.plant, 'succeeded');
check('list depth 1: the link as a symlink with its target, the fifo dropped (unspecified type)', out.list1, [
	{ name: 'etclink', type: 'symlink', path: `${H}/dir/etclink`, symlinkTarget: '/etc' },
	{ name: 'sub', type: 'dir', path: `${H}/dir/sub`, symlinkTarget: null },
	{ name: 'test.txt', type: 'file', path: `${H}/dir/test.txt`, symlinkTarget: null },
]);
check('list depth 3: the link never entered', (out.list_deep ?? []).map?.((e) => e.path), [
	`${H}/dir/etclink`, `${H}/dir/sub`, `${H}/dir/sub/s.txt`, `${H}/dir/test.txt`,
]);
check('exists', out.exists, true);
check('exists of a missing file: false', out.exists_missing, false);
check('getInfo of the link: symlink, its target', out.info_link, { name: 'etclink', type: 'symlink', path: `${H}/dir/etclink`, symlinkTarget: '/etc' });
check('getInfo of a file', out.info_file, { size: 10, mode: 0o644, permissions: '-rw-r--r--', owner: 'user', group: 'user', modified: true });
check('getInfo of the home', out.info_home, { name: 'user', type: 'dir', path: H, symlinkTarget: null });
check('makeDir: true', out.mkdir, true);
check('makeDir the second time: false', out.mkdir_again, false);
check('rename: the new entry', out.rename, { name: 'renamed.txt', type: 'file', path: `${H}/newdir/renamed.txt`, symlinkTarget: null });
check('rename: the old name is gone', out.rename_old_gone, true);
check('rename: the content moved', out.rename_read, 'hello e2b\n');
check('remove a tree holding a link to /etc and a fifo', out.remove_tree, true);
check('remove a file', out.remove_file, true);
check('read of a missing file: FileNotFoundError', errName(out.read_missing), 'FileNotFoundError');
check('write to /tmp: InvalidArgumentError naming /home/user', out.write_tmp,
	(v) => v?.error === 'InvalidArgumentError' && /\/home\/user/.test(v.message));
check('list /tmp: InvalidArgumentError', errName(out.list_tmp), 'InvalidArgumentError');
check('watchDir: create, write, remove events', out.watch, { created: true, written: true, removed: true });
check('watchDir of a missing directory: a NotFound error', errName(out.watch_missing),
	(v) => /NotFound/.test(v ?? ''));
check('isRunning', out.running, true);
check('kill', out.kill, true);
check('isRunning after kill: false', out.running_after_kill, false);
if (failed === 0) console.log('all passed');
process.exit(failed === 0 ? 0 : 1);

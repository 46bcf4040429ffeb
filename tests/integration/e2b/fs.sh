# shellcheck shell=bash
# Sourced by tests/integration/e2b.sh: envd's filesystem (app/e2b/efs.c, efsform.c;
# the supervisor's side sandbox-runner/session/sfentry.c), raw HTTP first, then the
# real SDK (tests/clients/e2b-fs.mjs).
#   1. uploads: multipart named by its file name (no ?path), multipart to ?path,
#      application/octet-stream; each answer exactly [{"name","type":"file","path"}];
#      parents made; GET /files gives the bytes back, with X-Access-Token alone (no
#      E2b-Sandbox-Id, as the Python SDK sends after connect) and by the sandbox's host
#      name (49983-<id>.<domain>)
#   2. refusals: a wrong token 401 ({"code":401} on /files, "unauthenticated" on RPC),
#      another sandbox's token 401, a missing file 404 {"code":404}, a path outside
#      /home/user (/tmp) 400 naming the limitation, gzip uploads 400
#   3. the Connect methods, raw: Stat (size an int64 string, mode, permissions, owner,
#      RFC 3339 time), ListDir with a link and a fifo planted by a command (through the
#      session API: FILE_TYPE_SYMLINK with its target, the fifo FILE_TYPE_UNSPECIFIED,
#      the link never entered), MakeDir twice (already_exists), Move, Remove, errors
#      not_found / invalid_argument, WatchDir only as a stream (the SDK: e2b-fs.mjs)
#   4. GET /health 204 while it runs, 502 once killed (the SDK's isRunning: false),
#      /files of a killed sandbox 502
#   5. the SDK: write/read text and all 256 byte values, octet-stream, several files,
#      list depth 1 and deep (symlink, fifo dropped), exists, getInfo, makeDir, rename,
#      remove, FileNotFoundError, /tmp refused, isRunning before and after kill

FS_DIR=$T_DIR/e2bfs
mkdir -p "$FS_DIR"
# envd METHOD PATH [curl args...]: FS_ST (status), the body in $FS_DIR/body; the
# sandbox named by E2b-Sandbox-Id and its token unless FS_AUTH (an array) says else.
envd() {
	local method=$1 path=$2
	shift 2
	FS_ST=$(curl -sS --cacert "$SANDBOX_CACERT" -o "$FS_DIR/body" -w '%{http_code}' -X "$method" \
		"${FS_AUTH[@]}" "$@" "$E2B_SANDBOX_URL$path" 2> "$FS_DIR/err") || FS_ST=000
}
rpc() { envd POST "/filesystem.Filesystem/$1" -H 'Content-Type: application/json' --data-binary "$2" "${@:3}"; }
fs_json() { jq -c "$1" "$FS_DIR/body" 2> /dev/null; }
fs_expect() { expect_eq "$1" "$2" "$FS_ST $(fs_json "$3")"; }

ctx "e2b fs: create"
e2b_create "$KEY"
FS_ID=$E2B_ID FS_TOK=$E2B_TOK
expect_true "a sandbox to work in" test -n "$FS_ID"
FS_AUTH=(-H "E2b-Sandbox-Id: $FS_ID" -H "X-Access-Token: $FS_TOK")
head -c 256 /dev/urandom > "$FS_DIR/rand.bin"
printf 'plain text\n' > "$FS_DIR/p.txt"

# ================================================== 1. uploads and downloads
ctx "e2b fs: multipart, named by its file name"
envd POST /files -F "file=@$FS_DIR/rand.bin;filename=/home/user/up/a.bin"
fs_expect "200, exactly one WriteInfo" '200 [{"name":"a.bin","path":"/home/user/up/a.bin","type":"file"}]' '[.[] | to_entries | sort_by(.key) | from_entries]'
ctx "e2b fs: multipart to ?path"
envd POST '/files?path=%2Fhome%2Fuser%2Fup%2Fnamed%20by%20path.txt&username=user' -F "file=@$FS_DIR/p.txt;filename=ignored.txt"
fs_expect "200" '200 [{"name":"named by path.txt","type":"file","path":"/home/user/up/named by path.txt"}]' .
ctx "e2b fs: octet-stream"
envd POST '/files?path=/home/user/up/deep/o.bin' -H 'Content-Type: application/octet-stream' --data-binary "@$FS_DIR/rand.bin"
fs_expect "200, parents made" '200 [{"name":"o.bin","type":"file","path":"/home/user/up/deep/o.bin"}]' .
ctx "e2b fs: download"
envd GET '/files?path=%2Fhome%2Fuser%2Fup%2Fa.bin'
expect_eq "200" 200 "$FS_ST"
expect_true "the bytes back" cmp -s "$FS_DIR/rand.bin" "$FS_DIR/body"
FS_AUTH=(-H "X-Access-Token: $FS_TOK")
envd GET '/files?path=/home/user/up/deep/o.bin'
expect_eq "X-Access-Token alone (no E2b-Sandbox-Id): 200" 200 "$FS_ST"
expect_true "the bytes back" cmp -s "$FS_DIR/rand.bin" "$FS_DIR/body"
FS_HOST=${E2B_DOMAIN%%:*} FS_PORT=${E2B_DOMAIN##*:}
FS_ST=$(curl -sS --cacert "$SANDBOX_CACERT" -o "$FS_DIR/body" -w '%{http_code}' \
	--resolve "49983-$FS_ID.$FS_HOST:$FS_PORT:127.0.0.1" -H "X-Access-Token: $FS_TOK" \
	"https://49983-$FS_ID.$E2B_DOMAIN/files?path=up/named%20by%20path.txt" 2> "$FS_DIR/err") || FS_ST=000
expect_eq "by the host name 49983-<id>.<domain>, a path relative to the home" "200 plain text" "$FS_ST $(cat "$FS_DIR/body")"

# ================================================== 2. refusals
ctx "e2b fs: refusals"
FS_BAD=${FS_TOK%?}$([ "${FS_TOK: -1}" = 0 ] && echo 1 || echo 0) # its last digit changed
FS_AUTH=(-H "E2b-Sandbox-Id: $FS_ID" -H "X-Access-Token: $FS_BAD")
envd GET '/files?path=/home/user/up/a.bin'
fs_expect "a wrong token: 401 {code:401}" '401 [401,"string"]' '[.code, (.message | type)]'
rpc Stat '{"path":"/home/user/up/a.bin"}'
fs_expect "a wrong token (RPC): 401 unauthenticated" '401 "unauthenticated"' .code
e2b_create "$KEY"
FS_ID2=$E2B_ID FS_TOK2=$E2B_TOK
FS_AUTH=(-H "E2b-Sandbox-Id: $FS_ID" -H "X-Access-Token: $FS_TOK2")
envd GET '/files?path=/home/user/up/a.bin'
fs_expect "another sandbox's token: 401" '401 401' .code
FS_AUTH=(-H "E2b-Sandbox-Id: $FS_ID" -H "X-Access-Token: $FS_TOK")
envd GET '/files?path=/home/user/nope.txt'
fs_expect "a missing file: 404 {code:404} (the SDK's FileNotFoundError)" '404 [404,"string"]' '[.code, (.message | type)]'
envd POST '/files?path=/tmp/x.txt' -H 'Content-Type: application/octet-stream' --data-binary x
fs_expect "writing /tmp: 400 naming the limitation" '400 true' '.message | test("outside /home/user.*only /home/user")'
envd POST '/files?path=/home/user/z.gz' -H 'Content-Type: application/octet-stream' -H 'Content-Encoding: gzip' --data-binary x
fs_expect "a gzip upload: 400" '400 400' .code
envd POST /files -H 'Content-Type: application/octet-stream' --data-binary x
fs_expect "octet-stream without ?path: 400" '400 400' .code

# ================================================== 3. the Connect methods
ctx "e2b fs: Stat"
rpc Stat '{"path":"/home/user/up/a.bin"}'
fs_expect "200 EntryInfo" '200 {"name":"a.bin","type":"FILE_TYPE_FILE","path":"/home/user/up/a.bin","size":"256","mode":420,"permissions":"-rw-r--r--","owner":"user","group":"user"}' '.entry | del(.modifiedTime)'
expect_true "modifiedTime is RFC 3339" grep -Eq '^"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z"$' <<< "$(fs_json .entry.modifiedTime)"
rpc Stat '{"path":"/home/user/nope"}'
fs_expect "missing: 404 not_found" '404 "not_found"' .code
rpc Stat '{"path":"/tmp"}'
fs_expect "/tmp: 400 invalid_argument" '400 "invalid_argument"' .code
rpc Stat '{"path":"/home/user/../../etc/passwd"}'
fs_expect "above the home: 400 invalid_argument" '400 "invalid_argument"' .code

ctx "e2b fs: ListDir with a planted link and fifo"
FS_CMD=$(curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
	--data '{"command":"ln -s /etc up/etclink && mkfifo up/fifo"}' "$SANDBOX_URL/v1/sessions/$FS_ID/commands" | jq -r '.id // empty')
FS_CST=$(curl -sS --cacert "$SANDBOX_CACERT" -H "Authorization: Bearer $KEY" \
	"$SANDBOX_URL/v1/sessions/$FS_ID/commands/$FS_CMD?wait=$(tscale 20 30)" | jq -r .status)
expect_eq "planted by a command (cwd /home/user)" succeeded "$FS_CST"
rpc ListDir '{"path":"/home/user/up","depth":1}'
fs_expect "depth 1: the link with its target, the fifo unspecified" \
	'200 [["a.bin","FILE_TYPE_FILE",null],["deep","FILE_TYPE_DIRECTORY",null],["etclink","FILE_TYPE_SYMLINK","/etc"],["fifo","FILE_TYPE_UNSPECIFIED",null],["named by path.txt","FILE_TYPE_FILE",null]]' \
	'[.entries[] | [.name, .type, .symlinkTarget]]'
rpc ListDir '{"path":"/home/user","depth":"10"}'
fs_expect "deep (depth as a string): the link never entered" '200 ["/home/user/up","/home/user/up/a.bin","/home/user/up/deep","/home/user/up/deep/o.bin","/home/user/up/etclink","/home/user/up/fifo","/home/user/up/named by path.txt"]' '[.entries[].path]'
rpc ListDir '{"path":"/home/user/up/etclink"}'
fs_expect "a link is not listed through: 400 failed_precondition" '400 "failed_precondition"' .code

ctx "e2b fs: MakeDir, Move, Remove"
rpc MakeDir '{"path":"/home/user/made/sub"}'
fs_expect "MakeDir: 200 entry" '200 ["/home/user/made/sub","FILE_TYPE_DIRECTORY",493,"drwxr-xr-x"]' '.entry | [.path, .type, .mode, .permissions]'
rpc MakeDir '{"path":"/home/user/made/sub"}'
fs_expect "again: 409 already_exists" '409 "already_exists"' .code
rpc MakeDir '{"path":"/home/user/up/etclink/x"}'
fs_expect "through a link: 400 failed_precondition" '400 "failed_precondition"' .code
rpc Move '{"source":"/home/user/up/a.bin","destination":"/home/user/made/b.bin"}'
fs_expect "Move: 200, the new entry" '200 ["b.bin","/home/user/made/b.bin","256"]' '.entry | [.name, .path, .size]'
rpc Move '{"source":"/home/user/up/etclink","destination":"/home/user/made/link2"}'
fs_expect "a link moves as a link" '200 ["FILE_TYPE_SYMLINK","/etc"]' '.entry | [.type, .symlinkTarget]'
rpc Remove '{"path":"/home/user/up"}'
fs_expect "Remove a tree holding a fifo: 200 {}" '200 {}' .
rpc Remove '{"path":"/home/user/made/link2"}'
fs_expect "Remove a link: 200 {}" '200 {}' .
expect_true "its target is intact" test -s /etc/passwd
rpc Stat '{"path":"/home/user/up"}'
fs_expect "gone" '404 "not_found"' .code
rpc Remove '{"path":"/home/user"}'
fs_expect "the home itself: 400 invalid_argument" '400 "invalid_argument"' .code
rpc WatchDir '{"path":"/home/user"}'
expect_eq "WatchDir as a unary call: 200 and the error in an end-of-stream envelope" \
	"200 invalid_argument" "$FS_ST $(tail -c +6 "$FS_DIR/body" | jq -r .error.code 2> /dev/null)"
envd POST /filesystem.Filesystem/Stat -H 'Content-Type: application/json' --data-binary 'not json'
fs_expect "not JSON: 400 invalid_argument" '400 "invalid_argument"' .code

# ================================================== 4. health
ctx "e2b fs: health"
envd GET /health
expect_eq "a running sandbox: 204" 204 "$FS_ST"
e2b_kill "$KEY" "$FS_ID"
e2b_kill "$KEY" "$FS_ID2"
envd GET /health
fs_expect "killed: 502 (the SDK's isRunning: false)" '502 502' .code
envd GET '/files?path=/home/user/made/b.bin'
fs_expect "/files of a killed sandbox: 502" '502 502' .code

# ================================================== 5. the SDK
e2b_sdk_run "$REPO/tests/clients/e2b-fs.mjs" "e2b fs sdk"

# SPDX-License-Identifier: Apache-2.0
# An agent's hello carries text from the system (hostname, kernel release,
# disk models, mountpoints, the workdir's path): each is escaped to the text
# policy (docs/security.md, "Text") so the hello always encodes. An agent
# whose hostname and workdir hold U+202E, a C1 control and a character cut
# short still answers `iofleet agents`, with those characters escaped.
source "$(dirname "$0")/lib/common.bash"
[ "$(id -u)" = 0 ] || skip "needs root (a UTS namespace for the hostname)"
unshare -u true 2>/dev/null || skip "cannot create a UTS namespace"

bad=$(printf 'a\342\200\256b\302\233c\342\200')
esc='a\u202eb\u009bc\xe2\x80'
wd=$T/work-$bad
mkdir -p "$wd"
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -u sh -c 'printf %s "$1" >/proc/sys/kernel/hostname && exec "$2" --listen "unix:$3" --name text --workdir "$4"' \
    sh "node-$bad" "$IOF_BIN/dynamo" "$T/text.sock" "$wd" 2>"$T/text.log" &
pid=$!
iof_on_exit "kill $pid 2>/dev/null"
for _ in $(seq 100); do [ -S "$T/text.sock" ] && break; sleep 0.05; done
[ -S "$T/text.sock" ] || { cat "$T/text.log" >&2; fail "the agent did not start"; }

expect_rc 0 "$IOFLEET" agents --agent "unix:$T/text.sock" --json --wait 5
jq -e --arg host "node-$esc" --arg wd "$T/work-$esc" '.[0].reachable
    and .[0].hello.inventory.hostname == $host
    and .[0].hello.inventory.workdir.path == $wd
    and .[0].hello.inventory.workdir.free > 0' "$T/out" >/dev/null ||
    fail "hello of an agent with bidi, C1 and cut text: $(cat "$T/out" "$T/err")"
ok "hostname and workdir path with U+202E, U+009B and a cut character: hello sent, escaped"

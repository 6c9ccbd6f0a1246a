# SPDX-License-Identifier: Apache-2.0
# iof_netfloor (tests/bench/net-floor), quickly, so the bench cannot rot: 50
# connections over loopback for 2 measured seconds after 1 s; the server must
# have read exactly 50 x 2 messages of 917 bytes in the window and the client
# 50 x 2 heartbeats of 24 bytes, every connection all it was sent over the
# whole run, with no failed write, and the closes came after the window;
# the same with the server reading through io_uring (--recv uring).
source "$(dirname "$0")/lib/common.bash"

NF=$IOF_BIN/iof_netfloor
[ -x "$NF" ] || skip "no iof_netfloor at $NF (build the tests)"
N=50 D=2 B=917 H=24

# val NAME: NAME=VALUE of the machine-readable line in $T/out.
val() {
    awk -v f="$1=" '$1 == "netfloor" {
        for (i = 2; i <= NF; i++) if (index($i, f) == 1) print substr($i, length(f) + 1)
    }' "$T/out"
}

expect_rc 0 "$NF" --agents $N --duration $D --warmup 1 --bytes $B --heartbeat $H
[ "$(grep -c '^netfloor ' "$T/out")" = 1 ] || fail "not one machine-readable line: $(cat "$T/out")"
for kv in "n=$N" "b=$B" "h=$H" "seconds=$D" "send=write" "msgs=$((N * D))" \
    "msgs_expected=$((N * D))" "server_bytes=$((N * D * B))" "hb=$((N * D))" \
    "hb_expected=$((N * D))" "write_errors=0" "complete=1" "ok=1"; do
    [ "$(val "${kv%%=*}")" = "${kv#*=}" ] || fail "expected $kv, got: $(cat "$T/out")"
done
# One read per message and per heartbeat: on loopback a 917-byte write arrives
# whole, and no peer's close (EOF) falls in the measured window.
[ "$(val server_reads)" = $((N * D)) ] && [ "$(val client_reads)" = $((N * D)) ] ||
    fail "reads in the window are not one per message and heartbeat: $(cat "$T/out")"
# The CPU figures are there and numbers (their values are the bench's business).
for f in server_cpu_pct client_cpu_pct server_us_per_agent_s; do
    [[ $(val $f) =~ ^[0-9]+\.[0-9]+$ ]] || fail "$f is not a number: $(cat "$T/out")"
done
ok "server read $((N * D)) messages of $B bytes, client $((N * D)) heartbeats"

# The same through io_uring's multishot receive: every message counted, one
# completion per message.
expect_rc 0 "$NF" --agents $N --duration $D --warmup 1 --bytes $B --heartbeat $H --recv uring
for kv in "recv=uring" "msgs=$((N * D))" "server_bytes=$((N * D * B))" "server_reads=$((N * D))" \
    "hb=$((N * D))" "write_errors=0" "complete=1" "ok=1"; do
    [ "$(val "${kv%%=*}")" = "${kv#*=}" ] || fail "--recv uring: expected $kv, got: $(cat "$T/out")"
done
ok "--recv uring: server read $((N * D)) messages, one completion each"

expect_rc 2 "$NF" --recv poll
expect_in "$T/err" "invalid option '--recv'"
expect_rc 2 "$NF" --agents 0
expect_in "$T/err" "invalid option '--agents'"
ok "a bad option is a usage error"

# SPDX-License-Identifier: Apache-2.0
# tests/windows/lib.sh - what the Wine end-to-end tests share (sourced by agent_e2e.sh,
# agent_stop.sh and service.sh, never run alone). The sourcing script defines fail and ok.

# win_init TAG: the Linux iofleet this test drives ($IOF_LINUX_BIN, default build/bin) and
# wine, or skip (77); Wine quiet and headless; T, the test's own folder (win-TAG.XXXXXX),
# holding the run history. Sets src, iofleet and T.
win_init() {
    src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    iofleet=${IOF_LINUX_BIN:-$src/build/bin}/iofleet
    if [[ ! -x $iofleet ]]; then
        echo "SKIP: no Linux iofleet at $iofleet (cmake --preset default && cmake --build build --target iofleet)" >&2
        exit 77
    fi
    command -v wine >/dev/null || { echo "SKIP: no wine" >&2; exit 77; }
    export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" DISPLAY=
    mkdir -p "${IOF_TEST_TMPDIR:-/tmp}"
    T=$(mktemp -d "${IOF_TEST_TMPDIR:-/tmp}/win-$1.XXXXXX")
    export XDG_DATA_HOME=$T/xdg-data
}

# win_expect_lost WHAT NODE ERR JSON IO: the manager ($mgr_pid, run with --json JSON and
# stderr to ERR) ends within 30 s, exits 1 and names agent NODE on 127.0.0.1:$port lost;
# JSON's first test keeps a partial NODE row equal to ALL, with reads and writes (IO
# "both") or some I/O (IO "any"). WHAT says what happened to the agent. Clears mgr_pid.
win_expect_lost() {
    local what=$1 node=$2 err=$3 json=$4 io=$5 rc=0
    for _ in $(seq 300); do kill -0 "$mgr_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$mgr_pid" 2>/dev/null && fail "the manager still runs 30 s after $what"
    wait "$mgr_pid" || rc=$?
    mgr_pid=''
    [[ $rc == 1 ]] || fail "the manager exited $rc after $what, expected 1"
    grep -qF "iofleet: agent $node (127.0.0.1:$port): lost: " "$err" ||
        fail "the manager did not name agent $node lost after $what"
    python3 - "$json" "$node" "$io" <<'PY' || fail "the partial results after $what (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["tests"][0]["results"]
node = [r for r in rows if r["row_type"] == "NODE"]
al = [r for r in rows if r["row_type"] == "ALL"][0]
assert len(node) == 1 and node[0]["node"] == sys.argv[2], node
n = node[0]
assert n["status"] == "partial", n["status"]
if sys.argv[3] == "both":
    assert n["read_ios"] > 0 and n["write_ios"] > 0, n
else:
    assert n["read_ios"] + n["write_ios"] > 0, n
assert al["read_ios"] == n["read_ios"] and al["write_ios"] == n["write_ios"], (al, n)
print("partial: %d reads, %d writes over %.3f s" % (n["read_ios"], n["write_ios"], n["duration_s"]))
PY
}

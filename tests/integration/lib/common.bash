# SPDX-License-Identifier: Apache-2.0
# Shared helpers for integration tests (sourced; not a test itself).
# Tests exit 0 on success, 1 on failure, 77 when skipped (with the reason).
set -euo pipefail

IOF_SRC=${IOF_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
IOF_BIN=${IOF_BIN:-$IOF_SRC/build/bin}
IOFLEET=$IOF_BIN/iofleet
mkdir -p "${IOF_TEST_TMPDIR:-/tmp}"
T=$(mktemp -d "${IOF_TEST_TMPDIR:-/tmp}/it.XXXXXX")
# iofleet run records every run in $XDG_DATA_HOME/iofleet/runs.db: tests keep
# theirs in their own temp dir, never in the user's home.
export XDG_DATA_HOME=$T/xdg-data

iof_cleanup_hooks=()
iof_on_exit() { iof_cleanup_hooks+=("$1"); }
iof_run_cleanup() {
    local h
    for h in "${iof_cleanup_hooks[@]}"; do eval "$h" || true; done
    rm -rf "$T"
}
trap iof_run_cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
ok() { echo "ok: $*"; }

# expect_rc WANT CMD... : runs CMD, stdout to $T/out, stderr to $T/err.
expect_rc() {
    local want=$1 rc=0
    shift
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    if [ "$rc" != "$want" ]; then
        echo "--- stdout"; cat "$T/out"; echo "--- stderr"; cat "$T/err"
        fail "'$*' exited $rc, expected $want"
    fi
}

# expect_in FILE TEXT : FILE contains TEXT literally.
expect_in() {
    grep -qF -- "$2" "$1" || { echo "--- $1:"; cat "$1"; fail "'$2' not found in $1"; }
}

# Column of the first row of type $2 in table output $1 (awk field number $3).
row_field() { awk -v r="$2" -v f="$3" '$1==r{print $f; exit}' "$1"; }

# Writes a plan to $T/$1 from a here-doc on stdin.
plan() { cat >"$T/$1"; }

# sql DB STATEMENT: runs one SQL statement on an SQLite file (python's sqlite3
# module) and prints the first column of each result row.
sql() {
    python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for r in c.execute(sys.argv[2]): print(r[0])
c.commit()' "$1" "$2"
}

# iof_shm NAME: sets shm to a new directory in /dev/shm (RAM: files there back
# fast loop devices), removed at exit.
iof_shm() {
    shm=$(mktemp -d "/dev/shm/iofleet-$1.XXXXXX")
    iof_on_exit "rm -rf '$shm'"
}

# iof_loop VAR FILE SIZE [LOSETUP ARGS...]: makes FILE SIZE bytes long and
# attaches it to a loop device, whose path goes in VAR; detached at exit.
# Skips the test when no loop device can be attached.
iof_loop() {
    local __var=$1 __file=$2 __dev
    truncate -s "$3" "$__file"
    shift 3
    __dev=$(losetup --find --show "$@" "$__file") || skip "cannot attach a loop device to $__file"
    iof_on_exit "losetup -d $__dev"
    printf -v "$__var" '%s' "$__dev"
}

# iof_run_live RUN-ARGS...: starts `iofleet run RUN-ARGS...` (which should hold
# --http) in the background, stdout to $T/run.out and stderr to $T/run.err;
# killed at exit. Sets RUN to its pid and url to its live view
# (http://127.0.0.1:PORT/), and fails the test when none is logged in 60 s.
iof_run_live() {
    "$IOFLEET" run "$@" >"$T/run.out" 2>"$T/run.err" &
    RUN=$!
    iof_on_exit "kill $RUN 2>/dev/null; wait $RUN 2>/dev/null"
    url=
    for _ in $(seq 1200); do
        url=$(sed -n 's|.*live view on \(http://127\.0\.0\.1:[0-9]*/\).*|\1|p' "$T/run.err")
        [ -n "$url" ] && break
        sleep 0.05
    done
    [ -n "$url" ] || fail "no live view URL: $(cat "$T/run.err")"
}

# iof_start_agent NAME [DYNAMO ARGS...]: starts dynamo --listen on an ephemeral
# loopback port with workdir $T/NAME-work, logging to $T/NAME.log; stopped at
# exit (waits 60 s at most for it to listen). Sets AGENT_EP to 127.0.0.1:PORT
# and AGENT_PID.
iof_start_agent() {
    local name=$1 log=$T/$1.log port=
    shift
    : >"$log"
    "$IOF_BIN/dynamo" --listen 127.0.0.1:0 --insecure --workdir "$T/$name-work" "$@" 2>"$log" &
    AGENT_PID=$!
    iof_on_exit "kill $AGENT_PID 2>/dev/null"
    for _ in $(seq 1200); do
        port=$(sed -n "s/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p" "$log")
        [ -n "$port" ] && break
        kill -0 "$AGENT_PID" 2>/dev/null || break
        sleep 0.05
    done
    [ -n "$port" ] || { cat "$log" >&2; fail "agent $name did not start"; }
    AGENT_EP=127.0.0.1:$port
}

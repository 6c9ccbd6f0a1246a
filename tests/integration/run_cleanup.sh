# SPDX-License-Identifier: Apache-2.0
# Test files that stay: `iofleet run --cleanup` (plan run.cleanup) makes the
# agent remove the test files this run created at the run's end - also when
# the run is interrupted - and keeps files it only reused; `iofleet clean`
# removes every test file an agent made in its workdir (its ledger) with
# their verify state, and nothing else: not a file it did not make, not a
# file that replaced one of its own, not a file outside the workdir.
source "$(dirname "$0")/lib/common.bash"

expect_rc 2 "$IOFLEET" clean
expect_in "$T/err" "iofleet clean: needs --agent or --agents-file"
expect_rc 2 "$IOFLEET" clean plan.json --agent unix:/nonexistent
expect_in "$T/err" "takes no plan, got 'plan.json'"
expect_rc 0 "$IOFLEET" clean --help
expect_in "$T/out" "usage: iofleet clean"
expect_rc 3 "$IOFLEET" clean --agent "unix:$T/none.sock" --wait 1
expect_in "$T/err" "iofleet clean: unix:$T/none.sock: cannot connect"
ok "usage; an unreachable agent is named (exit 3)"

start_agent() { # NAME: dynamo on unix:$T/NAME.sock, workdir $T/NAME-work
    "$IOF_BIN/dynamo" --listen "unix:$T/$1.sock" --workdir "$T/$1-work" 2>>"$T/$1.log" &
    AGENT_PID=$!
    iof_on_exit "kill $AGENT_PID 2>/dev/null"
    for _ in $(seq 200); do [ -S "$T/$1.sock" ] && break; sleep 0.05; done
    [ -S "$T/$1.sock" ] || { cat "$T/$1.log" >&2; fail "agent $1 did not start"; }
}

# The agent cleans up when the session ends, a moment after iofleet exits:
# wait_cleanups N waits for its Nth "cleanup: removed" log line.
wait_cleanups() {
    for _ in $(seq 200); do
        [ "$(grep -c "cleanup: removed" "$T/one.log")" -ge "$1" ] && return 0
        sleep 0.05
    done
    fail "the agent logged no cleanup #$1: $(cat "$T/one.log")"
}

plan p.json <<'EOF'
{"name": "cleanup",
 "run": {"ramp": "1s", "duration": "1s", "interval": "1s"},
 "specs": [{"name": "w", "lines": [{"size": "4k", "read": 50, "random": 100}]}],
 "workers": [{"nodes": ["*"], "count": 1, "engine": "sync", "queue_depth": 1,
              "verify": "crc32c",
              "targets": [{"path": "a.dat", "size": "1m"}, {"path": "sub/b.dat", "size": "1m"}]}]}
EOF

start_agent one
W=$T/one-work
mkdir -p "$W/sub"
echo "not a test file" >"$W/notes.txt"
echo "outside" >"$T/outside.dat"

# --cleanup: the files this run made and their verify state go at the end.
expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "unix:$T/one.sock" --cleanup --no-db --quiet
wait_cleanups 1
for f in a.dat sub/b.dat; do [ ! -e "$W/$f" ] || fail "--cleanup left $f: $(ls -AR "$W")"; done
! ls "$W"/.iofleet-verify-* >/dev/null 2>&1 || fail "--cleanup left verify state: $(ls -A "$W")"
[ -f "$W/notes.txt" ] || fail "--cleanup removed a file the agent did not make"
[ ! -e "$W/.iofleet-testfiles" ] || fail "--cleanup left its ledger: $(cat "$W/.iofleet-testfiles")"
expect_in "$T/one.log" "cleanup: removed 2 test files (2.0 MiB)"
ok "--cleanup removes the run's test files and their verify state, nothing else"

# The local agent (no --agent) too: no file is left in its workdir.
mkdir -p "$T/local-work/sub"
(cd "$T" && expect_rc 0 "$IOFLEET" run p.json --workdir local-work --cleanup --no-db --quiet)
for _ in $(seq 100); do [ -z "$(find "$T/local-work" -not -type d)" ] && break; sleep 0.1; done
[ -d "$T/local-work/sub" ] && [ -z "$(find "$T/local-work" -not -type d)" ] ||
    fail "the local agent's --cleanup left: $(ls -AR "$T/local-work")"
ok "--cleanup with the local agent empties its workdir"

# The plan key does the same, and a file only reused is kept.
expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "unix:$T/one.sock" --no-db --quiet
[ -f "$W/a.dat" ] && [ -f "$W/sub/b.dat" ] || fail "test files not made: $(ls -AR "$W")"
ls "$W"/.iofleet-verify-* >/dev/null 2>&1 || fail "no verify state: $(ls -A "$W")"
rm "$W/sub/b.dat"
expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "unix:$T/one.sock" --no-db --quiet \
    --set run.cleanup=true
wait_cleanups 2
[ -f "$W/a.dat" ] || fail "run.cleanup removed a.dat, which this run only reused"
[ ! -e "$W/sub/b.dat" ] || fail "run.cleanup left sub/b.dat, which this run made"
expect_rc 0 "$IOFLEET" validate "$T/p.json" --set run.cleanup=true
expect_in "$T/out" "cleanup (test files made by the run are removed at its end)"
expect_rc 2 "$IOFLEET" validate "$T/p.json" --set run.cleanup=1
expect_in "$T/err" "run.cleanup: must be true or false"
ok "run.cleanup: the files made by the run go, a reused one stays"

# An interrupted run cleans up too.
plan long.json <<'EOF'
{"name": "long",
 "run": {"ramp": "1s", "duration": "60s", "interval": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
 "workers": [{"nodes": ["*"], "count": 1, "engine": "sync", "queue_depth": 1,
              "targets": [{"path": "long.dat", "size": "1m"}]}]}
EOF
"$IOFLEET" run "$T/long.json" --agent "unix:$T/one.sock" --no-db --quiet --cleanup \
    >"$T/int.out" 2>"$T/int.err" &
mpid=$!
iof_on_exit "kill $mpid 2>/dev/null"
for _ in $(seq 200); do grep -q "long.dat" "$W/.iofleet-testfiles" 2>/dev/null && break; sleep 0.05; done
sleep 1.5
kill -INT $mpid
rc=0
wait $mpid || rc=$?
[ "$rc" = 130 ] || { cat "$T/int.err"; fail "interrupted run exited $rc, expected 130"; }
wait_cleanups 3
[ ! -e "$W/long.dat" ] || fail "an interrupted --cleanup run left long.dat"
ok "an interrupted --cleanup run removes its test file"

# iofleet clean: every file of the ledger, not one that replaced it, nothing else.
expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "unix:$T/one.sock" --no-db --quiet \
    --set 'workers[0].targets[2]={"path":"c.dat","size":"1m"}'
[ -f "$W/c.dat" ] || fail "c.dat not made"
rm "$W/c.dat"
echo "someone else's" >"$W/c.dat" # same name, another file
ln -s "$T/outside.dat" "$W/link.dat"
expect_rc 0 "$IOFLEET" clean --agent "unix:$T/one.sock"
expect_in "$T/out" "removed 2 test files, 2.0 MiB, from $W"
expect_in "$T/out" "  sub/b.dat"
expect_in "$T/out" "  a.dat"
[ ! -e "$W/a.dat" ] && [ ! -e "$W/sub/b.dat" ] || fail "clean left test files: $(ls -AR "$W")"
! ls "$W"/.iofleet-verify-* >/dev/null 2>&1 || fail "clean left verify state: $(ls -A "$W")"
[ ! -e "$W/.iofleet-testfiles" ] || fail "clean left the ledger: $(cat "$W/.iofleet-testfiles")"
[ "$(cat "$W/c.dat")" = "someone else's" ] || fail "clean removed a file that replaced its own"
[ -f "$W/notes.txt" ] && [ -d "$W/sub" ] && [ -L "$W/link.dat" ] && [ -f "$T/outside.dat" ] ||
    fail "clean removed what it did not make: $(ls -AR "$W")"
expect_rc 0 "$IOFLEET" clean --agent "unix:$T/one.sock"
expect_in "$T/out" "removed 0 test files, 0 B, from $W"
ok "iofleet clean: the ledger's files and verify state; not a replaced file, a link, a note"

# A forged ledger naming a file outside the workdir (by '..', and through a
# symbolic link), with its exact identity, leads nowhere.
ident() { stat -c '%d %i %s' "$1" | tr '\n' ' '; stat -c '%.9W' "$1" | tr -d .; }
{
    echo "$(ident "$T/outside.dat") ../outside.dat"
    echo "$(ident "$T/outside.dat") link.dat"
} >"$W/.iofleet-testfiles"
expect_rc 0 "$IOFLEET" clean --agent "unix:$T/one.sock"
expect_in "$T/out" "removed 0 test files"
[ -f "$T/outside.dat" ] && [ -L "$W/link.dat" ] || fail "clean removed a file outside the workdir"
# The same identity inside the workdir is removed: the lines above were well formed.
cp "$T/outside.dat" "$W/inside.dat"
echo "$(ident "$W/inside.dat") inside.dat" >"$W/.iofleet-testfiles"
expect_rc 0 "$IOFLEET" clean --agent "unix:$T/one.sock"
expect_in "$T/out" "removed 1 test file, 8 B"
ok "a ledger naming a file outside the workdir removes nothing"

# The workdir's own files are no target: a plan naming the ledger is
# refused (it would overwrite it and orphan the test files), the ledger
# stays. A test file given a second name since is left in place (exit 1,
# said in the agent's log) and stays in the ledger until that name goes.
expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "unix:$T/one.sock" --no-db --quiet
cp "$W/.iofleet-testfiles" "$T/ledger.before"
for bad in .iofleet-testfiles sub/.iofleet-verify-x.gen; do
    expect_rc 2 "$IOFLEET" run "$T/p.json" --agent "unix:$T/one.sock" --no-db --quiet \
        --set "workers[0].targets[0].path=$bad"
    expect_in "$T/err" "'$bad': names starting with '.iofleet-' are reserved for the agent's own files"
done
cmp -s "$W/.iofleet-testfiles" "$T/ledger.before" || fail "the ledger changed: $(cat "$W/.iofleet-testfiles")"
ln "$W/a.dat" "$W/second-name"
expect_rc 1 "$IOFLEET" clean --agent "unix:$T/one.sock"
expect_in "$T/out" "removed 1 test file, 1.0 MiB"
expect_in "$T/out" "1 of its test files could not be removed"
expect_in "$T/one.log" "test file 'a.dat': has 2 links; left in place"
if [ ! -f "$W/a.dat" ] || [ ! -f "$W/second-name" ]; then fail "clean removed a file with two names"; fi
grep -q " a.dat$" "$W/.iofleet-testfiles" || fail "a.dat left the ledger"
rm "$W/second-name"
expect_rc 0 "$IOFLEET" clean --agent "unix:$T/one.sock"
expect_in "$T/out" "removed 1 test file, 1.0 MiB"
[ ! -e "$W/a.dat" ] || fail "a.dat with one name again was not removed"
ok "the ledger's name is no target; a test file with a second name is left until it has one"

# An agent serving another manager's run is busy.
"$IOFLEET" run "$T/long.json" --agent "unix:$T/one.sock" --no-db --quiet >/dev/null 2>&1 &
mpid=$!
iof_on_exit "kill $mpid 2>/dev/null"
for _ in $(seq 200); do grep -q "long.dat" "$W/.iofleet-testfiles" 2>/dev/null && break; sleep 0.05; done
sleep 0.5
expect_rc 3 "$IOFLEET" clean --agent "unix:$T/one.sock"
expect_in "$T/err" "busy"
[ -f "$W/long.dat" ] || fail "a busy agent's test file was removed"
kill -INT $mpid
wait $mpid || true
ok "an agent busy with a run refuses to clean (exit 3)"

# SPDX-License-Identifier: Apache-2.0
# Bad input to `iofleet run`: each gets a clear message and the right exit code.
source "$(dirname "$0")/lib/common.bash"

expect_rc 2 "$IOFLEET"
expect_in "$T/err" "usage: iofleet COMMAND"
expect_rc 2 "$IOFLEET" frobnicate
expect_in "$T/err" "unknown command 'frobnicate'"
expect_rc 2 "$IOFLEET" pki
expect_in "$T/err" "iofleet pki: needs a command: init"
expect_rc 2 "$IOFLEET" run
expect_in "$T/err" "needs a PLAN.json (or - for stdin)"
expect_rc 2 "$IOFLEET" run "$T/nope.json"
expect_in "$T/err" "$T/nope.json"
expect_rc 2 "$IOFLEET" run "$IOF_SRC/configs/quickstart.json" --bogus
expect_in "$T/err" "unknown option '--bogus'"

plan bad.json <<'P'
{"name": "bad", "run": {"duration": "1s"},
 "specs": [{"name": "s", "lines": [{"size": "4k", "read": 170}]}],
 "workers": [{"targets": [{"path": "f.dat", "size": "1m"}]}]}
P
expect_rc 2 "$IOFLEET" run "$T/bad.json"
expect_in "$T/err" "bad.json: specs[0].lines[0].read: must be 0..100, got 170"
ok "bad plan refused"

plan missing.json <<P
{"name": "missing", "run": {"duration": "1s"},
 "specs": [{"name": "s", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "$T/no-such-device"}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/missing.json" --workdir "$T/w"
expect_in "$T/err" "target '$T/no-such-device': No such file or directory"
ok "missing target named"

plan node.json <<'P'
{"name": "node", "run": {"duration": "1s"},
 "specs": [{"name": "s", "lines": [{"size": "4k"}]}],
 "workers": [{"nodes": ["esx-07"], "engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}
P
expect_rc 2 "$IOFLEET" run "$T/node.json" --workdir "$T/w"
expect_in "$T/err" "node 'esx-07' does not exist"
ok "unknown node refused"

plan toobig.json <<'P'
{"name": "toobig", "run": {"duration": "1s"},
 "specs": [{"name": "s", "lines": [{"size": "1m"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "small.dat", "size": "64k"}]}]}
P
expect_rc 2 "$IOFLEET" run "$T/toobig.json" --workdir "$T/w"
expect_in "$T/err" "toobig.json: specs[0].lines[0].size: 1m does not fit workers[0].targets[0]"
ok "transfer larger than a test file refused by the plan check"

# An existing file's size is only known on the node: refused there, named.
head -c 65536 /dev/zero >"$T/small.bin"
plan toobig2.json <<P
{"name": "toobig2", "run": {"duration": "1s"},
 "specs": [{"name": "s", "lines": [{"size": "1m"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "$T/small.bin"}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/toobig2.json" --workdir "$T/w"
expect_in "$T/err" "target '$T/small.bin': spec 's' line 0: transfer size 1048576 exceeds the target range of 65536 bytes"
ok "transfer larger than an existing file refused on the node"

# SPDX-License-Identifier: Apache-2.0
# verify_mode "after" on a target that takes longer to read back than the
# manager waits for a result: the agent reports its read-back progress and
# the manager keeps waiting while it comes, so the node finishes with its
# result instead of being counted lost. The wait is cut to 1 s
# (IOF_RESULT_GRACE_MS) and the target is a 2 GiB loop device over a sparse
# file in /dev/shm, read back in 4 KiB blocks.
source "$(dirname "$0")/lib/common.bash"

[ "$(id -u)" = 0 ] || skip "needs root to attach loop devices"
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
shm=$(mktemp -d /dev/shm/iofleet-it.XXXXXX)
iof_on_exit "rm -rf '$shm'"
truncate -s 2G "$shm/v.img"
loop=$(losetup --find --show "$shm/v.img") || skip "cannot attach a loop device"
iof_on_exit "losetup -d $loop"

plan va.json <<P
{"name": "va", "run": {"ramp": "0s", "duration": "300ms", "interval": "100ms"},
 "specs": [{"name": "w", "lines": [{"size": "4k", "read": 0, "random": 100}]}],
 "workers": [{"engine": "sync", "queue_depth": 1, "targets": [{"path": "$loop"}],
              "verify": "xxh64", "verify_mode": "after"}]}
P
start=$(date +%s%N)
IOF_RESULT_GRACE_MS=1000 expect_rc 0 "$IOFLEET" run "$T/va.json" --workdir "$T/w" --json "$T/r.json"
took=$((($(date +%s%N) - start) / 1000000))
expect_in "$T/err" "local: test 1: verifying what it wrote:"
# 2 GiB less iofleet's marker sectors, left out of a verified device's range
# (the first 4 KiB transfer and the last 512-byte block): 2047.99 MiB.
expect_in "$T/err" "/ 2047 MiB read back"
python3 - "$T/r.json" <<'PY' || fail "the node did not finish with its result"
import json, sys
t = json.load(open(sys.argv[1]))["tests"][0]
assert t["lost"] == 0 and t["nodes"] == 1, (t["lost"], t["nodes"])
nodes = [r for r in t["results"] if r["row_type"] == "NODE"]
assert len(nodes) == 1 and nodes[0]["status"] == "ok", nodes
assert all(r["verify_errors"] == 0 for r in t["results"])
PY
ok "read back 2 GiB in ${took} ms with a 1 s result wait: progress reported, node kept, no errors"

# SPDX-License-Identifier: Apache-2.0
# iofleet export: a plan as an Iometer configuration file, read back by
# iofleet import to the same specs, workers and queue depth (round trip);
# what Iometer cannot express exits 2 naming the plan key and writes nothing.
source "$(dirname "$0")/lib/common.bash"
command -v jq >/dev/null || skip "jq not installed"
cd "$T"

expect_rc 0 "$IOFLEET" export --help
expect_in "$T/out" "usage: iofleet export PLAN.json"
expect_rc 0 "$IOFLEET" export "$IOF_SRC/configs/quickstart.json" -o q.icf
expect_in q.icf "Version 1.1.0"
expect_in q.icf "'ACCESS SPECIFICATIONS"
expect_rc 2 "$IOFLEET" export "$IOF_SRC/configs/quickstart.json" -o q.icf
expect_in "$T/err" "the file exists; give --force to replace it"
ok "export writes Version 1.1.0 sections; an existing file needs --force"

# Round trip: the target keeps its path, mapped back by its own name; the
# export counts 512-byte sectors, which the import is told.
path=$(jq -r '.workers[0].targets[0].path' "$IOF_SRC/configs/quickstart.json")
expect_rc 0 "$IOFLEET" import q.icf --map "$path=$path" --sector-size 512 -o back.json
jq -S '[.specs[] | {name, lines: [.lines[] | {size, read, random}]}]' back.json >back.specs
"$IOFLEET" validate back.json >back.txt || fail "the re-imported plan does not validate"
"$IOFLEET" validate "$IOF_SRC/configs/quickstart.json" >orig.txt
grep -E '^ *(specs|tests):' orig.txt >orig.head
grep -E '^ *(specs|tests):' back.txt >back.head
diff -u orig.head back.head >&2 || fail "the round trip changed the number of specs or tests"
q0=$(jq '.workers[0].queue_depth' "$IOF_SRC/configs/quickstart.json")
c0=$(jq '.workers[0].count // 1' "$IOF_SRC/configs/quickstart.json")
jq -e --argjson q "$q0" --argjson c "$c0" '.workers[0].queue_depth == $q and .workers[0].count == $c' \
    back.json >/dev/null || fail "the round trip changed the queue depth or worker count"
expect_rc 0 timeout 60 "$IOFLEET" run back.json --no-db --quiet --set workers[0].engine=null \
    --set run.duration=1s --set run.ramp=0s --set workers[0].targets[0].size=16m
ok "export -> import -> validate -> null run: same specs, tests, queue depth and workers"

# Iometer cannot express a rate.
jq '.workers[0].rate = {"iops": 100}' "$IOF_SRC/configs/quickstart.json" >rated.json
expect_rc 2 "$IOFLEET" export rated.json -o rated.icf
expect_in "$T/err" "error: workers[0].rate: Iometer has no offered-load rate"
[ ! -e rated.icf ] || fail "a refused export wrote its output"
ok "what Iometer cannot express exits 2 naming the plan key"

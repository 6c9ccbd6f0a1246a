# SPDX-License-Identifier: Apache-2.0
# An interval an agent could not keep (it fell behind: ring overrun) is sent
# with "lost": true, and the manager never takes it for an idle interval: a
# scripted agent (lib/fake_agent.py) loses interval 2 of 4.
#  - --timeseries: the node's row of interval 2 has lost=1 and empty figures
#    (not zeros); the ALL row of interval 2 says lost=1 and has no I/O of it;
#  - --json: the same interval of the node is "lost": true with null iops;
#  - the final rows hold the result's counts (the lost interval's I/O too),
#    and the other intervals add up to them minus the lost one.
source "$(dirname "$0")/lib/cluster.bash"

command -v python3 >/dev/null || skip "python3 runs the scripted agent"
plan p.json <<'P'
{"name": "lostiv", "run": {"ramp": "100ms", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k", "burst": 1, "delay": "1ms"}]}],
 "workers": [{"count": 1, "engine": "null", "targets": [{"path": "a", "size": "1m"}]}]}
P
cl_spawn fpid "$T/fake.out" "$T/fake.err" python3 "$(dirname "$0")/lib/fake_agent.py" fake-1 --lost 1
cl_wait_log "$T/fake.out" "listening " 10
fport=$(awk '{print $2}' "$T/fake.out")
expect_rc 0 "$IOFLEET" run "$T/p.json" --insecure --agent "127.0.0.1:$fport" --wait 10 --quiet \
    --timeseries "$T/ts.csv" --json "$T/r.json" --csv "$T/r.csv"

python3 - "$T" <<'PY' || { cat "$T/ts.csv"; cl_fail "a lost interval is not marked, or counted as zeros"; }
import csv, json, sys
T = sys.argv[1]
ts = list(csv.DictReader(open(T + "/ts.csv")))
node = {int(r["interval"]): r for r in ts if r["node"] == "fake-1"}
alls = {int(r["interval"]): r for r in ts if r["node"] == "ALL"}
assert sorted(node) == [1, 2, 3, 4], sorted(node)
lost = node[2]
assert lost["lost"] == "1", lost
for k in ("iops", "read_iops", "read_ios", "write_ios", "bytes_read", "avg_lat_ms", "errors"):
    assert lost[k] == "", (k, lost[k])
for k in (1, 3, 4):
    assert node[k]["lost"] == "0" and int(node[k]["read_ios"]) == 3, node[k]
assert alls[2]["lost"] == "1" and int(alls[2]["read_ios"]) == 0 and alls[2]["reported"] == "0", alls[2]
final = [r for r in csv.DictReader(open(T + "/r.csv")) if r["row_type"] == "ALL"][0]
assert int(final["read_ios"]) == 12, final["read_ios"]
assert sum(int(r["read_ios"]) for r in alls.values()) == 9  # all but the lost interval
doc = json.load(open(T + "/r.json"))
ivs = doc["tests"][0]["intervals"]
jn = [i for i in ivs if i["node"] == "fake-1" and i["interval"] == 2][0]
assert jn["lost"] is True and jn["iops"] is None and jn["read_ios"] is None, jn
ja = [i for i in ivs if i["row_type"] == "ALL" and i["interval"] == 2][0]
assert ja["lost"] == 1 and ja["read_ios"] == 0, ja
assert all(i["lost"] in (False, 0) for i in ivs if i["interval"] != 2)
print("ok: interval 2 marked lost in --timeseries and --json; final ALL 12 reads, intervals 9 + lost")
PY
ok "a lost interval is marked lost, never zeros"

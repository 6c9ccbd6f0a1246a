# SPDX-License-Identifier: Apache-2.0
# Per-node target maps: two loopback agents with different names run one
# worker group whose target path maps each to its own test file; the result
# JSON shows each NODE's TARGET rows on its own path, both with I/O, and the
# files exist only where they belong. A plan whose map has no path for one of
# the agents (and no "*") is refused before any I/O, naming the node; a key
# naming no agent is a warning with the closest name.
source "$(dirname "$0")/lib/cluster.bash"

cl_start_agents 2 tm

plan map.json <<'P'
{"name": "tmap", "run": {"ramp": "1s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k rand", "lines": [{"size": "4k", "read": 50, "random": 100}]}],
 "workers": [{"engine": "sync", "queue_depth": 1,
              "targets": [{"path": {"tm-1": "one.dat", "tm-2": "two.dat"}, "size": "2m"}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/map.json" "${CL_AGENT_ARGS[@]}" --wait 10 --rows worker,target \
    --json "$T/map-res.json"
cp "$T/out" "$T/map.out"
[ -f "${CL_WORKDIRS[0]}/one.dat" ] || cl_fail "tm-1 did not create one.dat"
[ -f "${CL_WORKDIRS[1]}/two.dat" ] || cl_fail "tm-2 did not create two.dat"
[ ! -e "${CL_WORKDIRS[0]}/two.dat" ] || cl_fail "tm-1 created tm-2's two.dat"
[ ! -e "${CL_WORKDIRS[1]}/one.dat" ] || cl_fail "tm-2 created tm-1's one.dat"
awk '$1=="TARGET" && $2=="tm-1/w0:one.dat" {f=1} END{exit !f}' "$T/map.out" ||
    cl_fail "no TARGET row tm-1/w0:one.dat in the table"
awk '$1=="TARGET" && $2=="tm-2/w0:two.dat" {f=1} END{exit !f}' "$T/map.out" ||
    cl_fail "no TARGET row tm-2/w0:two.dat in the table"
python3 - "$T/map-res.json" <<'PY' || cl_fail "result JSON: wrong per-node targets"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [r for t in doc["tests"] for r in t["results"]]
for node, path in {"tm-1": "one.dat", "tm-2": "two.dat"}.items():
    targets = [r for r in rows if r["row_type"] == "TARGET" and r["node"] == node]
    assert targets, f"no TARGET rows for {node}"
    for r in targets:
        assert r["target"] == path, f"{node}: target {r['target']}, expected {path}"
        assert r["read_ios"] + r["write_ios"] > 0, f"{node}: no I/O on {path}"
    nodes = [r for r in rows if r["row_type"] == "NODE" and r["node"] == node]
    assert nodes and nodes[0]["read_ios"] + nodes[0]["write_ios"] > 0, f"{node}: no I/O"
PY
ok "each node ran its own path (tm-1 one.dat, tm-2 two.dat), both with I/O"

# A node the map leaves out (no "*"): refused before anything runs.
plan missing.json <<'P'
{"name": "tmap-missing", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync",
              "targets": [{"path": {"tm-1": "miss1.dat", "tm-22": "miss2.dat"}, "size": "1m"}]}]}
P
expect_rc 2 "$IOFLEET" run "$T/missing.json" "${CL_AGENT_ARGS[@]}" --wait 10
expect_in "$T/err" "iofleet: workers[0].targets[0].path: no path for node 'tm-2' and no \"*\" entry"
expect_in "$T/err" "iofleet: warning: workers[0].targets[0].path: key 'tm-22' names no node the group runs on (did you mean 'tm-2'?)"
for wd in "${CL_WORKDIRS[@]}"; do
    if [ -e "$wd/miss1.dat" ] || [ -e "$wd/miss2.dat" ]; then cl_fail "a refused plan created $wd's files"; fi
done
if grep -q '^== test' "$T/out"; then cl_fail "a refused plan ran a test"; fi
ok "a node missing from the map is refused before any I/O, naming it"

# validate prints the map per node and warns of a key naming none of the
# group's nodes.
plan named.json <<'P'
{"name": "tmap-named", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"nodes": ["tm-1", "tm-2"], "engine": "sync",
              "targets": [{"path": {"tm-1": "/dev/sdb", "tm-3": "/dev/sdd", "*": "/dev/sdc"}}]}]}
P
expect_rc 0 "$IOFLEET" validate "$T/named.json"
expect_in "$T/out" "  target {tm-1 '/dev/sdb', tm-3 '/dev/sdd', * '/dev/sdc'} (existing size)"
expect_in "$T/err" "iofleet: warning: workers[0].targets[0].path: key 'tm-3' names no node the group runs on (did you mean 'tm-1'?)"
ok "validate prints the map and warns of a key naming no node of the group"
# validate --agent checks the agent's own path: tm-1's is a test file in its
# workdir, the "*" device (outside its --allow list) is the other nodes'.
plan own.json <<'P'
{"name": "tmap-own", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync",
              "targets": [{"path": {"tm-1": "own.dat", "*": "/dev/iofleet-no-such-disk"}, "size": "1m"}]}]}
P
expect_rc 0 "$IOFLEET" validate "$T/own.json" "${CL_AGENT_ARGS[@]:0:3}"
if grep -q 'REFUSED' "$T/out"; then cl_fail "validate --agent checked another node's path: $(grep REFUSED "$T/out")"; fi
expect_rc 1 "$IOFLEET" validate "$T/own.json" "${CL_AGENT_ARGS[@]:3:3}"
expect_in "$T/out" "/dev/iofleet-no-such-disk: REFUSED unless it is another name of an allowed device or file"
ok "validate --agent checks each agent's own path of a map"
cl_done

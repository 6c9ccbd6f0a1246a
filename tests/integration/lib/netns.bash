# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Multi-host helpers for integration tests and benchmarks (sourced; not a test).
#
# Builds a private "cluster" of network namespaces without touching the host's
# network: a hub namespace holds a Linux bridge (198.18.0.1/24, the manager's
# side); every node namespace gets a veth pair whose hub end is enslaved to the
# bridge and whose node end is eth0 (198.18.0.1X/24 for node X = 1, 2, ...).
# Every node also gets a loop device backed by a file in /dev/shm. Nothing is
# created in the root network namespace: deleting the namespaces removes the
# bridge and all veths with them.
#
#   netns_setup N [SIZE_MIB] [FILL]
#                         build the hub and N nodes; SIZE_MIB per loop file
#                         (default 256); FILL "zero" (default: allocated with
#                         fallocate, reads as zeros), "random" (written with
#                         /dev/urandom) or "sparse" (truncate only). Skips
#                         (exit 77, reason on stderr) when not root or when
#                         namespaces, veths or bridges are not available.
#   netns_exec K CMD...   run CMD in node K's namespace (K = 0: the hub)
#   netns_bg K LOG CMD... start CMD in the background in node K's namespace,
#                         stdout+stderr to LOG; its PID is remembered (killed
#                         at teardown) and printed
#   netns_forget PID      drop PID from that list once the caller has waited
#                         for it (so a reused PID is never signalled)
#   netns_wait_port K PORT [SECS]
#                         wait (bounded, default 10 s) until a TCP listener on
#                         PORT exists in node K's namespace; fails otherwise
#   netns_teardown        kill what netns_bg started (by PID), delete the
#                         namespaces (bridge and veths go with them), detach
#                         the loop devices, remove the /dev/shm files.
#                         Idempotent; registered with the common cleanup.
#
# After netns_setup: NETNS_ID (random suffix), NETNS_HUB (hub namespace name),
# NETNS_NS[K] (node K's namespace name), NETNS_ADDR[K] (node K's address; [0]
# is the manager's 198.18.0.1), NETNS_LOOP[K] (node K's loop device).
#
# Works with tests/integration/lib/common.bash (iof_on_exit, skip) when that
# is sourced first; on its own it defines a minimal skip and registers its
# teardown on EXIT itself (the caller may still call netns_teardown earlier).

NETNS_NET=198.18.0
NETNS_ID=''
NETNS_HUB=''
NETNS_SHM=''
NETNS_N=0
NETNS_NS=()
NETNS_ADDR=()
NETNS_LOOP=()
NETNS_PIDS=()

if ! declare -F skip >/dev/null; then
    skip() { echo "SKIP: $*" >&2; exit 77; }
fi

# Teardown on every way out: common.bash's EXIT hook list when it is there,
# otherwise our own EXIT trap. INT/TERM turn into an exit so EXIT runs at once
# (bash runs a trap only between foreground commands: bounded by timeouts).
if declare -F iof_on_exit >/dev/null; then
    iof_on_exit netns_teardown
else
    trap netns_teardown EXIT
fi
trap 'echo "interrupted" >&2; exit 130' INT
trap 'echo "terminated" >&2; exit 143' TERM

_netns_ns() { if (($1 == 0)); then printf '%s\n' "$NETNS_HUB"; else printf '%s\n' "${NETNS_NS[$1]}"; fi; }

netns_exec() {
    local ns
    ns=$(_netns_ns "$1")
    shift
    ip netns exec "$ns" "$@"
}

netns_bg() {
    local ns log=$2 pid
    ns=$(_netns_ns "$1")
    shift 2
    # `ip netns exec` execs CMD itself (no fork), so $! is CMD's PID.
    ip netns exec "$ns" "$@" </dev/null >"$log" 2>&1 &
    pid=$!
    NETNS_PIDS+=("$pid")
    printf '%s\n' "$pid"
}

# netns_forget PID: a process that has been waited for (no longer to kill).
netns_forget() {
    local p keep=()
    for p in "${NETNS_PIDS[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
    NETNS_PIDS=("${keep[@]}")
}

netns_wait_port() {
    local k=$1 port=$2 secs=${3:-10} i
    for ((i = 0; i < secs * 20; i++)); do
        if [[ -n $(netns_exec "$k" ss -Hltn "sport = :$port" 2>/dev/null) ]]; then
            return 0
        fi
        sleep 0.05
    done
    echo "netns: nothing listens on port $port in $(_netns_ns "$k") after ${secs} s" >&2
    return 1
}

# Bounded wait for a PID to go away.
_netns_wait_gone() {
    local pid=$1 i
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.05
    done
    return 1
}

netns_teardown() {
    local pid k ns dev i left
    # 1. Processes we started, by PID: TERM, a bounded wait, then KILL; only
    # while the PID still lives in one of our namespaces (never a reused PID).
    local mine=()
    for pid in "${NETNS_PIDS[@]}"; do
        [[ -n $NETNS_ID && $(ip netns identify "$pid" 2>/dev/null) == iofnet-$NETNS_ID-* ]] || continue
        kill -TERM "$pid" 2>/dev/null && mine+=("$pid")
    done
    for pid in "${mine[@]}"; do
        _netns_wait_gone "$pid" || kill -KILL "$pid" 2>/dev/null || true
    done
    for pid in "${NETNS_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    NETNS_PIDS=()
    # Anything still living in one of our namespaces was started by this run
    # (e.g. a server's forked children): end it by PID too.
    for ns in "${NETNS_NS[@]}" "$NETNS_HUB"; do
        [[ -n $ns ]] || continue
        [[ -e /run/netns/$ns ]] || continue
        left=$(ip netns pids "$ns" 2>/dev/null || true)
        for pid in $left; do kill -KILL "$pid" 2>/dev/null || true; done
        for pid in $left; do _netns_wait_gone "$pid" || true; done
    done
    # 2. Namespaces: deleting a namespace destroys the veths and the bridge in it.
    for ns in "${NETNS_NS[@]}" "$NETNS_HUB"; do
        [[ -n $ns ]] || continue
        if [[ -e /run/netns/$ns ]]; then
            ip netns del "$ns" 2>/dev/null || echo "netns: cannot delete namespace $ns" >&2
        fi
    done
    NETNS_NS=() NETNS_HUB=''
    # 3. Loop devices: the ones we recorded and any other attached to our files
    # (an interrupted losetup --find --show may have attached one unrecorded).
    if [[ -n $NETNS_SHM ]]; then
        for ((k = 1; k <= NETNS_N; k++)); do
            for dev in "${NETNS_LOOP[$k]:-}" $(losetup -n -O NAME -j "$NETNS_SHM/node$k.img" 2>/dev/null); do
                [[ -n $dev && -b $dev ]] || continue
                # Only a device that is (still) backed by our file.
                losetup -n -O BACK-FILE "$dev" 2>/dev/null | grep -qF -- "$NETNS_SHM/" || continue
                for ((i = 0; i < 20; i++)); do
                    losetup -d "$dev" 2>/dev/null && break
                    sleep 0.1
                done
            done
        done
        rm -rf -- "$NETNS_SHM"
        NETNS_SHM=''
    fi
    NETNS_LOOP=()
    NETNS_N=0
    return 0
}

netns_setup() {
    local n=$1 size=${2:-256} fill=${3:-zero} k ns id out cmd i
    if ! [[ $n =~ ^[1-9][0-9]{0,2}$ ]] || ((n > 200)); then
        echo "netns_setup: bad node count '$n' (1..200)" >&2
        return 2
    fi
    [[ $(id -u) == 0 ]] || skip "needs root for network namespaces and loop devices"
    for cmd in ip losetup ss; do
        command -v "$cmd" >/dev/null || skip "'$cmd' not installed (iproute2 / util-linux)"
    done
    # A unique suffix; never reuse an existing namespace.
    for ((k = 0; k < 20; k++)); do
        id=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
        ip netns list 2>/dev/null | grep -q -- "iofnet-$id-" || break
    done
    # shellcheck disable=SC2034 # for the caller
    NETNS_ID=$id
    NETNS_N=$n
    NETNS_HUB=iofnet-$id-hub
    out=$(ip netns add "$NETNS_HUB" 2>&1) || { NETNS_HUB=''; skip "ip netns add failed: $out"; }
    ip -n "$NETNS_HUB" link set lo up
    out=$(ip -n "$NETNS_HUB" link add br0 type bridge 2>&1) ||
        skip "cannot create a bridge in a namespace: $out"
    ip -n "$NETNS_HUB" addr add "$NETNS_NET.1/24" dev br0
    ip -n "$NETNS_HUB" link set br0 up
    NETNS_ADDR[0]=$NETNS_NET.1
    for ((k = 1; k <= n; k++)); do
        ns=iofnet-$id-$k
        out=$(ip netns add "$ns" 2>&1) || skip "ip netns add failed: $out"
        NETNS_NS[k]=$ns
        NETNS_ADDR[k]=$NETNS_NET.$((10 + k))
        ip -n "$ns" link set lo up
        # Both ends are born in our namespaces: the host never sees them.
        out=$(ip -n "$NETNS_HUB" link add "veth$k" type veth peer name eth0 netns "$ns" 2>&1) ||
            skip "cannot create a veth pair: $out"
        ip -n "$NETNS_HUB" link set "veth$k" master br0
        ip -n "$NETNS_HUB" link set "veth$k" up
        ip -n "$ns" addr add "${NETNS_ADDR[k]}/24" dev eth0
        ip -n "$ns" link set eth0 up
    done
    # Loop devices, one per node.
    NETNS_SHM=$(mktemp -d "/dev/shm/iofnet-$id.XXXXXX")
    for ((k = 1; k <= n; k++)); do
        case $fill in
        random) dd if=/dev/urandom of="$NETNS_SHM/node$k.img" bs=1M count="$size" status=none ;;
        sparse) truncate -s "${size}M" "$NETNS_SHM/node$k.img" ;;
        *) fallocate -l "${size}M" "$NETNS_SHM/node$k.img" 2>/dev/null ||
            truncate -s "${size}M" "$NETNS_SHM/node$k.img" ;;
        esac
        out=$(timeout 30 losetup --find --show -- "$NETNS_SHM/node$k.img" 2>&1) ||
            skip "cannot attach a loop device: $out"
        NETNS_LOOP[k]=$out
    done
    # Links up: bounded wait until every bridge port forwards and every node's
    # eth0 has carrier (no ping needed; STP is off, so this is immediate).
    for ((k = 1; k <= n; k++)); do
        for ((i = 0; i < 50; i++)); do
            ip -n "$NETNS_HUB" -d link show "veth$k" 2>/dev/null | grep -q 'state forwarding' &&
                ip -n "${NETNS_NS[k]}" link show eth0 2>/dev/null | grep -q 'LOWER_UP' && break
            sleep 0.1
        done
        ((i < 50)) || { echo "netns: link of node $k not up after 5 s" >&2; return 1; }
    done
    return 0
}

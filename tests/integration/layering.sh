# SPDX-License-Identifier: Apache-2.0
# Dependencies point one way: manager, dynamo -> proto -> common. No source
# includes a header of a layer above it or beside it (manager and dynamo
# never include each other), the iofleet executable holds no code of the
# agent (no dyn_ symbol), and it is not linked with libiof_dynamo.a. The
# unit tests follow the same layers (tests/unit/LAYER/).
source "$(dirname "$0")/lib/common.bash"
[ -d "$IOF_SRC/common" ] || skip "sources not found at $IOF_SRC"

# forbid DIR LAYER...: no .c/.h under DIR includes "LAYER/...".
forbid() {
    local dir=$1 layer hits
    shift
    for layer in "$@"; do
        hits=$(grep -rnE "^#[[:space:]]*include[[:space:]]+\"$layer/" "$IOF_SRC/$dir" \
            --include='*.c' --include='*.h' || true)
        [ -z "$hits" ] || fail "$dir/ includes $layer/: ${hits//$IOF_SRC\//}"
    done
}
forbid common proto dynamo manager
forbid proto dynamo manager
forbid dynamo manager
forbid manager dynamo
ok "includes point down only"

# The unit tests mirror the layers: tests/unit/LAYER/ holds the tests of that
# layer, which include nothing above it (each links that layer's library only).
forbid tests/unit/common proto dynamo manager
forbid tests/unit/proto dynamo manager
forbid tests/unit/dynamo manager
forbid tests/unit/manager dynamo
stray=$(find "$IOF_SRC/tests/unit" -maxdepth 1 -name '*.c' | sort)
[ -z "$stray" ] || fail "unit tests outside tests/unit/<layer>/: ${stray//$IOF_SRC\//}"
ok "unit tests in the folder of their layer, including nothing above it"

# Inside the manager, the run's parts point one way too: the run
# (manager/run*.c) -> the agents' connections (manager/agent_conn.*) -> the
# session state machine (manager/session.*). forbid_in FILE HEADER...: FILE
# does not include "HEADER".
forbid_in() {
    local file=$1 h
    shift
    [ -f "$IOF_SRC/$file" ] || fail "$file not found"
    for h in "$@"; do
        ! grep -qE "^#[[:space:]]*include[[:space:]]+\"$h\"" "$IOF_SRC/$file" ||
            fail "$file includes $h (the run's parts must point one way)"
    done
}
for f in manager/session.h manager/session.c; do
    forbid_in "$f" manager/agent_conn.h manager/run.h manager/run_int.h manager/local_agent.h
done
for f in manager/agent_conn.h manager/agent_conn.c; do
    forbid_in "$f" manager/run.h manager/run_int.h manager/local_agent.h
done
hits=$(grep -rlE '^[[:space:]]*struct mgr_run[[:space:]]*\{' "$IOF_SRC/manager" --include='*.h' |
    grep -v "^$IOF_SRC/manager/run_int\.h$" || true)
[ -z "$hits" ] ||
    fail "struct mgr_run is defined outside manager/run_int.h: the run owns it: ${hits//$IOF_SRC\//}"
hits=$(grep -rlE '^#[[:space:]]*include[[:space:]]+"manager/run_int\.h"' --include='*.c' \
    --include='*.h' "$IOF_SRC"/{common,proto,dynamo,manager,tests} |
    grep -vE "^$IOF_SRC/manager/run(_[a-z]+)?\.[ch]$|^$IOF_SRC/manager/run_int\.h$" || true)
[ -z "$hits" ] || fail "manager/run_int.h included outside manager/run*.c: ${hits//$IOF_SRC\//}"
ok "run -> agent connections -> session state machine, manager/run_int.h internal to the run"

# manager/ shows its parts: the sinks in manager/sinks/, the sources listed
# in manager/CMakeLists.txt (no glob), each one there.
lists=$IOF_SRC/manager/CMakeLists.txt
! grep -q 'GLOB' "$lists" || fail "manager/CMakeLists.txt globs its sources: list them"
while IFS= read -r f; do
    rel=${f#"$IOF_SRC/manager/"}
    [ "$rel" = main.c ] && continue
    grep -qE "^[[:space:]]*$rel\)?$" "$lists" || fail "manager/$rel is not listed in manager/CMakeLists.txt"
done < <(find "$IOF_SRC/manager" -name '*.c' | sort)
sinks=$(grep -rlE '^(static )?const struct mgr_sink_ops mgr_sink_' "$IOF_SRC/manager" --include='*.c' |
    grep -v "^$IOF_SRC/manager/sinks/" || true)
[ -z "$sinks" ] || fail "result sinks outside manager/sinks/: ${sinks//$IOF_SRC\//}"
ok "manager sources listed, sinks in manager/sinks/"

# proto/ lists its sources too; the message codecs' internal header stays
# inside proto/msg*.c.
lists=$IOF_SRC/proto/CMakeLists.txt
! grep -q 'GLOB' "$lists" || fail "proto/CMakeLists.txt globs its sources: list them"
for f in "$IOF_SRC"/proto/*.c; do
    grep -qE "^[[:space:]]*${f##*/}\)?$" "$lists" || fail "proto/${f##*/} is not listed in $lists"
done
hits=$(grep -rlE '^#[[:space:]]*include[[:space:]]+"proto/msg_int\.h"' --include='*.c' \
    --include='*.h' "$IOF_SRC"/{common,proto,dynamo,manager,tests} |
    grep -vE "^$IOF_SRC/proto/msg[a-z_]*\.[ch]$" || true)
[ -z "$hits" ] || fail "proto/msg_int.h included outside proto/msg*.c: ${hits//$IOF_SRC\//}"
ok "proto sources listed, proto/msg_int.h internal to the codecs"

# One JSON string escaper (common/jsonw.c): none of the manager's or the importers' own.
esc=$(grep -rlE '\\\\u%04x' "$IOF_SRC/manager" "$IOF_SRC/proto" --include='*.c' || true)
[ -z "$esc" ] || fail "JSON escaped outside common/jsonw.c: ${esc//$IOF_SRC\//}"
ok "JSON strings escaped by common/jsonw.c only"

# One HTML escaper (common/text.c): none of the live page's or the report's own.
esc=$(grep -rlE '"&lt;"' "$IOF_SRC/manager" "$IOF_SRC/proto" "$IOF_SRC/common" --include='*.c' |
    grep -v "^$IOF_SRC/common/text.c$" || true)
[ -z "$esc" ] || fail "HTML escaped outside common/text.c: ${esc//$IOF_SRC\//}"
ok "HTML text escaped by common/text.c only"

# The agent's platform layer (dynamo/os/os.h): headers only Linux has are
# included under dynamo/os/linux/ and by the engines built on Linux's own
# interfaces (libaio, io_uring), nowhere else in dynamo/; dynamo/os/ itself
# holds only the interface and one folder per OS.
linux_only='<(linux/[^>]*|blkid\.h|blkid/blkid\.h|sys/sysmacros\.h|sys/ioctl\.h|sys/statfs\.h|sys/random\.h|sys/syscall\.h|sys/utsname\.h|malloc\.h)>'
hits=$(grep -rnE "^#[[:space:]]*include[[:space:]]+$linux_only" "$IOF_SRC/dynamo" \
    --include='*.c' --include='*.h' |
    grep -vE "^$IOF_SRC/dynamo/(os/linux/|engines/(libaio|uring)\.c:)" || true)
[ -z "$hits" ] || fail "Linux-only headers outside dynamo/os/linux/: ${hits//$IOF_SRC\//}"
[ -r "$IOF_SRC/dynamo/os/os.h" ] || fail "dynamo/os/os.h is missing"
stray=$(find "$IOF_SRC/dynamo/os" -mindepth 1 -maxdepth 1 ! -name os.h ! -name linux ! -name windows)
[ -z "$stray" ] || fail "dynamo/os/ holds more than os.h and one folder per OS: ${stray//$IOF_SRC\//}"
hits=$(grep -rnE "^#[[:space:]]*include[[:space:]]+\"dynamo/os/(linux|windows)/" "$IOF_SRC" \
    --include='*.c' --include='*.h' || true)
[ -z "$hits" ] || fail "an OS folder's files are included directly: ${hits//$IOF_SRC\//}"
ok "Linux-only headers only in dynamo/os/linux/ and the libaio and io_uring engines"

[ -x "$IOFLEET" ] || skip "iofleet not built at $IOFLEET"
command -v nm >/dev/null || skip "nm (binutils) is not installed"
syms=$(nm --defined-only "$IOFLEET" | awk '$3 ~ /^dyn_/ {print $3}' | sort -u | tr '\n' ' ')
[ -z "$syms" ] || fail "iofleet holds agent code: $syms"
ok "iofleet holds no dyn_ symbol"

# The link line CMake wrote (Makefile generators); other generators skip this.
link=$IOF_BIN/../manager/CMakeFiles/iofleet.dir/link.txt
if [ -r "$link" ]; then
    ! grep -q 'libiof_dynamo' "$link" || fail "iofleet is linked with libiof_dynamo.a: $link"
    ok "iofleet is not linked with libiof_dynamo.a"
else
    echo "note: $link not found (not a Makefile build): link line not checked"
fi

# SPDX-License-Identifier: Apache-2.0
# Dependencies point one way: manager, dynamo -> proto -> common. No source
# includes a header of a layer above it or beside it (manager and dynamo
# never include each other), the iofleet executable holds no code of the
# agent (no dyn_ symbol), and it is not linked with libiof_dynamo.a.
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

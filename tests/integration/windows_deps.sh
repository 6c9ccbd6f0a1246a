#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# windows_deps: scripts/windows deps with a warm cache (docs/windows.md) builds nothing,
# needs no network (IOF_WIN_OFFLINE=1), leaves the machine's apt sources and lists as they
# were, and its folder holds the static x86-64 Windows libraries. Skips where the Windows
# toolchain or the cache has not been set up (scripts/windows deps does that).
source "$(dirname "$0")/lib/common.bash"

command -v x86_64-w64-mingw32-gcc >/dev/null || skip "no mingw-w64 (scripts/windows deps installs it)"
command -v x86_64-w64-mingw32-objdump >/dev/null || skip "no x86_64-w64-mingw32-objdump"
[ -x "$IOF_SRC/scripts/windows" ] || fail "scripts/windows is missing"
prefix=$("$IOF_SRC/scripts/windows" prefix 2>/dev/null) || skip "no Windows dependency cache (run scripts/windows deps)"

apt_state() {
    find /etc/apt /var/lib/apt/lists -maxdepth 2 -printf '%p %s %T@\n' 2>/dev/null | sort
}
apt_state >"$T/apt.before"
done_mtime=$(stat -c %Y "$prefix/.done")

export IOF_SKIP_DEPS=1 IOF_WIN_OFFLINE=1
start=$(date +%s)
expect_rc 0 "$IOF_SRC/scripts/windows" deps
took=$(($(date +%s) - start))
[ "$(cat "$T/out")" = "$prefix" ] || fail "deps printed '$(cat "$T/out")', not the cached $prefix"
expect_in "$T/err" "cache hit: $prefix"
grep -q 'building' "$T/err" && fail "a warm cache was rebuilt: $(cat "$T/err")"
[ "$(stat -c %Y "$prefix/.done")" = "$done_mtime" ] || fail "$prefix/.done was rewritten"
[ "$took" -lt 60 ] || fail "a warm deps step took ${took}s"
ok "a warm cache is reused, nothing built (${took}s)"

apt_state >"$T/apt.after"
cmp -s "$T/apt.before" "$T/apt.after" ||
    fail "the machine's apt state changed: $(diff "$T/apt.before" "$T/apt.after" | head -5)"
ok "the machine's apt sources and lists are untouched"

for lib in libuv_a.a libcjson.a libssl.a libcrypto.a libcmocka-static.a; do
    [ -f "$prefix/lib/$lib" ] || fail "$prefix/lib/$lib is missing"
    fmt=$(x86_64-w64-mingw32-objdump -f "$prefix/lib/$lib" 2>/dev/null | awk '/file format/ { f = $NF } END { print f }')
    [ "$fmt" = "pe-x86-64" ] || fail "$lib is '$fmt', not a static pe-x86-64 archive"
done
for h in uv.h cjson/cJSON.h openssl/ssl.h cmocka.h; do
    [ -f "$prefix/include/$h" ] || fail "$prefix/include/$h is missing"
done
grep -q '^openssl 3\.0\.' "$prefix/versions" || fail "versions: $(cat "$prefix/versions")"
ok "static pe-x86-64 libuv, cJSON, OpenSSL, cmocka and their headers, versions recorded"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/windows/package_zip.sh - `scripts/windows package` writes
# iofleet-VERSION-windows-x64.zip with exactly dynamo.exe, README-windows.txt and
# LICENSE.txt: the program a Windows executable that needs no DLL but Windows' own (one
# static file to copy into a VM), the texts with CRLF line ends. Registered by
# cmake/windows.cmake with the dynamo.exe it built:
#     package_zip.sh DYNAMO_EXE
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exe=${1:?usage: package_zip.sh DYNAMO_EXE}
mkdir -p "${IOF_TEST_TMPDIR:-/tmp}"
T=$(mktemp -d "${IOF_TEST_TMPDIR:-/tmp}/win-zip.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

version=$(sed -n 's/^project(iofleet VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
zip=$(IOF_WIN_EXE=$exe "$src/scripts/windows" package "$T/out") || fail "scripts/windows package failed"
[[ $zip == "$T/out/iofleet-$version-windows-x64.zip" ]] || fail "unexpected package path: $zip"
python3 - "$zip" "$T/x" <<'PY' || fail "package content (above)"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = sorted(z.namelist())
assert names == ["LICENSE.txt", "README-windows.txt", "dynamo.exe"], names
exe = z.read("dynamo.exe")
assert exe[:2] == b"MZ", "dynamo.exe is not a Windows executable"
for t in ("README-windows.txt", "LICENSE.txt"):
    data = z.read(t)
    assert data.count(b"\n") > 10 and data.count(b"\n") == data.count(b"\r\n"), t + ": not CRLF"
assert b"Apache" in z.read("LICENSE.txt")
z.extractall(sys.argv[2])
PY
# Only Windows' own DLLs: no libgcc, winpthread, libcrypto or libuv beside it.
dlls=$(x86_64-w64-mingw32-objdump -p "$T/x/dynamo.exe" | sed -n 's/^[[:space:]]*DLL Name: //p' |
    tr '[:upper:]' '[:lower:]' | sort -u)
[[ -n $dlls ]] || fail "no imports read from dynamo.exe"
while read -r dll; do
    case $dll in
    kernel32.dll | msvcrt.dll | advapi32.dll | crypt32.dll | iphlpapi.dll | user32.dll | \
        userenv.dll | ws2_32.dll | bcrypt.dll | psapi.dll | dbghelp.dll | ole32.dll | shell32.dll) ;;
    *) fail "dynamo.exe needs $dll, which Windows does not have" ;;
    esac
done <<<"$dlls"
echo "ok: $(basename "$zip"): dynamo.exe ($(wc -c <"$T/x/dynamo.exe") bytes, imports $(tr '\n' ' ' <<<"$dlls")), README-windows.txt, LICENSE.txt"

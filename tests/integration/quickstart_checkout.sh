# SPDX-License-Identifier: Apache-2.0
# scripts/quickstart leaves the checkout as it found it (git status clean):
# its test file, result and report go under build/ (ignored by git), its
# run history to $XDG_DATA_HOME, and a relative path among its extra
# arguments (`--csv r.csv`) is taken from the directory it is run in, not
# the checkout it changes to for the build.
# It runs on a copy of the files it reads (scripts/, configs/quickstart.json,
# .gitignore) committed to a git repository of its own, with this build's
# binaries as build/bin and a cmake that does nothing (the build is this
# one: the test must not build the tree ctest is running from).
source "$(dirname "$0")/lib/common.bash"
command -v git >/dev/null || skip "git not installed"

co=$T/checkout
mkdir -p "$co/scripts" "$co/configs" "$co/build/bin" "$T/stub" "$T/elsewhere"
cp "$IOF_SRC/scripts/quickstart" "$IOF_SRC/scripts/deps" "$co/scripts/"
cp "$IOF_SRC/configs/quickstart.json" "$co/configs/"
cp "$IOF_SRC/.gitignore" "$co/"
ln -s "$IOF_BIN/iofleet" "$co/build/bin/iofleet"
ln -s "$IOF_BIN/dynamo" "$co/build/bin/dynamo"
printf '#!/bin/sh\nexit 0\n' >"$T/stub/cmake"
chmod +x "$T/stub/cmake"
git -C "$co" init -q
git -C "$co" add -A
git -C "$co" -c user.name=t -c user.email=t@example.invalid commit -qm copy
[ -z "$(git -C "$co" status --porcelain)" ] || fail "the copy is not clean before the run"

short=(--set run.duration=1s --set run.ramp=0s --set run.interval=500ms)
(cd "$T/elsewhere" && PATH=$T/stub:$PATH IOF_SKIP_DEPS=1 expect_rc 0 "$co/scripts/quickstart" \
    "${short[@]}" --csv r.csv)
st=$(git -C "$co" status --porcelain --untracked-files=all)
[ -z "$st" ] || fail "scripts/quickstart left the checkout dirty: $st"
[ -f "$co/build/iofleet-work/iofleet-quickstart.dat" ] || fail "no test file under build/"
[ -s "$co/build/quickstart-report.html" ] || fail "no report under build/"
expect_in "$T/elsewhere/r.csv" row_type
expect_in "$T/err" "quickstart: report of this run: $co/build/quickstart-report.html"
ok "quickstart from another directory: the checkout stays clean, --csv r.csv lands where it was run"

(cd "$co" && PATH=$T/stub:$PATH IOF_SKIP_DEPS=1 expect_rc 0 scripts/quickstart "${short[@]}")
st=$(git -C "$co" status --porcelain --untracked-files=all)
[ -z "$st" ] || fail "scripts/quickstart run again from the checkout left it dirty: $st"
ok "quickstart run again from the checkout: still clean"

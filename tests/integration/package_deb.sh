# SPDX-License-Identifier: Apache-2.0
# The .deb round trip on this machine (label `package`): scripts/package builds
# the package (CPack, shlibdeps); lintian finds no error; the package's control
# data (dependencies from shlibdeps, conffile) and files are as promised;
# `dpkg -i` installs it; systemd-analyze verify accepts the installed unit;
# the installed dynamo, started from the unit's ExecStart with the installed
# /etc/default/dynamo, serves `iofleet run` of an installed plan over its unix
# socket (null engine); the installed iofleet also runs with its own local
# agent; the man pages and the completion are found; SIGTERM stops the agent
# with exit 0; `dpkg --purge` leaves no file behind (every path named after
# iofleet or dynamo under /etc, /usr, /var, /run and /opt, before and after).
# Skips, saying why, without root, a tool, or when iofleet is already installed
# here (it is never replaced).
# The trap purges the package and stops the agent whatever happens.
source "$(dirname "$0")/lib/common.bash"
[ "$(id -u)" -eq 0 ] || skip "needs root to install a package"
# One package round trip at a time on this machine, whichever checkout runs it.
exec 9>>/tmp/iofleet-package-test.lock
flock -w 900 9 || skip "another package test held /tmp/iofleet-package-test.lock for 15 min"
for t in dpkg dpkg-deb dpkg-shlibdeps cmake cpack lintian systemd-analyze; do
    command -v "$t" >/dev/null 2>&1 || skip "$t is not installed (scripts/deps package)"
done
if [ "$(dpkg-query -W -f='${Status}' iofleet 2>/dev/null || true)" != "" ] &&
    [ "$(dpkg-query -W -f='${Status}' iofleet 2>/dev/null)" != "unknown ok not-installed" ]; then
    skip "a package named iofleet is already known to dpkg here; not touching it"
fi
for f in /usr/bin/iofleet /usr/bin/dynamo /etc/default/dynamo /var/lib/iofleet /run/iofleet \
    /usr/lib/systemd/system/dynamo.service /lib/systemd/system/dynamo.service; do
    [ ! -e "$f" ] || skip "$f exists (not from a package); installing would replace it"
done

# dpkg_retry ARGS...: dpkg, waiting up to 2 min for another dpkg/apt to finish.
dpkg_retry() {
    local i
    for i in $(seq 60); do
        if dpkg "$@" >"$T/dpkg.log" 2>&1; then return 0; fi
        grep -q 'lock' "$T/dpkg.log" || { cat "$T/dpkg.log" >&2; return 1; }
        sleep 2
    done
    cat "$T/dpkg.log" >&2
    return 1
}
# Every path under /etc, /usr, /var, /run and /opt whose name says iofleet or
# dynamo: what the package, its maintainer scripts (deb-systemd-helper's state
# and symlinks, dpkg's own records) or the service could leave. Only such names,
# so that what other programs do on the machine meanwhile does not count.
snapshot() {
    find /etc /usr /var /run /opt -xdev \( -path /var/tmp -o -path /run/user \) -prune -o \
        \( -name '*iofleet*' -o -name '*dynamo*' \) -print 2>/dev/null | sort
}
cleanup_pkg() {
    [ -n "${DYN_PID:-}" ] && kill "$DYN_PID" 2>/dev/null
    if [ "$(dpkg-query -W -f='${Status}' iofleet 2>/dev/null || true)" != "" ]; then
        dpkg_retry --purge iofleet || true
    fi
    rm -rf /var/lib/iofleet /run/iofleet
}
iof_on_exit cleanup_pkg

# ---- build and inspect --------------------------------------------------------------
t0=$SECONDS
IOF_PKG_WINDOWS=0 "$IOF_SRC/scripts/package" "$T/pkg" >"$T/package.out" 2>&1 || { cat "$T/package.out"; fail "scripts/package"; }
deb=$(ls "$T"/pkg/iofleet_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { cat "$T/package.out"; fail "no .deb built"; }
ok "scripts/package built ${deb##*/} in $((SECONDS - t0)) s"
if command -v rpmbuild >/dev/null 2>&1; then
    rpm=$(ls "$T"/pkg/iofleet-*.rpm 2>/dev/null | head -n 1)
    [ -n "$rpm" ] || fail "rpmbuild is installed but no .rpm was built"
    rpm -qpl "$rpm" >"$T/rpm.files"
    for f in /usr/bin/dynamo /usr/lib/systemd/system/dynamo.service /etc/default/dynamo; do
        grep -qx "$f" "$T/rpm.files" || fail "${rpm##*/} lacks $f"
    done
    ok "${rpm##*/} built with the same files"
fi

lintian --fail-on error --tag-display-limit 0 "$deb" >"$T/lintian" 2>&1 || {
    cat "$T/lintian"
    fail "lintian reports errors"
}
ok "lintian: no error ($(grep -c '^W:' "$T/lintian" || true) warnings, $(grep -c '^I:' "$T/lintian" || true) info)"
sed 's/^/  /' "$T/lintian"

dpkg-deb -f "$deb" Depends >"$T/depends"
for lib in libuv1 libaio1 liburing2 libcjson1 libssl3 libblkid1 libc6 init-system-helpers; do
    grep -q "$lib" "$T/depends" || fail "Depends lacks $lib: $(cat "$T/depends")"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles >"$T/conffiles"
grep -qx /etc/default/dynamo "$T/conffiles" || fail "/etc/default/dynamo is not a conffile"
grep -qx /etc/default/iofleet-serve "$T/conffiles" || fail "/etc/default/iofleet-serve is not a conffile"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$T/files"
for f in /usr/bin/iofleet /usr/bin/dynamo /usr/share/man/man1/iofleet.1.gz \
    /usr/share/man/man5/iofleet-plan.5.gz /usr/share/man/man8/dynamo.8.gz \
    /usr/share/bash-completion/completions/iofleet /usr/share/bash-completion/completions/dynamo \
    /usr/share/iofleet/configs/quickstart.json /usr/lib/systemd/system/dynamo.service \
    /etc/default/dynamo /usr/share/doc/iofleet/copyright \
    /usr/lib/systemd/system/iofleet-serve.service /etc/default/iofleet-serve; do
    grep -qx "$f" "$T/files" || fail "${deb##*/} lacks $f"
done
ok "Depends from shlibdeps ($(tr -d '\n' <"$T/depends")), conffile, files"

# ---- install ------------------------------------------------------------------------
snapshot >"$T/before"
dpkg_retry -i "$deb" || fail "dpkg -i"
dpkg -L iofleet >"$T/owned"
ok "dpkg -i: $(wc -l <"$T/owned") paths"
if [ ! -d /run/systemd/system ]; then
    # The postinst says it started nothing, and how to start dynamo.
    expect_in "$T/dpkg.log" "iofleet: systemd is not running on this host: dynamo.service was not started"
    # shellcheck disable=SC2016 # the command as printed, unexpanded
    expect_in "$T/dpkg.log" 'exec dynamo $DYNAMO_CONNECT'
    ok "postinst without systemd: says the service was not started, and how to start dynamo"
fi
unit=/usr/lib/systemd/system/dynamo.service
# --man=no: its check of the unit's Documentation= runs man on each page,
# which formats it into man-db's cat cache (/var/cache/man/cat*) where that
# exists, a file the purge below would rightly find left over; the pages are
# looked up with man -w below instead.
systemd-analyze verify --man=no "$unit" >"$T/verify" 2>&1 || { cat "$T/verify"; fail "systemd-analyze verify $unit"; }
systemd-analyze verify --man=no /usr/lib/systemd/system/iofleet-serve.service >"$T/verify" 2>&1 ||
    { cat "$T/verify"; fail "systemd-analyze verify iofleet-serve.service"; }
ok "systemd-analyze verify accepts $unit and iofleet-serve.service"
man -w iofleet >/dev/null && man -w dynamo >/dev/null && man -w 5 iofleet-plan >/dev/null ||
    fail "man cannot find the installed pages"
got=$(bash --norc -c 'source /usr/share/bash-completion/completions/iofleet
    COMP_WORDS=(iofleet ru); COMP_CWORD=1; _iofleet; printf "%s\n" "${COMPREPLY[@]}"')
grep -qx run <<<"$got" || fail "installed completion: 'iofleet ru' gave '$got'"
ok "man iofleet, dynamo, iofleet-plan(5) and the completion are found"

# ---- the installed agent, as the unit starts it ------------------------------------
if [ -d /run/systemd/system ]; then
    # systemd is PID 1: postinst started the service.
    systemctl is-active --quiet dynamo || { systemctl status dynamo --no-pager; fail "dynamo.service not active"; }
    ok "systemd runs dynamo.service"
else
    # No systemd here: do what the unit says (StateDirectory, EnvironmentFile,
    # ExecStart, WorkingDirectory) and start it by hand; dynamo makes the
    # missing /run/iofleet (RuntimeDirectory) itself.
    echo "note: systemd is not PID 1 here; the unit's sandboxing is not exercised"
    mkdir -p -m 0700 /var/lib/iofleet
    [ ! -e /run/iofleet ] || fail "/run/iofleet exists before dynamo starts"
    exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
    (
        set -a
        # shellcheck disable=SC1091
        . /etc/default/dynamo
        set +a
        cd /var/lib/iofleet
        eval "exec $exec_start"
    ) 2>"$T/dynamo.log" &
    DYN_PID=$!
    for _ in $(seq 100); do [ -S /run/iofleet/dynamo.sock ] && break; sleep 0.05; done
    [ -S /run/iofleet/dynamo.sock ] || { cat "$T/dynamo.log"; fail "installed dynamo did not listen"; }
    [ "$(stat -c '%a %U' /run/iofleet)" = "755 root" ] ||
        fail "/run/iofleet made by dynamo is $(stat -c '%a %U' /run/iofleet), not 755 root"
    expect_in "$T/dynamo.log" "created /run/iofleet (mode 0755, owner root) for the unix socket"
    ok "installed dynamo made /run/iofleet and listens on /run/iofleet/dynamo.sock (ExecStart with /etc/default/dynamo)"
fi
expect_rc 0 /usr/bin/iofleet run /usr/share/iofleet/configs/quickstart.json \
    --agent unix:/run/iofleet/dynamo.sock --set 'workers[0].engine=null' \
    --set run.duration=2s --set run.ramp=0s --quiet --json "$T/agent.json"
iops=$(jq '[.tests[].results[] | select(.row_type == "ALL") | .iops] | min' "$T/agent.json")
awk -v v="$iops" 'BEGIN { exit !(v > 0) }' || fail "installed run: ALL iops $iops"
ok "iofleet run (installed) against the installed dynamo: 2 tests, ALL iops >= $iops"
(cd "$T" && expect_rc 0 /usr/bin/iofleet run /usr/share/iofleet/configs/quickstart.json \
    --set 'workers[0].engine=null' --set run.duration=1s --set run.ramp=0s --quiet \
    --workdir "$T/local-work")
ok "iofleet run (installed) with its own local agent (/usr/bin/dynamo)"
if [ -n "${DYN_PID:-}" ]; then
    kill -TERM "$DYN_PID"
    rc=0
    wait "$DYN_PID" || rc=$?
    DYN_PID=
    [ "$rc" = 0 ] || { cat "$T/dynamo.log"; fail "installed dynamo exited $rc on SIGTERM"; }
    rm -rf /run/iofleet # systemd removes the RuntimeDirectory when the unit stops
    ok "SIGTERM: the installed dynamo exited 0"
fi

# ---- purge --------------------------------------------------------------------------
dpkg_retry --purge iofleet || fail "dpkg --purge"
[ "$(dpkg-query -W -f='${Status}' iofleet 2>/dev/null || true)" = "" ] ||
    [ "$(dpkg-query -W -f='${Status}' iofleet 2>/dev/null)" = "unknown ok not-installed" ] ||
    fail "dpkg still knows iofleet: $(dpkg-query -W -f='${Status}' iofleet)"
while read -r p; do
    [ -d "$p" ] && continue # shared directories (/usr/bin) stay
    [ ! -e "$p" ] || fail "$p is left after purge"
done <"$T/owned"
snapshot >"$T/after"
diff -u "$T/before" "$T/after" >"$T/diff" || { cat "$T/diff"; fail "dpkg --purge left the machine changed"; }
ok "dpkg --purge: no file left ($(wc -l <"$T/before") paths named iofleet or dynamo before and after)"

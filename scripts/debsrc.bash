# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# scripts/debsrc.bash - Debian source packages through a deb-src list and apt state of the
# caller's own (sourced by scripts/windows and scripts/fio-examples, never run alone): the
# machine's sources and lists are never read or changed. The caller sets `cache` (the
# folder apt/ and src/ go under) and defines `log`. Mirrors: IOF_WIN_MIRROR (default
# http://deb.debian.org/debian), IOF_WIN_SECURITY_MIRROR, IOF_WIN_SUITE (default the
# machine's VERSION_CODENAME); IOF_WIN_REFRESH=1 refreshes the lists even when less than a
# day old, IOF_WIN_OFFLINE=1 uses only what was fetched before.

apt_dir=$cache/apt
apt_opts=()
setup_apt() {
    local suite mirror secmirror
    suite=${IOF_WIN_SUITE:-$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)}
    suite=${suite:-bookworm}
    mirror=${IOF_WIN_MIRROR:-http://deb.debian.org/debian}
    secmirror=${IOF_WIN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
    cat >"$apt_dir/etc/sources.list.new" <<EOF
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite-updates main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $secmirror $suite-security main
EOF
    if ! cmp -s "$apt_dir/etc/sources.list.new" "$apt_dir/etc/sources.list"; then
        mv "$apt_dir/etc/sources.list.new" "$apt_dir/etc/sources.list"
        rm -f "$apt_dir/lists/.updated"
    else
        rm -f "$apt_dir/etc/sources.list.new"
    fi
    apt_opts=(
        -o "Dir::Etc::sourcelist=$apt_dir/etc/sources.list"
        -o "Dir::Etc::sourceparts=-"
        -o "Dir::State::Lists=$apt_dir/lists"
        -o "Dir::Cache=$apt_dir/cache"
        -o "Dir::State::status=/dev/null"
        -o "APT::Sandbox::User=$(id -un)"
    )
}

refresh_lists() {
    local stamp=$apt_dir/lists/.updated
    if [[ ${IOF_WIN_REFRESH:-0} != 1 && -n $(find "$stamp" -mmin -1440 2>/dev/null) ]]; then
        return 0
    fi
    if [[ ${IOF_WIN_OFFLINE:-0} == 1 ]]; then
        [[ -e $stamp ]] && return 0
        return 1
    fi
    log "refreshing the private deb-src lists in $apt_dir"
    if apt-get "${apt_opts[@]}" -qq update; then
        touch "$stamp"
    elif [[ -e $stamp ]]; then
        log "warning: refresh failed; using the lists of $(date -r "$stamp" -u +%F)"
    else
        return 1
    fi
}

# Prints the versions of source package $1 in the private lists, newest first.
src_versions() {
    apt-cache "${apt_opts[@]}" showsrc "$1" 2>/dev/null |
        awk -v p="$1" '$1 == "Package:" { ok = ($2 == p) } ok && $1 == "Version:" { print $2 }' |
        sort -Vru
}

# Downloads source package $1 (apt-get source --download-only) into $cache/src/, newest
# version first: a version whose files the mirror does not serve (an index ahead of its
# pool) is skipped for a day and the next one tried. Prints the version it has.
fetch_source() {
    local pkg=$1 v dir
    while read -r v; do
        dir=$cache/src/${pkg}_${v//[^A-Za-z0-9.+_-]/_}
        if [[ -e $dir/.ok ]]; then
            printf '%s\n' "$v"
            return 0
        fi
        [[ -n $(find "$dir.unavailable" -mmin -1440 2>/dev/null) ]] && continue
        rm -rf "$dir"
        mkdir -p "$dir"
        if (cd "$dir" && apt-get "${apt_opts[@]}" -qq source --download-only --only-source \
            "$pkg=$v") >"$dir.log" 2>&1; then
            touch "$dir/.ok"
            rm -f "$dir.unavailable" "$dir.log"
            printf '%s\n' "$v"
            return 0
        fi
        log "warning: cannot fetch the source of $pkg $v ($(grep -m1 '^E:' "$dir.log" || echo 'see the log')); trying an older version"
        touch "$dir.unavailable"
        rm -rf "$dir"
    done < <(src_versions "$pkg")
    return 1
}


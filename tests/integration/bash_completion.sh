# SPDX-License-Identifier: Apache-2.0
# packaging/bash-completion/iofleet, sourced into a fresh bash and driven as
# readline would (COMP_WORDS/COMP_CWORD): subcommands, `pki init`, options of
# each command and of dynamo (taken from their --help tables), option values
# (--opt VALUE and --opt=VALUE), plan files (*.json and directories, not other
# files) and `-`.
source "$(dirname "$0")/lib/common.bash"
COMP=$IOF_SRC/packaging/bash-completion/iofleet
[ -r "$COMP" ] || fail "packaging/bash-completion/iofleet is missing"

mkdir -p "$T/d/plans" "$T/d/pki"
: >"$T/d/a.json"
: >"$T/d/b.json"
: >"$T/d/notes.txt"
: >"$T/d/job.fio"
: >"$T/d/old.icf"
: >"$T/d/pki/ca.pem"

# complete WORD...: the words of a command line, the last one being completed
# (may be empty); prints COMPREPLY, one per line, sorted. Run in $T/d with
# iofleet and dynamo on PATH.
complete_words() {
    (cd "$T/d" && PATH="$IOF_BIN:$PATH" bash --norc --noprofile -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        spec=$(complete -p "${COMP_WORDS[0]}") || exit 3
        fn=$(sed -E "s/.*-F ([^ ]+).*/\1/" <<<"$spec")
        "$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$@") | sed '/^$/d' | sort
}
# expect_words WANT WORD...: the completions are exactly WANT (space-separated).
expect_words() {
    local want=$1 got
    shift
    got=$(complete_words "$@" | tr '\n' ' ' | sed 's/ $//')
    [ "$got" = "$want" ] || fail "completing '$*': got '$got', want '$want'"
}
# expect_has WORD WORD...: the completions include WORD.
expect_has() {
    local want=$1
    shift
    complete_words "$@" | grep -qxF -- "$want" || {
        complete_words "$@" | head -n 40
        fail "completing '$*': '$want' not offered"
    }
}

# Subcommands come from `iofleet --help`'s command list.
want=$("$IOFLEET" --help | awk '/^commands:/{c=1;next} c&&/^$/{exit} c{print $1}' | sort -u |
    tr '\n' ' ' | sed 's/ $//')
expect_words "$want" iofleet ""
expect_words "run runs" iofleet ru
expect_words "report" iofleet rep
expect_words "import" iofleet imp
expect_words "clean" iofleet cl
expect_words "init" iofleet pki ""
expect_words "token" iofleet serve t
expect_words "new" iofleet serve token ""
expect_words "--http-tokens" iofleet serve token new --http-to
expect_words "operator viewer" iofleet serve token new --scope ""
expect_words "validate" iofleet help va
ok "subcommands: $want; pki init; help COMMAND"

# Every long option of each command's --help completes after "--".
for cmd in run validate "pki init"; do
    # shellcheck disable=SC2086
    "$IOFLEET" $cmd --help | grep -oE -- '^  (-[a-zA-Z], )?--[a-z][a-z-]*|^      --[a-z][a-z-]*' |
        grep -oE -- '--[a-z][a-z-]*' | sort -u >"$T/want"
    # shellcheck disable=SC2086
    complete_words iofleet $cmd -- >"$T/got"
    diff -u "$T/want" "$T/got" >&2 || fail "iofleet $cmd --<TAB> differs from its --help"
done
expect_words "--tls-ca --tls-cert --tls-key" iofleet run --tls
expect_words "--force" iofleet run --fo
expect_has "-q" iofleet run -
expect_has "--quiet" iofleet run -
"$IOF_BIN/dynamo" --help | grep -oE -- '^  (-[a-zA-Z], )?--[a-z][a-z-]*|^      --[a-z][a-z-]*' |
    grep -oE -- '--[a-z][a-z-]*' | sort -u >"$T/want"
complete_words dynamo -- >"$T/got"
diff -u "$T/want" "$T/got" >&2 || fail "dynamo --<TAB> differs from its --help"
expect_words "--allow --allow-destructive" dynamo --allow
ok "options of run, validate, pki init and dynamo as their --help lists them"

# Plan files: *.json and directories (and - for stdin), not other files.
expect_words "- a.json b.json pki plans" iofleet run ""
expect_words "a.json" iofleet validate a
expect_words "- a.json b.json pki plans" iofleet run --quiet --set run.duration=1s ""
expect_words "- a.json b.json pki plans" iofleet run --csv out.csv ""
ok "plan files: *.json, directories and -"

# Option values.
expect_words "pki" iofleet run --tls-ca pk
expect_words "pki/ca.pem" iofleet run --tls-ca pki/
expect_words "pki/ca.pem" iofleet run --tls-cert=pki/
expect_words "notes.txt" iofleet run --csv no
expect_words "pki plans" iofleet run --workdir ""
expect_words "pki plans" dynamo --workdir ""
expect_words "pki plans" iofleet agents --pki ""
expect_words "notes.txt" dynamo --allow no
expect_words "unix:pki" iofleet run --agent unix:pk
expect_words "pki plans" iofleet pki init ""
expect_words "export import prune rm tag" iofleet runs ""
expect_words "--csv" iofleet runs export 1 --cs
expect_words "notes.txt" iofleet runs export 1 --iometer-csv no
expect_words "a.json b.json pki plans" iofleet runs import ""
expect_words "a.json b.json pki plans" iofleet report ""
expect_words "html json md" iofleet report a.json --format ""
expect_words "notes.txt" iofleet report a.json -o no
expect_words "notes.txt" iofleet run --db no
expect_words "job.fio old.icf pki plans" iofleet import ""
expect_words "fio icf vdbench" iofleet import job.fio --format ""
expect_words "--var" iofleet import p.vdb --va
expect_words "" iofleet import p.vdb --var ""
expect_words "all group target worker" iofleet run --rows ""
expect_words "worker,target" iofleet run --rows worker,t
ok "values: certificates, result files, directories, unix: sockets, report formats, runs actions, fio job files, --rows lists"

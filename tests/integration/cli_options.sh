# SPDX-License-Identifier: Apache-2.0
# The command lines of iofleet and dynamo: --help on every subcommand (exit 0,
# stdout), "did you mean" for mistyped commands and options (exit 2, a short
# usage on stderr), --opt=value, plans from stdin, --set/--unset and result
# files that are not replaced without --force.
source "$(dirname "$0")/lib/common.bash"
DYNAMO=$IOF_BIN/dynamo

plan p.json <<'P'
{"name": "clip", "run": {"ramp": "1s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "s", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "f.dat", "size": "1m"}]}]}
P

# --- help --------------------------------------------------------------------
for cmd in "--help" "-h" "help" "help --help" "help -h" "help run" "help validate" "help pki" "run --help" "run -h" \
    "validate --help" "validate -h" "pki --help" "pki init --help" "pki init -h" \
    "run $T/p.json --help"; do
    # shellcheck disable=SC2086
    expect_rc 0 "$IOFLEET" $cmd
    expect_in "$T/out" "usage: iofleet"
    [ ! -s "$T/err" ] || fail "iofleet $cmd wrote to stderr: $(cat "$T/err")"
    long=$(awk 'length > 79' "$T/out")
    [ -z "$long" ] || fail "iofleet $cmd: help lines wider than 79 columns: $long"
done
expect_rc 0 "$IOFLEET" run --help
expect_in "$T/out" "--force"
expect_in "$T/out" "exit codes:"
for cmd in "--help" "-h"; do
    expect_rc 0 "$DYNAMO" $cmd
    expect_in "$T/out" "usage: dynamo"
    expect_in "$T/out" "--allow-destructive"
    [ ! -s "$T/err" ] || fail "dynamo $cmd wrote to stderr"
    long=$(awk 'length > 79' "$T/out")
    [ -z "$long" ] || fail "dynamo $cmd: help lines wider than 79 columns: $long"
done
expect_rc 0 "$DYNAMO" --version
expect_in "$T/out" "dynamo "
[ ! -e "$T/w" ] || fail "--help ran something"
ok "--help and -h on every subcommand: exit 0, stdout only"

# --- did you mean ------------------------------------------------------------
# did_you_mean WANT CMD...: exit 2, the suggestion, a short usage, no help dump.
did_you_mean() {
    local want=$1
    shift
    expect_rc 2 "$@"
    expect_in "$T/err" "did you mean '$want'?"
    expect_in "$T/err" "usage: "
    expect_in "$T/err" "--help' for more information"
    [ "$(wc -l <"$T/err")" -le 4 ] || { cat "$T/err"; fail "'$*': more than 4 lines on stderr"; }
    [ ! -s "$T/out" ] || fail "'$*' wrote to stdout"
}
did_you_mean validate "$IOFLEET" valdate "$T/p.json"
did_you_mean run "$IOFLEET" rnu "$T/p.json"
did_you_mean pki "$IOFLEET" pkk init "$T/pki"
did_you_mean validate "$IOFLEET" help validat
did_you_mean --help "$IOFLEET" --hlep
did_you_mean --agent "$IOFLEET" run "$T/p.json" --agnet 127.0.0.1
did_you_mean --workdir "$IOFLEET" run "$T/p.json" --workdri "$T/w"
did_you_mean --set "$IOFLEET" validate "$T/p.json" --sett run.duration=2s
did_you_mean --insecure "$IOFLEET" validate "$T/p.json" --insecur
did_you_mean init "$IOFLEET" pki inti "$T/pki"
did_you_mean --manager-name "$IOFLEET" pki init "$T/pki" --manager-nmae x
did_you_mean --listen "$DYNAMO" --lisen
did_you_mean --allow-destructive "$DYNAMO" --listen unix:"$T/s" --allow-destructiv
expect_rc 2 "$IOFLEET" run "$T/p.json" --frobnicate
expect_in "$T/err" "unknown option '--frobnicate'"
if grep -q "did you mean" "$T/err"; then fail "a far-off option got a suggestion"; fi
expect_rc 2 "$IOFLEET" run "$T/p.json" --quiet=yes
expect_in "$T/err" "option '--quiet' takes no value"
expect_rc 2 "$IOFLEET" run "$T/p.json" --csv
expect_in "$T/err" "--csv needs a value (F)"
expect_rc 2 "$IOFLEET" run "$T/p.json" --ag 127.0.0.1
expect_in "$T/err" "unknown option '--ag'; did you mean one of '--agent', '--agents-file'?"
expect_rc 2 "$IOFLEET" run "$T/p.json" --verb
expect_in "$T/err" "unknown option '--verb'; did you mean '--verbose'?"
[ ! -e "$T/w" ] && [ ! -e "$T/pki" ] || fail "a refused command ran"
ok "did you mean: commands and options of run, validate, pki init and dynamo"

# --- --opt=value and short options -------------------------------------------
expect_rc 0 "$IOFLEET" validate "$T/p.json" --set=run.duration=7s
expect_in "$T/out" "duration 7s"
expect_rc 0 "$IOFLEET" run "$T/p.json" --workdir="$T/w" -q --csv="$T/eq.csv"
[ -s "$T/eq.csv" ] || fail "--csv=F wrote nothing"
expect_rc 2 "$DYNAMO" --listen unix:"$T/s" --heartbeat-ms=50
expect_in "$T/err" "--heartbeat-ms must be 100..60000, got '50'"
ok "--opt=value for run, validate and dynamo"

# --- stdin -------------------------------------------------------------------
expect_rc 0 "$IOFLEET" validate - <"$T/p.json"
expect_in "$T/out" "plan 'clip'"
expect_rc 0 "$IOFLEET" validate --set run.duration=3s - <"$T/p.json"
expect_in "$T/out" "duration 3s"
echo '{"name": "x",' | expect_rc 2 "$IOFLEET" validate -
expect_in "$T/err" "stdin: invalid JSON"
expect_rc 0 "$IOFLEET" run - --workdir "$T/w" --quiet --csv "$T/stdin.csv" <"$T/p.json"
grep -q '^.*,ALL,' "$T/stdin.csv" || grep -q 'ALL' "$T/stdin.csv" || fail "run - wrote no ALL row"
ok "validate - and run - read the plan from stdin"

# --- --set and --unset -------------------------------------------------------
expect_rc 0 "$IOFLEET" validate "$T/p.json" --set workers[0].engine=sync
expect_in "$T/out" "1 worker, sync,"
expect_rc 0 "$IOFLEET" validate "$T/p.json" --set workers[0].engine=sync --set workers[0].engine=null
expect_in "$T/out" "1 worker, null,"
expect_rc 0 "$IOFLEET" validate "$T/p.json" --unset workers[0].engine
expect_in "$T/out" "1 worker, each agent's default engine (libaio on Linux, windows on Windows),"
expect_rc 2 "$IOFLEET" validate "$T/p.json" --unset name
expect_in "$T/err" "name: required but missing (after --unset name)"
expect_rc 2 "$IOFLEET" validate "$T/p.json" --set workers[0].engine
expect_in "$T/err" "--set workers[0].engine: expected KEY=VALUE (--unset KEY removes a key)"
expect_rc 2 "$IOFLEET" validate "$T/p.json" --unset workers[0].engine=null
expect_in "$T/err" "--unset takes a KEY"
ok "--set: a bare word is a value (engine=null is the null engine); --unset removes"

# --- result files and --force -------------------------------------------------
for opt in --csv --iometer-csv --timeseries --json; do
    echo keep >"$T/old$opt"
    rm -rf "$T/wf"
    other=--json
    [ "$opt" != --json ] || other=--csv
    expect_rc 2 "$IOFLEET" run "$T/p.json" --workdir "$T/wf" --quiet "$other" "$T/new.csv" \
        "$opt" "$T/old$opt"
    expect_in "$T/err" "$opt $T/old$opt: the file exists; give --force"
    [ "$(cat "$T/old$opt")" = keep ] || fail "$opt replaced an existing file without --force"
    [ ! -e "$T/new.csv" ] || fail "$opt: another result file was created before the refusal"
    [ ! -e "$T/wf" ] || fail "$opt: the run started before the refusal"
done
expect_rc 0 "$IOFLEET" run "$T/p.json" --workdir "$T/w" --quiet --force --csv "$T/old--csv"
expect_in "$T/old--csv" "row_type"
expect_rc 0 "$IOFLEET" run "$T/p.json" --workdir "$T/w" --quiet -f --json "$T/old--json"
expect_in "$T/old--json" '"results"'
expect_rc 0 "$IOFLEET" run "$T/p.json" --workdir "$T/w" --quiet --csv /dev/null
ok "existing result files refused without --force (exit 2, named, nothing run); replaced with it"

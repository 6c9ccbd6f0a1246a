#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One naming across the result files, as docs/results.md's table "One name per
figure" states it. Usage: names_check.py RESULTS_MD OUT.csv OUT.json OUT-ts.csv OUT-iom.csv

- Every --csv column is a key of the same row of the JSON (tests[].results[]) with the
  same value, or the table names its JSON place (cpu.user_pct, tests[].start_skew_ms).
- Every --timeseries column is a key of the JSON's interval rows (tests[].intervals[]),
  or sits where the table places the CSV column of its name (cpu.dpc_pct), or is a key
  of its test (tests[]: test is tests[].index).
- The Iometer CSV's columns the table maps hold the same figures as the CSV's columns,
  row by row: ALL = ALL, MANAGER = NODE, WORKER "Worker N" = WORKER wN-1, DISK = TARGET.
Prints one line per finding and exits 1 on any.
"""
import csv
import json
import re
import sys

md, csv_path, json_path, ts_path, iom_path = sys.argv[1:6]
bad = []


def names(cell):
    """The backticked names of a table cell before its remarks ("(...)")."""
    cell = cell.split(" (")[0]
    return re.findall(r"`([^`]+)`", cell)


# The table: | CSV column(s) | JSON | Iometer CSV |, "same" = the CSV names.
mapping_json, mapping_iom = {}, {}
text = open(md, encoding="utf-8").read()
m = re.search(r"^#+ One name per figure\n(.*?)(?=^#|\Z)", text, re.M | re.S)
if not m:
    sys.exit("docs: no section 'One name per figure'")
for line in m.group(1).splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 3 or not cells[0].startswith("`") or cells[0].startswith("`--"):
        continue  # not a row, or the heading
    cols = names(cells[0])
    js = cols if cells[1].startswith("same") else names(cells[1])
    io = names(cells[2])
    if js and len(js) != len(cols):
        bad.append(f"docs: row {cols}: {len(js)} JSON names for {len(cols)} columns")
    if io and len(io) != len(cols):
        bad.append(f"docs: row {cols}: {len(io)} Iometer names for {len(cols)} columns")
    for i, c in enumerate(cols):
        if js:
            mapping_json[c] = js[i]
        if io:
            mapping_iom[c] = io[i]


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def decimals(s):
    """Digits after the point as a file printed s (0 without one)."""
    return len(s.split(".", 1)[1]) if "." in s else 0


def close(a_text, b_text_or_num):
    """Two figures are the same within what each printed (half a unit of its last
    digit), and a float's precision (Iometer writes some figures as floats)."""
    a = num(a_text)
    b = num(b_text_or_num) if isinstance(b_text_or_num, str) else float(b_text_or_num)
    if a is None or b is None:
        return False
    tol = 0.5 * 10 ** -decimals(a_text)
    if isinstance(b_text_or_num, str):
        tol += 0.5 * 10 ** -decimals(b_text_or_num)
    return abs(a - b) <= tol + 1e-7 * abs(b)


def same(csv_val, js_val):
    """A CSV field and a JSON value say the same: empty = null, numbers within the
    CSV's printed precision, text equal."""
    if csv_val == "":
        return js_val is None or js_val == ""
    if isinstance(js_val, bool):
        return csv_val in (str(int(js_val)), str(js_val).lower())
    if isinstance(js_val, (int, float)):
        return close(csv_val, js_val)
    return csv_val == (js_val if js_val is not None else "")


def at(obj, path):
    for k in path.split("."):
        if obj is None:
            return None  # under a null object (cpu of a WORKER row): unknown
        if not isinstance(obj, dict) or k not in obj:
            return KeyError
        obj = obj[k]
    return obj


doc = json.load(open(json_path, encoding="utf-8"))
tests = {t["index"]: t for t in doc["tests"]}


def key(r):
    return tuple(r.get(k) or "" for k in ("row_type", "node", "worker", "target", "group"))


# --- --csv against the JSON rows ---------------------------------------------------------
with open(csv_path, newline="", encoding="utf-8") as f:
    rows = list(csv.DictReader(f))
checked = 0
for r in rows:
    t = tests[int(r["test"])]
    jr = [x for x in t["results"] if key(x) == key(r)]
    if len(jr) != 1:
        bad.append(f"csv test {r['test']} {key(r)}: {len(jr)} JSON rows")
        continue
    jr = jr[0]
    for col, v in r.items():
        where = mapping_json.get(col, col)
        if where.startswith("tests[]."):
            # a test's figure: on its ALL row, and on every row that prints it
            jv = at(t, where[len("tests[]."):]) if r["row_type"] == "ALL" or v != "" else None
        else:
            jv = at(jr, where)
        if jv is KeyError:
            bad.append(f"csv column '{col}': no JSON key '{where}' in its row (and not in the table)")
        elif not same(v, jv):
            bad.append(f"csv test {r['test']} {key(r)} '{col}' = '{v}', JSON '{where}' = {jv!r}")
        checked += 1
if not rows:
    bad.append("csv: no rows")

# --- --timeseries against the JSON intervals ----------------------------------------------
with open(ts_path, newline="", encoding="utf-8") as f:
    ts = list(csv.DictReader(f))
iv_keys = set()
for t in doc["tests"]:
    for iv in t["intervals"]:
        iv_keys |= set(iv)
test_keys = set(doc["tests"][0]) | {"test"}
for col in ts[0] if ts else []:
    # a figure the table places in an object of the row (cpu.dpc_pct): that object
    where = mapping_json.get(col, col).split(".")[0]
    if col not in iv_keys and col not in test_keys and where not in iv_keys:
        bad.append(f"timeseries column '{col}': neither an interval key nor a test key in the JSON")
if not ts:
    bad.append("timeseries: no rows")

# --- --iometer-csv against the CSV --------------------------------------------------------
with open(iom_path, newline="", encoding="utf-8") as f:
    lines = [l.rstrip("\r\n") for l in f]
header, spec_rows = None, []
for l in lines:
    if l.startswith("'Target Type,"):
        header = l[1:].split(",")
    elif header and l.split(",", 1)[0] in ("ALL", "MANAGER", "WORKER", "DISK"):
        spec_rows.append(dict(zip(header, l.split(","))))
if len(mapping_json) < 10 or len(mapping_iom) < 10:
    bad.append(f"docs: the table maps only {len(mapping_json)} JSON, {len(mapping_iom)} Iometer names")
for c, io in mapping_iom.items():
    if header and io not in header:
        bad.append(f"docs: Iometer column '{io}' (for '{c}') not in the Iometer header")
# Rows in the same order as the CSV's, GROUP rows aside (Iometer has none); a test per
# 'Results block, in order.
ours = [r for r in rows if r["row_type"] != "GROUP" and r["status"] != "absent"]
kind = {"ALL": "ALL", "NODE": "MANAGER", "WORKER": "WORKER", "TARGET": "DISK"}
if len(ours) != len(spec_rows):
    bad.append(f"iometer: {len(spec_rows)} rows for {len(ours)} CSV rows")
for r, io in zip(ours, spec_rows):
    what = f"iometer {io['Target Type']} {io['Target Name']}"
    if io["Target Type"] != kind[r["row_type"]]:
        bad.append(f"{what}: for CSV {r['row_type']}")
        continue
    want = {"ALL": "All", "NODE": r["node"], "TARGET": r["target"]}.get(r["row_type"])
    if r["row_type"] == "WORKER":
        want = "Worker %d" % (int(r["worker"][1:]) + 1)  # w0 is Iometer's Worker 1
    if io["Target Name"] != want:
        bad.append(f"{what}: Target Name is not '{want}' (CSV {key(r)})")
    for c, name in mapping_iom.items():
        v, iv = r.get(c), io.get(name)
        if v is None or iv in (None, "") or v == "":
            continue  # a figure Iometer leaves out on this row type, or one we have not
        if num(v) is None or num(iv) is None:
            if v != iv:
                bad.append(f"{what}: '{name}' = '{iv}', CSV '{c}' = '{v}'")
        elif not close(v, iv):
            bad.append(f"{what}: '{name}' = {iv}, CSV '{c}' = {v}")

for b in bad:
    print(b)
print(f"{checked} CSV fields against the JSON, {len(ts[0]) if ts else 0} time-series columns, "
      f"{len(spec_rows)} Iometer rows x {len(mapping_iom)} mapped columns", file=sys.stderr)
sys.exit(1 if bad else 0)

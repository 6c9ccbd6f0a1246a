#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A reader of Iometer 1.1.0's result files written to Iometer's own format,
# not to iofleet's: the order of lines its writers produce (CPageSetup::
# SaveResults, AccessSpecList::SaveResults, ManagerList::SaveResults,
# Manager::SaveResults, CGalileoView::PrepareInstantaneousFile, Worker::
# SaveResultsInstantaneous, ManagerList::SaveResultsInstantaneous, 'End Test
# from CGalileoView::TestDone), CRLF line ends, the field counts of each row
# type, raw times divided by Processor Speed. Used by
# tests/integration/iometer_files.sh:
#   iometer_read.py results F   -> JSON summary of the runs in results.csv F
#   iometer_read.py instant F   -> JSON summary of the instantaneous file F
# Exits 1 naming the line when the file is not in Iometer's format.
import json
import re
import sys

RESULTS_HEADER = (
    "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,"
    "Read IOps,Write IOps,MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),"
    "MBps (Decimal),Read MBps (Decimal),Write MBps (Decimal),Transactions per Second,"
    "Connections per Second,Average Response Time,Average Read Response Time,"
    "Average Write Response Time,Average Transaction Time,Average Connection Time,"
    "Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,"
    "Maximum Transaction Time,Maximum Connection Time,Errors,Read Errors,Write Errors,"
    "Bytes Read,Bytes Written,Read I/Os,Write I/Os,Connections,Transactions per Connection,"
    "Total Raw Read Response Time,Total Raw Write Response Time,Total Raw Transaction Time,"
    "Total Raw Connection Time,Maximum Raw Read Response Time,Maximum Raw Write Response Time,"
    "Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,"
    "Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,"
    "% Privileged Time,% DPC Time,% Interrupt Time,Processor Speed,Interrupts per Second,"
    "CPU Effectiveness,Packets/Second,Packet Errors,Segments Retransmitted/Second,"
    "0 to 50 uS,50 to 100 uS,100 to 200 uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,"
    "5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to 30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,"
    "200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 s,4.7 to 5 s,5 to 10 s, >= 10 s")
# PrepareInstantaneousFile: "TimeStamp," first, and MBps where results.csv says MiBps.
INSTANT_HEADER = "TimeStamp," + RESULTS_HEADER.replace("MiBps", "MBps")
TIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}$")
SPEC_LINE = re.compile(r"^\d+,\d+,\d+,\d+,\d+,\d+,\d+,\d+,$")  # the comma after reply


class Bad(Exception):
    pass


class Lines:
    def __init__(self, path):
        data = open(path, "rb").read().decode("utf-8")
        if data and not data.endswith("\r\n"):
            raise Bad("the last line does not end with CRLF")
        self.l = data.split("\r\n")[:-1] if data else []
        for i, s in enumerate(self.l):
            if "\r" in s or "\n" in s:
                raise Bad(f"line {i + 1}: a line end other than CRLF")
        self.i = 0

    def peek(self):
        return self.l[self.i] if self.i < len(self.l) else None

    def take(self, want=None):
        s = self.peek()
        if s is None:
            raise Bad(f"line {self.i + 1}: end of file, expected {want!r}")
        if want is not None and s != want:
            raise Bad(f"line {self.i + 1}: {s!r}, expected {want!r}")
        self.i += 1
        return s

    def time(self):
        s = self.take()
        if not TIME.match(s):
            raise Bad(f"line {self.i}: {s!r} is not a time stamp")
        return s


def run_head(f):
    f.take("'Test Type,Test Description")
    ttype, desc = f.take().split(",", 1)
    f.take("'Version")
    version = f.take()
    f.take("'Time Stamp")
    return {"test_type": int(ttype), "description": desc, "version": version,
            "time": f.time(), "tests": [], "end_test": False}


def spec_block(f):
    specs = []
    f.take("'Access specifications")
    while f.peek() == "'Access specification name,default assignment":
        f.take()
        name, assign = f.take().rsplit(",", 1)
        f.take("'size,% of size,% reads,% random,delay,burst,align,reply")
        lines = []
        while f.peek() is not None and not f.peek().startswith("'"):
            s = f.take()
            if not SPEC_LINE.match(s):
                raise Bad(f"line {f.i}: access spec line {s!r} is not 8 numbers and a comma")
            lines.append([int(x) for x in s.split(",")[:8]])
        specs.append({"name": name, "default_assignment": int(assign), "lines": lines})
    f.take("'End access specifications")
    return specs


def num(s):
    return float(s) if s != "" else None


def row_of(fields, header, lineno):
    kind = fields[0]
    want = {"PROCESSOR": 59}.get(kind, len(header))
    if len(fields) != want:
        raise Bad(f"line {lineno}: {kind} row with {len(fields)} fields, want {want}")
    r = dict(zip(header, fields))
    r["_fields"] = len(fields)
    return r


def read_results(path):
    f = Lines(path)
    runs = []
    header = RESULTS_HEADER[1:].split(",")
    while f.peek() is not None:
        run = run_head(f)
        runs.append(run)
        while f.peek() == "'Access specifications":
            test = {"specs": spec_block(f), "rows": []}
            while f.peek() is not None and f.peek().startswith("'") and f.peek() != "'Results":
                f.take()  # 'Interrupted, 'Status: comment lines
            f.take("'Results")
            f.take(RESULTS_HEADER)
            while f.peek() is not None and not f.peek().startswith("'"):
                fields = f.take().split(",")
                if fields[0] not in ("ALL", "MANAGER", "PROCESSOR", "WORKER", "DISK"):
                    raise Bad(f"line {f.i}: row type {fields[0]!r}")
                test["rows"].append(row_of(fields, header, f.i))
            f.take("'Time Stamp")
            test["time"] = f.time()
            run["tests"].append(test)
        if f.peek() == "'End Test":
            f.take()
            run["end_test"] = True
        elif f.peek() is not None and f.peek() != "'Test Type,Test Description":
            raise Bad(f"line {f.i + 1}: {f.peek()!r} after a test")
    return runs


def read_instant(path):
    f = Lines(path)
    header = INSTANT_HEADER.split(",")
    run = run_head(f)
    while f.peek() == "'Access specifications":
        test = {"specs": spec_block(f), "updates": [], "lost": 0, "workers": [], "all": None}
        f.take("'Results")
        f.take(INSTANT_HEADER)
        while f.peek() is not None and f.peek() != "'Time Stamp":
            s = f.take()
            if s.startswith("'Lost: "):
                test["lost"] += 1
                continue
            fields = s.split(",")
            if not TIME.match(fields[0]):
                raise Bad(f"line {f.i}: {fields[0]!r} is not a time stamp")
            r = dict(zip(header, fields))
            if len(fields) != len(header):
                raise Bad(f"line {f.i}: {len(fields)} fields, want {len(header)}")
            kind = r["'Target Type"]
            if kind == "ALL":
                test["all"] = r
            elif kind == "WORKER" and test["all"] is None and r["Access Specification Name"]:
                test["workers"].append(r)
            elif kind == "MANAGER" and test["all"] is None and not test["workers"]:
                test["updates"].append(r)
            else:
                raise Bad(f"line {f.i}: a {kind} row out of Iometer's order")
        f.take("'Time Stamp")
        test["time"] = f.time()
        run["tests"].append(test)
    if f.peek() == "'End Test":
        f.take()
        run["end_test"] = True
    if f.peek() is not None:
        raise Bad(f"line {f.i + 1}: {f.peek()!r} after the last test")
    return run


def summary_row(r):
    speed = num(r.get("Processor Speed", ""))
    raw = num(r.get("Total Raw Run Time", ""))
    return {
        "type": r.get("Target Type") or r.get("'Target Type"),
        "name": r["Target Name"],
        "time": r.get("TimeStamp"),
        "ios": int(r["Read I/Os"]) + int(r["Write I/Os"]) if r.get("Read I/Os") else None,
        "iops": num(r["IOps"]),
        "speed": speed,
        "run_s": raw / speed if raw is not None and speed else None,
        "bins": sum(int(r[h]) for h in RESULTS_HEADER.split(",")[59:] if r.get(h)),
        **cpu_cols(r),
    }


# The CPU and network columns, None where the file leaves them empty.
CPU_COLS = {"cpu": "% CPU Utilization", "user": "% User Time", "sys": "% Privileged Time",
            "dpc": "% DPC Time", "irq": "% Interrupt Time", "intr_s": "Interrupts per Second",
            "packets_s": "Packets/Second", "packet_errors": "Packet Errors",
            "retrans_s": "Segments Retransmitted/Second"}


def cpu_cols(r):
    return {k: num(r.get(h, "")) for k, h in CPU_COLS.items()}


def main():
    try:
        if sys.argv[1] == "results":
            runs = read_results(sys.argv[2])
            out = [{"test_type": run["test_type"], "end_test": run["end_test"],
                    "tests": [{"specs": t["specs"],
                               "rows": [summary_row(r) if r["_fields"] == 80 else
                                        {"type": "PROCESSOR", "name": r["Target Name"],
                                         "speed": num(r["Processor Speed"]), **cpu_cols(r)}
                                        for r in t["rows"]]}
                              for t in run["tests"]]} for run in runs]
        else:
            run = read_instant(sys.argv[2])
            out = {"end_test": run["end_test"],
                   "tests": [{"specs": t["specs"], "lost": t["lost"],
                              "updates": [summary_row(r) for r in t["updates"]],
                              "workers": [summary_row(r) for r in t["workers"]],
                              "all": summary_row(t["all"]) if t["all"] else None}
                             for t in run["tests"]]}
    except (Bad, ValueError, KeyError, IndexError) as e:
        print(f"{sys.argv[2]}: not in Iometer's format: {e}", file=sys.stderr)
        sys.exit(1)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

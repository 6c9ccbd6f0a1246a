/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/iometer.h - what the Iometer writers share: results.csv
 * (manager/sinks/iometer_csv.c, --iometer-csv and --iometer-csv-append) and
 * the instantaneous file (manager/sinks/iometer_instant.c,
 * --iometer-instant) write the same row fields, comment blocks and time
 * stamps (manager/sinks/iometer_row.c). */
#ifndef IOF_MANAGER_SINKS_IOMETER_H
#define IOF_MANAGER_SINKS_IOMETER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/spec.h"
#include "common/stats.h"
#include "manager/metrics.h"
#include "proto/msg.h"

/* Iometer 1.1.0 src/ManagerList.cpp, ManagerList::SaveResults (note the
 * space in " >= 10 s"). */
/* The columns from "MBps (Decimal)" on, which the results file and the
 * instantaneous file (manager/sinks/iometer_instant.c) share. */
#define IOM_HEADER_TAIL                                                                            \
    "MBps (Decimal),Read MBps (Decimal),Write MBps (Decimal),Transactions per Second,"             \
    "Connections per Second,Average Response Time,Average Read Response Time,"                     \
    "Average Write Response Time,Average Transaction Time,Average Connection Time,"                \
    "Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,"                \
    "Maximum Transaction Time,Maximum Connection Time,Errors,Read Errors,Write Errors,"            \
    "Bytes Read,Bytes Written,Read I/Os,Write I/Os,Connections,Transactions per Connection,"       \
    "Total Raw Read Response Time,Total Raw Write Response Time,Total Raw Transaction Time,"       \
    "Total Raw Connection Time,Maximum Raw Read Response Time,Maximum Raw Write Response Time,"    \
    "Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,"                 \
    "Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,"                      \
    "% Privileged Time,% DPC Time,% Interrupt Time,Processor Speed,Interrupts per Second,"         \
    "CPU Effectiveness,Packets/Second,Packet Errors,Segments Retransmitted/Second,"                \
    "0 to 50 uS,50 to 100 uS,100 to 200 uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,"         \
    "5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to 30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,"       \
    "200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 s,4.7 to 5 s,5 to 10 s, >= 10 s"

#define IOM_HEADER                                                                                 \
    "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,"        \
    "Read IOps,Write IOps,MiBps (Binary),Read MiBps (Binary),Write MiBps "                         \
    "(Binary)," IOM_HEADER_TAIL

#define IOM_EOL "\r\n"
#define IOM_VERSION "1.1.0"
#define IOM_NCOLS 80
#define IOM_NBINS 21
#define IOM_SECTOR 512
#define IOM_TICKS_PER_S 10000000 /* Windows Iometer's timer: 10 MHz (see the file comment) */
#define IOM_NS_PER_TICK 100
#define IOM_AMBIGUOUS (-1)      /* Iometer's AMBIGUOUS_VALUE (Worker.h) */
#define IOM_ASSIGN_NONE 0       /* Iometer's AssignNone (GalileoDefs.h) */
#define IOM_CPU_GAP 46          /* empty fields of a PROCESSOR row before its CPU figures */
#define IOM_CPU_NAME "All CPUs" /* Target Name of our one PROCESSOR row per node */
#define IOM_MB_DEC (1000.0 * 1000.0)

/* A value shared by a set of targets: none seen, one value, or several. */
struct iom_common {
    bool any, mixed;
    uint64_t v;
};

/* A line being formatted; nf counts the fields written. */
struct iom_buf {
    struct iof_buf t;
    unsigned nf;
};

/* Everything a row shows besides its stats. Counts < 0 print empty. */
struct iom_fig {
    const char *type, *spec;
    int64_t managers, workers, disks;
    bool raw; /* the raw-time columns and Processor Speed (not on ALL) */
    bool cpu; /* the CPU columns (ALL and MANAGER) */
    bool cpu_known;
    double busy, user, sys;
    /* The node figures (proto_cpu.node_valid): % DPC Time (softirq), %
     * Interrupt Time (irq), Interrupts per Second, Packets/Second, Packet
     * Errors, Segments Retransmitted/Second; empty when not known. */
    bool node_known;
    double dpc, irq, intr_s, packets_s, packet_errors, retrans_s;
    const struct iom_common *start, *size, *qd;
};

/* Sets g's CPU figures from c (borrowed, NULL or not valid: unknown). */
void iom_fig_cpu(struct iom_fig *g, const struct proto_cpu *c);

/* Appends a name field, commas, CR and LF turned into spaces (Iometer's way). */
void iom_f_str(struct iom_buf *b, const char *s);
/* Appends "Worker N" for our "wN-1"; any other name as it is. */
void iom_f_worker_name(struct iom_buf *b, const char *w);
/* Appends the time stamp field "YYYY-MM-DD hh:mm:ss:mmm" (local time). */
void iom_f_timestamp(struct iom_buf *b, uint64_t wall_ns);
/* Adds one target's value to a shared value. */
void iom_common_add(struct iom_common *c, uint64_t v);
/* Appends the 78 fields after a row's type and name, and the line end. */
void iom_fields(struct iom_buf *b, const struct iom_fig *g, const struct iof_stats *s, uint64_t ns,
                const struct mgr_metrics *m);
/* Appends the PROCESSOR line that follows a MANAGER row with CPU figures
 * (g->busy, user, sys); b->nf is restarted. */
void iom_processor(struct iom_buf *b, const struct iom_fig *g);
/* The PROCESSOR line of one CPU ("CPU <id>", as Iometer names them): its
 * five CPU figures; Interrupts per Second empty (Linux counts interrupts
 * per CPU only in /proc/interrupts, which the agent does not read). */
void iom_processor_cpu(struct iom_buf *b, const struct proto_cpu_one *c);
/* Writes "YYYY-MM-DD hh:mm:ss:mmm" and the line end (a 'Time Stamp's line). */
void iom_timestamp(FILE *f, uint64_t wall_ns);
/* Writes the time stamp and a comma: the first field of an instantaneous row. */
void iom_timestamp_field(FILE *f, uint64_t wall_ns);
/* Writes a name as iom_f_str() does. */
void iom_fputname(FILE *f, const char *s);
/* The run's head: 'Test Type,Test Description ... 'Version ... 'Time Stamp. */
void iom_run_head(FILE *f, const struct iof_plan *p, uint64_t wall_ns);
/* A test's access specification block; sp NULL: only its name. */
void iom_spec_block(FILE *f, const struct iof_spec *sp, const char *name);

#endif

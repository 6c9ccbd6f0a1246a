/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_fio.h - what the fio job file reader
 * (proto/import_fio_parse.c: lines, sections, options, units, ${VAR} and
 * arithmetic) hands its mapper (proto/import_fio.c: jobs as plan JSON).
 * Not for other modules: they use proto_import_fio() of proto/import.h. */
#ifndef IOF_PROTO_IMPORT_FIO_H
#define IOF_PROTO_IMPORT_FIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"

#define FIO_MAX_SPLIT 64 /* bssplit entries (a spec's lines) */
#define FIO_MAX_FILES 64 /* colon-separated filenames */
#define FIO_STR 1024     /* bytes kept of a string value */

struct fio_kv {
    const char *key; /* NUL-terminated, inside the line copy */
    const char *val; /* "" for a bare flag */
    unsigned line;
    bool reported; /* a message was given for it (global options once) */
};

struct fio_section {
    char name[65];
    unsigned line;
    bool global;
    size_t first, count; /* its options in the kv array */
};

struct fio_split {
    uint64_t size;
    unsigned pct;
};

struct fio_job {
    char name[65];
    unsigned line;
    int rw; /* FIO_RW_* */
    unsigned rw_line;
    int read_pct; /* from rwmixread/rwmixwrite; -1 unset */
    int random_pct;
    uint64_t bs;
    struct fio_split split[FIO_MAX_SPLIT];
    size_t nsplit;
    uint64_t align;
    unsigned iodepth, numjobs;
    char filename[FIO_STR], directory[FIO_STR];
    unsigned filename_line;
    uint64_t size, filesize, offset, io_size;
    char size_pct[8], offset_pct[8], offset_inc[32];
    uint64_t runtime_ns, ramp_ns;
    bool time_based, stonewall;
    char rate[64];
    char rate_dir[2][96]; /* rate/rate_iops R,W as given ("" none) */
    bool rate_iops;
    unsigned rate_line;
    char dist[128];
    unsigned dist_line;
    char engine[16];
    bool engine_sync;
    bool direct, poisson;
    unsigned direct_line; /* 0: fio's default direct=0 */
    const char *pattern;
    uint64_t thinktime_ns;
    unsigned thinktime_blocks, thinktime_line;
    bool exitall;
    unsigned exitall_line;
    bool norandommap; /* fio's random map is off */
    bool random_once; /* fio's random map is on: the plan's random_map once_per_pass */
    unsigned rw_random_line;
    char startdelay[32];
    unsigned startdelay_line;
    unsigned loops;
    uint64_t number_ios;
    unsigned number_ios_line;
    const char *verify; /* the plan's checksum, NULL none */
    unsigned verify_line;
    bool verify_stop, do_verify;
    int dedupe_pct, compress_pct; /* -1 unset */
    unsigned data_line;
};

enum { FIO_RW_READ, FIO_RW_WRITE, FIO_RW_RANDREAD, FIO_RW_RANDWRITE, FIO_RW_RW, FIO_RW_RANDRW };

struct fio_ctx {
    const char *name;
    struct iof_buf *msgs;
    bool failed;
    bool approximate;     /* IOF_IMPORT_APPROXIMATE */
    struct iof_buf notes; /* the plan's "notes": JSON strings, comma-separated */
    size_t nnotes;
    uint64_t run_dur_ns, run_ramp_ns; /* every job's runtime/ramp_time: the run's (0: none) */
    struct fio_kv *kv;
    size_t nkv, capkv;
    struct fio_section *sec;
    size_t nsec, capsec;
    char **owned; /* lines rewritten by ${VAR} expansion or arithmetic */
    size_t nowned, capowned;
};

/* One message for line `line` of the job file; an "error:" fails the
 * import, a note is also kept in the plan's notes. */
void proto_fio_msg(struct fio_ctx *c, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A value as printed in a message: bounded, control characters replaced. */
const char *proto_fio_show(const char *v, char *buf, size_t cap);
/* fio's size, time (in unit_ns unless suffixed) and unsigned number:
 * 0, or -EINVAL/-ERANGE. */
int proto_fio_size(const char *s, uint64_t *out);
int proto_fio_time(const char *s, uint64_t unit_ns, uint64_t *out_ns);
int proto_fio_uint(const char *s, unsigned max, unsigned *out);
/* An option that does not change the load (reporting, logging). */
bool proto_fio_is_ignored(const char *k);
/* Splits `text` into c's sections and options (messages for garbage);
 * 0 or -ENOMEM. */
int proto_fio_parse(struct fio_ctx *c, char *text);

static inline void fio_copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src);
}

#endif

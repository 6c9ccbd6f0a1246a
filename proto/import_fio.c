/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_fio.c - `iofleet import JOB.fio`: a fio job file as plan JSON.
 *
 * fio's model: [global] sections set defaults for the jobs after them; each
 * other section is a job, cloned numjobs times; a job with stonewall (or
 * wait_for_previous) waits for every job before it. iofleet's model: tests
 * run in sequence, every worker group runs the test's spec. So a stonewall
 * starts a new test; the jobs between stonewalls run concurrently and become
 * worker groups. A file maps when every test has the same worker groups (one
 * job per test on the same file, as fio's "four corners" files do); jobs that
 * run at once with different workloads get per-group specs. Steps with other
 * groups are refused with the reason.
 *
 * Units as fio reads them with its default kb_base=1024: sizes take k/m/g/t/p
 * with an optional trailing b, powers of 1024 ("4k", "4kb"); "kib" etc. are
 * powers of 1000 (fio's compatibility inversion); times are seconds unless
 * suffixed (us, ms, s, m, h, d); thinktime is in microseconds. Defaults are
 * fio's: rw=read, bs=4k, iodepth=1, numjobs=1, rwmixread=50, direct=0,
 * ioengine psync. */
#include "proto/import.h"
#include "proto/import_fio.h"
#include "proto/plan.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/engine_facts.h"

static void fio_job_defaults(struct fio_job *j)
{
    memset(j, 0, sizeof(*j));
    j->rw = FIO_RW_READ;
    j->read_pct = -1;
    j->random_pct = 100;
    j->bs = 4096;
    j->iodepth = 1;
    j->numjobs = 1;
    fio_copy(j->engine, sizeof(j->engine), "sync");
    j->engine_sync = true;
    j->pattern = "pseudo";
    j->thinktime_blocks = 1;
    j->loops = 1;
    j->do_verify = true;
    j->dedupe_pct = j->compress_pct = -1;
}

/* bs=R[,W[,T]]: the size the job's directions use; false when they differ. */
static bool fio_bs(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv)
{
    char tmp[128], show[96];
    uint64_t rd = 4096, wr = 4096;
    char *comma, *second;

    fio_copy(tmp, sizeof(tmp), kv->val);
    comma = strchr(tmp, ',');
    second = comma ? comma + 1 : NULL;
    if (comma) {
        *comma = 0;
        if ((comma = strchr(second, ',')))
            *comma = 0;
    }
    if ((tmp[0] && proto_fio_size(tmp, &rd)) ||
        (second && *second && proto_fio_size(second, &wr))) {
        proto_fio_msg(c, kv->line, "error: cannot map %s=%s: not a size", kv->key,
                      proto_fio_show(kv->val, show, sizeof(show)));
        return false;
    }
    if (!second)
        wr = rd;
    j->bs = (j->rw == FIO_RW_WRITE || j->rw == FIO_RW_RANDWRITE) ? wr : rd;
    if (rd != wr && (j->rw == FIO_RW_RW || j->rw == FIO_RW_RANDRW)) {
        proto_fio_msg(c, kv->line,
                      "error: cannot map %s=%s: reads and writes of different sizes in one mix "
                      "(a line has one size and a read %%; use bssplit with one size per line)",
                      kv->key, proto_fio_show(kv->val, show, sizeof(show)));
        return false;
    }
    j->nsplit = 0;
    return true;
}

/* bssplit=SIZE/PCT:SIZE/PCT... (a PCT left empty shares what is left). */
static bool fio_bssplit(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv)
{
    char tmp[FIO_STR], show[96];
    char *save = NULL, *tok, *comma;
    unsigned total = 0, nempty = 0;
    bool empty[FIO_MAX_SPLIT] = {false};

    fio_copy(tmp, sizeof(tmp), kv->val);
    if ((comma = strchr(tmp, ','))) {
        *comma = 0;
        if (comma[1] && strcmp(tmp, comma + 1)) {
            proto_fio_msg(c, kv->line,
                          "error: cannot map bssplit=%s: different splits for reads and writes",
                          proto_fio_show(kv->val, show, sizeof(show)));
            return false;
        }
    }
    j->nsplit = 0;
    for (tok = strtok_r(tmp, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
        char *slash = strchr(tok, '/');
        struct fio_split *s;

        if (j->nsplit >= FIO_MAX_SPLIT) {
            proto_fio_msg(c, kv->line, "error: cannot map bssplit: more than %d sizes",
                          FIO_MAX_SPLIT);
            return false;
        }
        s = &j->split[j->nsplit];
        if (slash)
            *slash = 0;
        if (proto_fio_size(tok, &s->size) || !s->size ||
            (slash && slash[1] && proto_fio_uint(slash + 1, 100, &s->pct))) {
            proto_fio_msg(c, kv->line, "error: cannot map bssplit=%s: expected SIZE/PERCENT:...",
                          proto_fio_show(kv->val, show, sizeof(show)));
            return false;
        }
        if (!slash || !slash[1]) {
            s->pct = 0;
            empty[j->nsplit] = true;
            nempty++;
        }
        total += s->pct;
        j->nsplit++;
    }
    if (!j->nsplit || total > 100 || (!nempty && total != 100)) {
        proto_fio_msg(c, kv->line, "error: cannot map bssplit=%s: the percentages must sum to 100",
                      proto_fio_show(kv->val, show, sizeof(show)));
        return false;
    }
    for (size_t i = 0, seen = 0; i < j->nsplit && nempty; i++)
        if (empty[i]) {
            unsigned left = 100 - total, share = left / nempty;
            j->split[i].pct = ++seen == nempty ? share + left % nempty : share;
        }
    return true;
}

static bool fio_rw(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv)
{
    static const char *const names[] = {"read", "write", "randread", "randwrite", "rw", "randrw"};
    char tmp[64], show[96], *colon;

    fio_copy(tmp, sizeof(tmp), kv->val);
    if ((colon = strchr(tmp, ':'))) {
        *colon = 0;
        /* fio: a sequential job skips that much after each I/O (holes), a
         * random one takes that many sequential I/Os per random offset. */
        if (strcmp(colon + 1, "0")) {
            proto_fio_msg(c, kv->line,
                          "error: cannot map the ':%s' of %s=%s: %s; the plan has no such pattern",
                          colon + 1, kv->key, proto_fio_show(kv->val, show, sizeof(show)),
                          tmp[0] == 'r' && tmp[1] == 'a'
                              ? "runs of sequential I/Os between random offsets"
                              : "sequential I/O with holes");
            return false;
        }
    }
    if (!strcmp(tmp, "readwrite"))
        fio_copy(tmp, sizeof(tmp), "rw");
    for (int i = 0; i < 6; i++)
        if (!strcmp(tmp, names[i])) {
            j->rw = i;
            j->rw_line = kv->line;
            return true;
        }
    proto_fio_msg(c, kv->line,
                  "error: cannot map %s=%s: iofleet issues reads and writes only (read, "
                  "write, randread, randwrite, rw, randrw)",
                  kv->key, proto_fio_show(kv->val, show, sizeof(show)));
    return false;
}

/* Whether iofleet's engine `name` always opens its targets with O_DIRECT. */
static bool fio_engine_direct(const char *name)
{
    const struct iof_engine_facts *f = iof_engine_facts_find(name);
    return f && f->direct;
}

static bool fio_engine(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv, bool was)
{
    static const char *const sync_engines[] = {"sync", "psync", "vsync", "pvsync", "pvsync2"};
    const struct iof_engine_facts *f;
    char show[96];

    j->engine_sync = false;
    /* fio's engines iofleet has (windowsaio is iofleet's windows) but sync
     * (fio's sync family is below). */
    f = iof_engine_facts_find_fio(kv->val);
    if (f && f != &iof_engine_facts[IOF_ENGINE_SYNC]) {
        fio_copy(j->engine, sizeof(j->engine), f->name);
        return true;
    }
    for (size_t i = 0; i < sizeof(sync_engines) / sizeof(sync_engines[0]); i++)
        if (!strcmp(kv->val, sync_engines[i])) {
            fio_copy(j->engine, sizeof(j->engine), "sync");
            j->engine_sync = true;
            return true;
        }
    /* net, rdma, http, nfs, cpuio, exec, external:..., mmap, posixaio...: a
     * different load (or none on the storage) as local files would change it. */
    if (!was)
        proto_fio_msg(
            c, kv->line,
            "error: cannot map ioengine=%s: iofleet's engines are libaio, io_uring, null, "
            "windowsaio (iofleet's windows) and sync (fio's sync, psync, vsync, "
            "pvsync, pvsync2)",
            proto_fio_show(kv->val, show, sizeof(show)));
    c->failed = true;
    return false;
}

/* Applies one option to the job; false on an essential failure. */
static bool fio_apply(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv)
{
    const char *k = kv->key, *v = kv->val;
    char show[96];
    unsigned u;
    uint64_t sz;
    bool was = kv->reported;

    kv->reported = true;
#define BAD(why)                                                                                   \
    do {                                                                                           \
        proto_fio_msg(c, kv->line, "error: cannot map %s=%s: %s", k,                               \
                      proto_fio_show(v, show, sizeof(show)), why);                                 \
        return false;                                                                              \
    } while (0)
    if (!strcmp(k, "rw") || !strcmp(k, "readwrite"))
        return fio_rw(c, j, kv);
    if (!strcmp(k, "norandommap"))
        j->norandommap = !(v[0] == '0' && !v[1]);
    if (!strcmp(k, "rwmixread") || !strcmp(k, "rwmixwrite")) {
        if (proto_fio_uint(v, 100, &u))
            BAD("expected 0..100");
        j->read_pct = k[5] == 'r' ? (int)u : 100 - (int)u;
        return true;
    }
    if (!strcmp(k, "percentage_random")) {
        if (proto_fio_uint(v, 100, &u))
            BAD("expected 0..100 (one value for reads and writes)");
        j->random_pct = (int)u;
        return true;
    }
    if (!strcmp(k, "bs") || !strcmp(k, "blocksize") || !strcmp(k, "bssplit"))
        return true; /* after rw, by proto_import_fio() */
    if (!strcmp(k, "blockalign") || !strcmp(k, "ba")) {
        if (proto_fio_size(v, &sz) || strchr(v, ','))
            BAD("expected one size");
        j->align = sz;
        return true;
    }
    if (!strcmp(k, "iodepth") || !strcmp(k, "numjobs")) {
        if (proto_fio_uint(v, 1u << 20, &u) || !u)
            BAD("expected a whole number >= 1");
        *(k[0] == 'i' ? &j->iodepth : &j->numjobs) = u;
        return true;
    }
    if (!strcmp(k, "filename")) {
        fio_copy(j->filename, sizeof(j->filename), v);
        j->filename_line = kv->line;
        return true;
    }
    if (!strcmp(k, "directory")) {
        fio_copy(j->directory, sizeof(j->directory), v);
        return true;
    }
    if (!strcmp(k, "size") || !strcmp(k, "filesize") || !strcmp(k, "io_size") ||
        !strcmp(k, "io_limit") || !strcmp(k, "offset")) {
        size_t n = strlen(v);
        if (n && v[n - 1] == '%' && (!strcmp(k, "size") || !strcmp(k, "offset"))) {
            char num[8];
            fio_copy(num, sizeof(num), v);
            num[n < sizeof(num) ? n - 1 : 0] = 0;
            if (n > 4 || proto_fio_uint(num, 100, &u))
                BAD("expected a percentage 0..100");
            fio_copy(k[0] == 's' ? j->size_pct : j->offset_pct, sizeof(j->size_pct), v);
            return true;
        }
        if (n > 1 && isdigit((unsigned char)v[n - 2]) && tolower((unsigned char)v[n - 1]) == 'z')
            BAD("zones (a zoned device's zone size) have no size iofleet knows");
        if (proto_fio_size(v, &sz))
            BAD("not a size (a range is not mapped)");
        if (!strcmp(k, "size"))
            j->size = sz;
        else if (!strcmp(k, "filesize"))
            j->filesize = sz;
        else if (!strcmp(k, "offset"))
            j->offset = sz;
        else
            j->io_size = sz;
        return true;
    }
    if (!strcmp(k, "offset_increment")) {
        size_t n = strlen(v);
        if (n && v[n - 1] == '%') {
            char num[8];
            fio_copy(num, sizeof(num), v);
            num[n < sizeof(num) ? n - 1 : 0] = 0;
            if (n > 4 || proto_fio_uint(num, 100, &u))
                BAD("expected a size or a percentage");
            snprintf(j->offset_inc, sizeof(j->offset_inc), "%u%%", u);
        } else {
            if (proto_fio_size(v, &sz))
                BAD("expected a size or a percentage");
            snprintf(j->offset_inc, sizeof(j->offset_inc), "%" PRIu64, sz);
        }
        return true;
    }
    if (!strcmp(k, "runtime") || !strcmp(k, "timeout") || !strcmp(k, "ramp_time")) {
        if (proto_fio_time(v, 1000000000ull,
                           k[0] == 'r' && k[1] == 'a' ? &j->ramp_ns : &j->runtime_ns))
            BAD("not a time");
        return true;
    }
    if (!strcmp(k, "time_based")) {
        j->time_based = !(v[0] == '0' && !v[1]);
        return true;
    }
    if (!strcmp(k, "stonewall") || !strcmp(k, "wait_for_previous")) {
        j->stonewall = !(v[0] == '0' && !v[1]);
        return true;
    }
    if (!strcmp(k, "rate_iops") || !strcmp(k, "rate")) {
        /* R[,W[,T]]: fio caps each direction by its own value; one value
         * caps both; an empty one leaves that direction free. Which counts
         * is decided with rw (fio_rate()). */
        char tmp[96], *parts[3] = {tmp, NULL, NULL};
        bool iops = k[4] == '_';
        fio_copy(tmp, sizeof(tmp), v);
        for (int i = 1; i < 3 && parts[i - 1]; i++)
            if ((parts[i] = strchr(parts[i - 1], ',')))
                *parts[i]++ = 0;
        for (int i = 0; i < 2; i++) {
            const char *d = i == 1 && !parts[1] ? parts[0] : parts[i] ? parts[i] : "";
            if (*d &&
                (iops ? proto_fio_uint(d, 10000000, &u) || !u : proto_fio_size(d, &sz) || !sz))
                BAD(iops ? "expected whole numbers of I/Os per second"
                         : "expected sizes (bytes "
                           "per second)");
            fio_copy(j->rate_dir[i], sizeof(j->rate_dir[i]), d);
        }
        j->rate_iops = iops;
        j->rate_line = kv->line;
        return true;
    }
    if (!strcmp(k, "rate_process")) {
        if (strcmp(v, "linear") && strcmp(v, "poisson"))
            BAD("expected linear or poisson");
        j->poisson = v[0] == 'p';
        return true;
    }
    if (!strcmp(k, "random_distribution")) {
        size_t n = strlen(v);
        j->dist_line = kv->line;
        if (!strcmp(v, "random"))
            fio_copy(j->dist, sizeof(j->dist), "uniform");
        else if (n + 4 >= sizeof(j->dist))
            BAD("too long");
        else
            fio_copy(j->dist, sizeof(j->dist), v);
        /* zoned: a last zone without a size takes the rest of the range */
        if (!strncmp(v, "zoned:", 6) && n && v[n - 1] == '/') {
            unsigned sum = 0, a, r;
            for (const char *q = v + 6; *q;) {
                int used = 0;
                if (sscanf(q, "%u/%u%n", &a, &r, &used) == 2 && used) {
                    sum += r;
                    q += used;
                } else {
                    q += strcspn(q, ":");
                }
                if (*q == ':')
                    q++;
            }
            if (sum >= 100)
                BAD("the zones before the last take the whole range");
            snprintf(j->dist + n, sizeof(j->dist) - n, "%u", 100 - sum);
        }
        return true;
    }
    if (!strcmp(k, "ioengine"))
        return fio_engine(c, j, kv, was);
    if (!strcmp(k, "direct") || !strcmp(k, "buffered")) {
        bool on = !(v[0] == '0' && !v[1]);
        j->direct = k[0] == 'd' ? on : !on;
        j->direct_line = kv->line;
        return true;
    }
    if (!strcmp(k, "thinktime")) {
        if (proto_fio_time(v, 1000, &j->thinktime_ns))
            BAD("not a time");
        j->thinktime_line = kv->line;
        if (j->thinktime_ns % 1000000 && !c->approximate)
            BAD("a plan's delay is in whole milliseconds (import with --approximate to round it "
                "up)");
        if (j->thinktime_ns % 1000000 && !was)
            proto_fio_msg(c, kv->line,
                          "note: thinktime=%s: rounded up to %" PRIu64 "ms (a plan's delay is in "
                          "milliseconds; --approximate)",
                          proto_fio_show(v, show, sizeof(show)),
                          (uint64_t)((j->thinktime_ns + 999999) / 1000000));
        return true;
    }
    if (!strcmp(k, "thinktime_blocks")) {
        if (proto_fio_uint(v, 1u << 20, &u) || !u)
            BAD("expected a whole number >= 1");
        j->thinktime_blocks = u;
        return true;
    }
    if (!strcmp(k, "refill_buffers")) {
        j->pattern = "random";
        return true;
    }
    if (!strcmp(k, "zero_buffers") || !strcmp(k, "scramble_buffers")) {
        if (k[0] == 'z' && !c->approximate) {
            proto_fio_msg(
                c, kv->line,
                "error: cannot map zero_buffers: iofleet writes no all-zero data (import with "
                "--approximate to write one repeated byte pattern)");
            return false;
        }
        if (k[0] == 'z' && !was)
            proto_fio_msg(
                c, kv->line,
                "note: zero_buffers: iofleet writes no all-zero data; mapped as pattern repeat "
                "(one repeated byte pattern; --approximate)");
        if (k[0] == 'z')
            j->pattern = "repeat";
        else if (!was)
            proto_fio_msg(c, kv->line, "ignored: scramble_buffers (iofleet's pattern decides)");
        return true;
    }
    if (!strcmp(k, "trim") || !strncmp(k, "trim_", 5))
        BAD("iofleet issues reads and writes only");
    if (!strcmp(k, "exitall")) {
        j->exitall = !(v[0] == '0' && !v[1]);
        j->exitall_line = kv->line;
        return true;
    }
    if (!strcmp(k, "startdelay")) {
        uint64_t ns;
        if (strchr(v, '-'))
            BAD("a random start delay in a range: the plan starts every worker group together");
        if (proto_fio_time(v, 1000000000ull, &ns))
            BAD("not a time");
        snprintf(j->startdelay, sizeof(j->startdelay), "%" PRIu64, ns);
        j->startdelay_line = kv->line;
        return true;
    }
    if (!strcmp(k, "loops")) {
        if (proto_fio_uint(v, 1u << 20, &u) || !u)
            BAD("expected a whole number >= 1");
        j->loops = u;
        return true;
    }
    if (!strcmp(k, "number_ios")) {
        if (proto_fio_size(v, &sz))
            BAD("expected a whole number");
        j->number_ios = sz;
        j->number_ios_line = kv->line;
        return true;
    }
    if (!strcmp(k, "wait_for"))
        BAD("a job waiting for one named job while others run has no plan equivalent (the plan's "
            "tests wait for every job before them: stonewall)");
    if (!strcmp(k, "verify")) {
        j->verify_line = kv->line;
        if (!strcmp(v, "0") || !strcmp(v, "null")) {
            j->verify = NULL;
            return true;
        }
        if (!strcmp(v, "crc32c") || !strcmp(v, "crc32c-intel")) {
            j->verify = "crc32c";
            return true;
        }
        if (!c->approximate)
            BAD("the plan verifies with crc32c or xxh64 (import with --approximate to check with "
                "crc32c instead)");
        if (!was)
            proto_fio_msg(c, kv->line, "note: verify=%s: checked with crc32c (--approximate)",
                          proto_fio_show(v, show, sizeof(show)));
        j->verify = "crc32c";
        return true;
    }
    if (!strcmp(k, "do_verify")) {
        j->do_verify = !(v[0] == '0' && !v[1]);
        return true;
    }
    if (!strcmp(k, "verify_fatal")) {
        j->verify_stop = !(v[0] == '0' && !v[1]);
        return true;
    }
    if (!strcmp(k, "dedupe_percentage") || !strcmp(k, "buffer_compress_percentage")) {
        if (proto_fio_uint(v, 100, &u))
            BAD("expected 0..100");
        *(k[0] == 'd' ? &j->dedupe_pct : &j->compress_pct) = (int)u;
        j->data_line = kv->line;
        return true;
    }
    if (proto_fio_is_ignored(k)) {
        if (!was)
            proto_fio_msg(c, kv->line, "ignored: %s (does not change the load)", k);
        return true;
    }
    /* Anything else could change the load: refused by name. */
    proto_fio_msg(c, kv->line, "error: cannot map %s%s%s: no such setting in iofleet's plan", k,
                  v[0] ? "=" : "", proto_fio_show(v, show, sizeof(show)));
    return false;
#undef BAD
}

static void fio_dur_str(uint64_t ns, char *buf, size_t cap)
{
    if (ns % 1000000000ull == 0)
        snprintf(buf, cap, "%" PRIu64 "s", (uint64_t)(ns / 1000000000u));
    else
        snprintf(buf, cap, "%" PRIu64 "ms", (uint64_t)((ns + 999999) / 1000000u));
}

/* The job's spec (lines and its own end) as JSON; false when it has no end. */
static bool fio_spec_json(struct fio_ctx *c, const struct fio_job *j, struct iof_buf *b)
{
    char s[32];
    int read = j->rw == FIO_RW_READ || j->rw == FIO_RW_RANDREAD     ? 100
               : j->rw == FIO_RW_WRITE || j->rw == FIO_RW_RANDWRITE ? 0
               : j->read_pct >= 0                                   ? j->read_pct
                                                                    : 50;
    bool rnd = j->rw == FIO_RW_RANDREAD || j->rw == FIO_RW_RANDWRITE || j->rw == FIO_RW_RANDRW;
    int random = rnd ? j->random_pct : 0;
    struct fio_split one = {j->bs, 100};
    const struct fio_split *sp = j->nsplit ? j->split : &one;
    size_t n = j->nsplit ? j->nsplit : 1;
    uint64_t limit = 0, align = j->align;

    /* fio aligns the offsets of every bssplit size to the smallest one
     * (blockalign's default is the minimum block size). */
    for (size_t i = 0; !j->align && j->nsplit && i < n; i++)
        if (!i || sp[i].size < align)
            align = sp[i].size;
    iof_buf_addstr(b, "\"lines\": [");
    for (size_t i = 0; i < n; i++) {
        proto_plan_format_size(sp[i].size, s, sizeof(s));
        iof_buf_printf(b, "%s{\"size\": \"%s\"", i ? ", " : "", s);
        if (n > 1)
            iof_buf_printf(b, ", \"share\": %u", sp[i].pct);
        iof_buf_printf(b, ", \"read\": %d, \"random\": %d", read, random);
        if (align) {
            proto_plan_format_size(align, s, sizeof(s));
            iof_buf_printf(b, ", \"align\": \"%s\"", s);
        }
        if (j->thinktime_ns) {
            fio_dur_str(j->thinktime_ns, s, sizeof(s));
            iof_buf_printf(b, ", \"delay\": \"%s\", \"burst\": %u", s, j->thinktime_blocks);
        }
        if (j->dist[0] && random) {
            iof_buf_addstr(b, ", \"distribution\": ");
            iof_json_escape(b, j->dist, IOF_JSON_TEXT);
        }
        if (j->random_once && random)
            iof_buf_addstr(b, ", \"random_map\": \"once_per_pass\"");
        iof_buf_addc(b, '}');
    }
    iof_buf_addc(b, ']');
    if (j->ramp_ns && !c->run_ramp_ns) {
        fio_dur_str(j->ramp_ns, s, sizeof(s));
        iof_buf_printf(b, ", \"ramp\": \"%s\"", s);
    }
    if (j->runtime_ns && !c->run_dur_ns) {
        fio_dur_str(j->runtime_ns, s, sizeof(s));
        iof_buf_printf(b, ", \"duration\": \"%s\"", s);
    }
    if (!j->time_based) {
        /* fio stops a job after io_size (default size, capped at the files' size). */
        uint64_t files = j->filesize;
        limit = j->io_size ? j->io_size : j->size;
        if (!j->io_size && files && (!limit || limit > files))
            limit = files;
        /* loops repeats the job that many times */
        if (limit && j->loops > 1)
            limit = limit > UINT64_MAX / j->loops ? UINT64_MAX : limit * j->loops;
    }
    if (j->number_ios) {
        /* fio stops after that many I/Os, if nothing stopped it before */
        if (j->nsplit) {
            proto_fio_msg(
                c, j->number_ios_line,
                "error: cannot map number_ios with bssplit: a number of I/Os of mixed sizes is "
                "no amount of bytes (the plan's io_limit)");
            return false;
        }
        uint64_t bytes = j->number_ios > UINT64_MAX / j->bs ? UINT64_MAX : j->number_ios * j->bs;
        if (!limit || bytes < limit)
            limit = bytes;
    }
    {
        if (limit) {
            proto_plan_format_size(limit, s, sizeof(s));
            iof_buf_printf(b, ", \"io_limit\": \"%s\"", s);
        }
    }
    if (!j->runtime_ns && !limit) {
        proto_fio_msg(c, j->line,
                      "error: job '%s' has no end iofleet knows (set runtime with time_based, or "
                      "size/io_size)",
                      j->name);
        return false;
    }
    return true;
}

/* One target per colon-separated filename ("\:" keeps a colon). */
static bool fio_targets_json(struct fio_ctx *c, const struct fio_job *j, struct iof_buf *b)
{
    char files[FIO_MAX_FILES][FIO_STR / 4];
    size_t nf = 0, k = 0;
    char s[32], s2[32];
    unsigned line = j->filename_line ? j->filename_line : j->line;

    if (!j->filename[0]) {
        snprintf(files[0], sizeof(files[0]), "%s.0.0", j->name);
        nf = 1;
        if (j->numjobs > 1 && !c->approximate) {
            proto_fio_msg(
                c, j->line,
                "error: job '%s' has no filename: fio gives each of its %u jobs a file of its "
                "own, a plan's workers share their targets (set filename, or import with "
                "--approximate to share one test file)",
                j->name, j->numjobs);
            return false;
        }
        if (j->numjobs > 1)
            proto_fio_msg(
                c, j->line,
                "note: job '%s' has no filename: fio gives each of its %u jobs a file of its "
                "own; the plan's %u workers share the test file '%s' (--approximate)",
                j->name, j->numjobs, j->numjobs, files[0]);
    } else {
        for (const char *p = j->filename;; p++) {
            if (*p == '\\' && p[1] == ':') {
                p++;
            } else if (*p == ':' || !*p) {
                if (k) {
                    files[nf][k] = 0;
                    if (++nf >= FIO_MAX_FILES) {
                        proto_fio_msg(c, line, "error: more than %d filenames", FIO_MAX_FILES - 1);
                        return false;
                    }
                }
                k = 0;
                if (!*p)
                    break;
                continue;
            }
            if (k + 1 >= sizeof(files[0])) {
                proto_fio_msg(c, line, "error: a filename longer than %zu bytes",
                              sizeof(files[0]) - 1);
                return false;
            }
            files[nf][k++] = *p;
        }
    }
    if (!nf) {
        proto_fio_msg(c, line, "error: empty filename");
        return false;
    }
    iof_buf_addstr(b, "\"targets\": [");
    for (size_t i = 0; i < nf; i++) {
        char path[FIO_STR + FIO_STR / 4 + 2];
        /* fio: a file's region is [offset, offset + size per file) and the
         * file is extended to its end; with filesize, the file is that size
         * and the region runs from the offset to its end. */
        uint64_t region = j->filesize ? 0 : j->size / nf;
        uint64_t fsize = j->filesize                                  ? j->filesize
                         : region && j->offset <= UINT64_MAX - region ? j->offset + region
                                                                      : 0;
        const char *base;

        if (j->directory[0] && files[i][0] != '/')
            snprintf(path, sizeof(path), "%s/%.255s", j->directory, files[i]);
        else
            snprintf(path, sizeof(path), "%.255s", files[i]);
        iof_buf_addstr(b, i ? ", {\"path\": " : "{\"path\": ");
        if (!strncmp(path, "/dev/", 5)) {
            iof_json_escape(b, path, IOF_JSON_TEXT);
            if (j->offset || j->offset_pct[0] || j->size || j->size_pct[0]) {
                iof_buf_addstr(b, ", \"range\": {");
                if (j->offset_pct[0])
                    iof_buf_printf(b, "\"offset\": \"%s\"", j->offset_pct);
                else {
                    proto_plan_format_size(j->offset, s, sizeof(s));
                    iof_buf_printf(b, "\"offset\": \"%s\"", s);
                }
                if (j->size_pct[0])
                    iof_buf_printf(b, ", \"size\": \"%s\"", j->size_pct);
                else if (j->size) {
                    proto_plan_format_size(j->size / nf, s, sizeof(s));
                    iof_buf_printf(b, ", \"size\": \"%s\"", s);
                }
                iof_buf_addc(b, '}');
            }
            iof_buf_addc(b, '}');
            continue;
        }
        if (j->size_pct[0] || j->offset_pct[0]) {
            proto_fio_msg(
                c, line,
                "error: cannot map a size or offset in %% for the test file '%s' (only for a "
                "device)",
                path);
            return false;
        }
        if (!fsize) {
            proto_fio_msg(c, line, "error: test file '%s' has no size (set size or filesize)",
                          path);
            return false;
        }
        base = path;
        if (path[0] == '/') {
            base = strrchr(path, '/') + 1;
            if (!*base) {
                proto_fio_msg(c, line, "error: cannot map filename '%s': a directory", path);
                return false;
            }
            proto_fio_msg(c, line,
                          "note: %s is a test file '%s' in the agent's workdir (dynamo --workdir, "
                          "iofleet run --workdir, puts it on the same filesystem)",
                          path, base);
        }
        iof_json_escape(b, base, IOF_JSON_TEXT);
        proto_plan_format_size(fsize, s, sizeof(s));
        iof_buf_printf(b, ", \"size\": \"%s\"", s);
        if (j->offset) {
            if (j->offset >= fsize) {
                proto_fio_msg(c, line, "error: offset is past the end of the test file '%s'", base);
                return false;
            }
            proto_plan_format_size(j->offset, s, sizeof(s));
            proto_plan_format_size(region ? region : fsize - j->offset, s2, sizeof(s2));
            iof_buf_printf(b, ", \"range\": {\"offset\": \"%s\", \"size\": \"%s\"}", s, s2);
        }
        iof_buf_addc(b, '}');
    }
    iof_buf_addc(b, ']');
    return true;
}

/* fio's random map: a random job with the uniform distribution and the
 * default alignment touches every block once per pass unless norandommap
 * (fio's init.c turns the map off for other distributions and blockalign):
 * the plan's random_map "once_per_pass" for one block size. fio's map of a
 * bssplit job counts blocks of the smallest size, which the plan's per-line
 * passes do not: refused, or with --approximate drawn with replacement. */
static bool fio_random_map(struct fio_ctx *c, struct fio_job *j)
{
    bool rnd = j->rw == FIO_RW_RANDREAD || j->rw == FIO_RW_RANDWRITE || j->rw == FIO_RW_RANDRW;
    uint64_t min = j->bs;

    for (size_t i = 0; i < j->nsplit; i++)
        if (!i || j->split[i].size < min)
            min = j->split[i].size;
    if (!rnd || !j->random_pct || j->norandommap || (j->dist[0] && strcmp(j->dist, "uniform")) ||
        (j->align && j->align != min) || !strcmp(j->engine, "null"))
        return true;
    if (!j->nsplit) {
        j->random_once = true;
        return true;
    }
    if (!c->approximate) {
        proto_fio_msg(
            c, j->rw_line ? j->rw_line : j->line,
            "error: job '%s' is random with bssplit and without norandommap: fio's random "
            "map touches every block of the smallest size once per pass, which the plan's "
            "random_map cannot for several sizes (add norandommap, or import with "
            "--approximate)",
            j->name);
        return false;
    }
    proto_fio_msg(
        c, j->rw_line ? j->rw_line : j->line,
        "note: job '%s' is random with bssplit and without norandommap: fio touches every "
        "block once per pass, the plan draws offsets with replacement (--approximate)",
        j->name);
    return true;
}

/* fio keeps one sequential position per direction and job (last_pos[ddir]):
 * in a mixed job a sequential read follows the job's last read, a sequential
 * write its last write. A plan's worker has one position per target, which
 * reads and writes both move. So a job that mixes reads and writes and has
 * sequential I/O (rw=rw, randrw with percentage_random below 100) is
 * refused, or with --approximate run with the one position, noted. */
static bool fio_mixed_sequential(struct fio_ctx *c, const struct fio_job *j)
{
    bool mixed = j->rw == FIO_RW_RW || j->rw == FIO_RW_RANDRW;
    int read = j->read_pct >= 0 ? j->read_pct : 50;
    int random = j->rw == FIO_RW_RANDRW ? j->random_pct : 0;
    unsigned line = j->rw_line ? j->rw_line : j->line;
    char what[64];

    if (!mixed || read == 0 || read == 100 || random == 100)
        return true;
    if (j->rw == FIO_RW_RW)
        snprintf(what, sizeof(what), "rw=rw");
    else
        snprintf(what, sizeof(what), "randrw with percentage_random=%d", random);
    if (!c->approximate) {
        proto_fio_msg(c, line,
                      "error: cannot map %s of job '%s': fio keeps a sequential position per "
                      "direction (a read continues after the job's last read, a write after its "
                      "last write), a plan's worker one for both (import with --approximate to "
                      "continue after the last I/O of either)",
                      what, j->name);
        return false;
    }
    proto_fio_msg(c, line,
                  "note: job '%s' mixes reads and writes with sequential I/O (%s): fio continues "
                  "each direction after its own last I/O, the plan after the last I/O of either "
                  "(--approximate)",
                  j->name, what);
    return true;
}

/* fio's thinktime at an iodepth above 1: after thinktime_blocks I/Os fio
 * waits for every I/O in flight to complete (io_u_quiesce), then thinks; a
 * plan's delay pauses submission while the I/Os in flight complete, so fio
 * moves more I/Os per pause. Refused, or with --approximate noted. (With a
 * synchronous engine fio keeps one I/O in flight: exact.) */
static bool fio_thinktime_depth(struct fio_ctx *c, const struct fio_job *j)
{
    unsigned qd = j->engine_sync ? 1 : j->iodepth;

    if (!j->thinktime_ns || qd <= 1)
        return true;
    if (!c->approximate) {
        proto_fio_msg(c, j->thinktime_line,
                      "error: cannot map thinktime of job '%s' at iodepth %u: fio waits for "
                      "every I/O in flight to complete before it thinks, a plan's delay pauses "
                      "submission only (use iodepth=1, or import with --approximate to pause "
                      "without waiting)",
                      j->name, qd);
        return false;
    }
    proto_fio_msg(c, j->thinktime_line,
                  "note: job '%s' thinks at iodepth %u: fio waits for every I/O in flight "
                  "before it thinks, the plan pauses submission only (--approximate)",
                  j->name, qd);
    return true;
}

/* fio's normal:DEV (lib/gauss.c) is no normal law of DEV % of the range: it
 * averages 12 uniform draws over the range (a standard deviation of 1/12 of
 * it) and adds one uniform draw of DEV % of it (capped at half), a standard
 * deviation of sqrt(1/144 + (DEV/100)^2 / 12) of the range: 8.82 % for
 * normal:10, 8.34 % for normal:1. Measured by tests/bench/import-vs-fio
 * (p4-normal). Refused, or with --approximate the plan's normal law of the
 * same deviation, noted. */
static bool fio_normal(struct fio_ctx *c, struct fio_job *j)
{
    char show[96], *end;
    double dev = strtod(j->dist + 7, &end), sd;

    if (*end || !(dev > 0.0))
        return true; /* a center or no deviation: the plan's check refuses it */
    if (dev > 50.0)
        dev = 50.0;
    sd = 100.0 * sqrt(1.0 / 144.0 + dev * dev / 1e4 / 12.0);
    proto_fio_show(j->dist, show, sizeof(show));
    if (!c->approximate) {
        proto_fio_msg(c, j->dist_line,
                      "error: cannot map random_distribution=%s of job '%s': fio's normal sums "
                      "uniform draws, a standard deviation of %.3g %% of the range and not a "
                      "normal law (import with --approximate for normal:%.3g, the normal law of "
                      "that deviation)",
                      show, j->name, sd, sd);
        return false;
    }
    proto_fio_msg(c, j->dist_line,
                  "note: job '%s': random_distribution=%s drawn as normal:%.3g, the normal law of "
                  "the standard deviation of fio's sum of uniform draws (--approximate)",
                  j->name, show, sd);
    snprintf(j->dist, sizeof(j->dist), "normal:%.3g", sd);
    return true;
}

/* fio draws Zipf ranks with Gray et al.'s approximation (lib/zipf.c), which
 * puts more of the I/O on the hottest blocks than the law: measured by
 * tests/bench/import-vs-fio (p3-zipf), and by the formula, 88.6 % against
 * 88.0 % on the hottest 1 % of 2^18 blocks at theta 1.2, 64.2 % against
 * 62.9 % on the hottest 0.1 % at 1.1. A plan's zipf draws the law exactly,
 * so a random job's zipf is refused, or drawn exactly with --approximate,
 * noted. */
static bool fio_distribution(struct fio_ctx *c, struct fio_job *j)
{
    bool rnd = j->rw == FIO_RW_RANDREAD || j->rw == FIO_RW_RANDWRITE || j->rw == FIO_RW_RANDRW;
    char show[96];

    if (!rnd || !j->random_pct)
        return true;
    if (!strncmp(j->dist, "normal:", 7))
        return fio_normal(c, j);
    if (strncmp(j->dist, "zipf:", 5))
        return true;
    proto_fio_show(j->dist, show, sizeof(show));
    if (!c->approximate) {
        proto_fio_msg(c, j->dist_line,
                      "error: cannot map random_distribution=%s of job '%s': fio draws Zipf ranks "
                      "with an approximation that puts more of the I/O on the hottest blocks than "
                      "the Zipf law a plan draws exactly (import with --approximate to draw the "
                      "law)",
                      show, j->name);
        return false;
    }
    proto_fio_msg(c, j->dist_line,
                  "note: job '%s': random_distribution=%s drawn with the exact Zipf law; fio's "
                  "approximation puts more of the I/O on the hottest blocks (--approximate)",
                  j->name, show);
    return true;
}

/* The rate that counts for the job's direction(s), as the plan's: fio caps
 * reads and writes separately, so a mixed job maps only when neither is
 * capped; rate_iops with bssplit paces in bytes of the smallest size (fio
 * turns IOPS into bytes with the minimum block size), which is mibps. */
static bool fio_rate(struct fio_ctx *c, struct fio_job *j)
{
    bool rd = j->rw == FIO_RW_READ || j->rw == FIO_RW_RANDREAD ||
              ((j->rw == FIO_RW_RW || j->rw == FIO_RW_RANDRW) && j->read_pct == 100);
    bool wr = j->rw == FIO_RW_WRITE || j->rw == FIO_RW_RANDWRITE ||
              ((j->rw == FIO_RW_RW || j->rw == FIO_RW_RANDRW) && j->read_pct == 0);
    const char *d;
    uint64_t v = 0;
    unsigned u = 0;

    j->rate[0] = 0;
    if (!j->rate_dir[0][0] && !j->rate_dir[1][0])
        return true;
    if (!rd && !wr) {
        proto_fio_msg(
            c, j->rate_line,
            "error: cannot map %s=%s%s%s of job '%s': fio caps a mixed job's reads and writes "
            "separately; a plan's rate is one for all of a worker's I/Os",
            j->rate_iops ? "rate_iops" : "rate", j->rate_dir[0],
            strcmp(j->rate_dir[0], j->rate_dir[1]) ? "," : "",
            strcmp(j->rate_dir[0], j->rate_dir[1]) ? j->rate_dir[1] : "", j->name);
        return false;
    }
    d = j->rate_dir[rd ? 0 : 1];
    if (!*d) /* only the other direction is capped */
        return true;
    if (j->rate_iops) {
        uint64_t min = j->bs;
        proto_fio_uint(d, 10000000, &u);
        for (size_t i = 0; i < j->nsplit; i++)
            if (!i || j->split[i].size < min)
                min = j->split[i].size;
        if (j->nsplit)
            snprintf(j->rate, sizeof(j->rate), "{\"mibps\": %.10g",
                     (double)u * (double)min / 1048576.0);
        else
            snprintf(j->rate, sizeof(j->rate), "{\"iops\": %u", u);
    } else {
        proto_fio_size(d, &v);
        snprintf(j->rate, sizeof(j->rate), "{\"mibps\": %.10g", (double)v / 1048576.0);
    }
    return true;
}

static bool fio_group_json(struct fio_ctx *c, const struct fio_job *j, struct iof_buf *b)
{
    unsigned qd = j->iodepth;

    if (j->engine_sync && qd > 1) {
        proto_fio_msg(c, j->line,
                      "note: job '%s' uses a synchronous engine: fio keeps 1 I/O in flight per job "
                      "whatever iodepth says; mapped as queue_depth 1",
                      j->name);
        qd = 1;
    }
    iof_buf_printf(b,
                   "{\"nodes\": [\"*\"], \"count\": %u, \"engine\": \"%s\", "
                   "\"queue_depth\": %u, ",
                   j->numjobs, j->engine, qd);
    if (!fio_targets_json(c, j, b))
        return false;
    if (j->dedupe_pct >= 0 || j->compress_pct >= 0) {
        char unit[32];
        proto_plan_format_size(j->nsplit ? j->split[0].size : j->bs, unit, sizeof(unit));
        for (size_t i = 0; i < j->nsplit; i++)
            if (j->split[i].size < (j->nsplit ? j->split[0].size : j->bs))
                proto_plan_format_size(j->split[i].size, unit, sizeof(unit));
        if (j->verify) {
            proto_fio_msg(
                c, j->data_line,
                "error: cannot map dedupe_percentage/buffer_compress_percentage with verify: a "
                "verified block carries a header, which the plan's data cannot hold");
            return false;
        }
        if (j->nsplit && j->dedupe_pct > 0) {
            proto_fio_msg(
                c, j->data_line,
                "error: cannot map dedupe_percentage with bssplit: fio dedupes whole write "
                "buffers of each size, the plan fixed units");
            return false;
        }
        iof_buf_printf(b,
                       ", \"data\": {\"dedupe\": \"%d%%\", \"compress\": \"%d%%\", "
                       "\"dedupe_unit\": \"%s\"}",
                       j->dedupe_pct > 0 ? j->dedupe_pct : 0,
                       j->compress_pct > 0 ? j->compress_pct : 0, unit);
    } else {
        iof_buf_printf(b, ", \"pattern\": \"%s\"", j->pattern);
    }
    if (j->verify) {
        bool rd = j->rw == FIO_RW_READ || j->rw == FIO_RW_RANDREAD;
        bool wr = j->rw == FIO_RW_WRITE || j->rw == FIO_RW_RANDWRITE;
        if (!rd && !wr) {
            proto_fio_msg(c, j->verify_line,
                          "error: cannot map verify in job '%s': fio verifies a mixed job's reads "
                          "against what it wrote itself; the plan verifies a write test after it "
                          "(verify_mode after) or a read test inline",
                          j->name);
            return false;
        }
        /* fio reads a write job's blocks back after writing (do_verify) */
        iof_buf_printf(b, ", \"verify\": \"%s\", \"verify_mode\": \"%s\"", j->verify,
                       wr && j->do_verify ? "after" : "inline");
        if (j->verify_stop)
            iof_buf_addstr(b, ", \"verify_stop\": true");
    }
    if (j->offset_inc[0]) {
        iof_buf_addstr(b, ", \"offset_increment\": ");
        iof_json_escape(b, j->offset_inc, IOF_JSON_TEXT);
    }
    if (j->rate[0])
        iof_buf_printf(b, ", \"rate\": %s%s}", j->rate,
                       j->poisson ? ", \"arrival\": \"poisson\"" : "");
    iof_buf_addc(b, '}');
    return true;
}

static void fio_spec_name(const struct fio_job *j, char *buf, size_t cap)
{
    char s[32];
    const char *how =
        j->rw == FIO_RW_RANDREAD || j->rw == FIO_RW_RANDWRITE || j->rw == FIO_RW_RANDRW
            ? "random"
            : "sequential";
    int read = j->read_pct >= 0 ? j->read_pct : 50;

    if (j->nsplit)
        snprintf(s, sizeof(s), "bssplit");
    else
        proto_plan_format_size(j->bs, s, sizeof(s));
    if (j->rw == FIO_RW_RW || j->rw == FIO_RW_RANDRW)
        snprintf(buf, cap, "%s (%s %s %d%% read)", j->name, s, how, read);
    else
        snprintf(buf, cap, "%s (%s %s %s)", j->name, s, how,
                 j->rw == FIO_RW_READ || j->rw == FIO_RW_RANDREAD ? "read" : "write");
}

/* One job as the plan sees it: its spec (the lines and the end) and its
 * worker group, and the test (stonewall-separated step) it belongs to. */
struct fio_unit {
    struct iof_buf spec, group;
    char spec_name[200]; /* the spec's name in the plan (shared by equal specs) */
    size_t test;
    const struct fio_job *job;
    bool listed; /* its spec is one of the plan's (not its test's first job's) */
};

/* A group name from a job name: letters, digits, '.', '_' and '-' kept,
 * anything else '-', unique among names[0..n) (a "-2", "-3" ... suffix). */
static void fio_group_name(const char *job, char (*names)[65], size_t n, char *out)
{
    char base[56];
    size_t k = 0;

    for (const char *p = job; *p && k + 1 < sizeof(base); p++)
        base[k++] = isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-' ? *p : '-';
    base[k] = 0;
    if (!k)
        snprintf(base, sizeof(base), "job");
    snprintf(out, 65, "%s", base);
    for (unsigned suffix = 2;; suffix++) {
        size_t i = 0;
        while (i < n && strcmp(names[i], out))
            i++;
        if (i == n)
            return;
        snprintf(out, 65, "%s-%u", base, suffix);
    }
}

/* The plan: one test per stonewall-separated step. The jobs of a step run
 * at once as worker groups; every step must have the same groups (fio
 * jobs in the same order with the same workers, engine, depth, files and
 * rate). When the jobs of a step share one workload the plan's specs are
 * the steps' workloads; otherwise every group lists its own (`specs`:
 * the i-th entry runs in test i), which is how a plan runs different
 * workloads at once. */
static int fio_emit(struct fio_ctx *c, struct fio_job *jobs, size_t njobs, struct iof_buf *json)
{
    struct fio_unit *u = calloc(njobs, sizeof(*u));
    char(*gnames)[65] = calloc(njobs, sizeof(*gnames));
    size_t nt = 0, per = 0; /* tests, jobs per test */
    bool same = true;       /* every test's jobs share one spec */
    int rc = 0;

    if (!u || !gnames) {
        free(u);
        free(gnames);
        return -ENOMEM;
    }
    /* A runtime and ramp_time every job shares (a [global] one, usually)
     * are the run's, so `--set run.duration=...` changes them. A runtime
     * under the run's interval (1s) stays the spec's. */
    c->run_dur_ns = jobs[0].runtime_ns >= 1000000000ull ? jobs[0].runtime_ns : 0;
    c->run_ramp_ns = jobs[0].ramp_ns;
    for (size_t i = 1; i < njobs; i++) {
        if (jobs[i].runtime_ns != c->run_dur_ns)
            c->run_dur_ns = 0;
        if (jobs[i].ramp_ns != c->run_ramp_ns)
            c->run_ramp_ns = 0;
    }
    /* exitall ends every job when the first ends: the same as the plan
     * only when every job runs for one time and nothing else ends it. */
    for (size_t i = 0; i < njobs && !c->failed; i++) {
        if (!jobs[i].exitall)
            continue;
        for (size_t k = 0; k < njobs; k++)
            if (!jobs[k].time_based || !jobs[k].runtime_ns ||
                jobs[k].runtime_ns != jobs[0].runtime_ns || jobs[k].number_ios) {
                proto_fio_msg(
                    c, jobs[i].exitall_line,
                    "error: cannot map exitall: job '%s' %s, so the first job to end would "
                    "stop the others; a plan's test runs every worker to its own end",
                    jobs[k].name,
                    jobs[k].time_based && jobs[k].runtime_ns ? "runs for another time or "
                                                               "number of I/Os"
                                                             : "is not time_based");
                break;
            }
        break;
    }
    /* startdelay: the same for every job is a pause before the test. */
    for (size_t i = 1; i < njobs && !c->failed; i++)
        if (strcmp(jobs[i].startdelay, jobs[0].startdelay)) {
            const struct fio_job *d = jobs[i].startdelay_line ? &jobs[i] : &jobs[0];
            proto_fio_msg(
                c, d->startdelay_line,
                "error: cannot map startdelay: jobs '%s' and '%s' start at different times; "
                "a plan's worker groups start together",
                jobs[0].name, jobs[i].name);
        }
    if (!c->failed && jobs[0].startdelay[0] && strcmp(jobs[0].startdelay, "0"))
        proto_fio_msg(
            c, jobs[0].startdelay_line,
            "ignored: startdelay (every job waits the same before it starts: no change to the "
            "load)");
    for (size_t i = 0; i < njobs && !c->failed; i++) {
        struct fio_job *j = &jobs[i];
        if (!i || j->stonewall)
            nt++;
        u[i].test = nt - 1;
        u[i].job = j;
        iof_buf_init(&u[i].spec, 0);
        iof_buf_init(&u[i].group, 0);
        /* iofleet's sync engine is buffered (fio's psync, direct=0), libaio
         * and io_uring always O_DIRECT. fio's synchronous engines with
         * direct=1 keep one O_DIRECT I/O in flight per job: libaio at
         * queue depth 1 (engine_sync keeps the depth at 1). */
        if (j->direct && j->engine_sync)
            fio_copy(j->engine, sizeof(j->engine), "libaio");
        else if (!j->direct && !j->engine_sync && fio_engine_direct(j->engine)) {
            unsigned dl = j->direct_line ? j->direct_line : j->line;
            const char *how = j->direct_line ? "" : " (fio's default)";
            if (!c->approximate) {
                proto_fio_msg(
                    c, dl,
                    "error: cannot map direct=0%s of job '%s': buffered I/O, and iofleet's "
                    "%s engine always uses O_DIRECT (set direct=1, use ioengine=psync: "
                    "iofleet's sync engine is buffered, or import with --approximate)",
                    how, j->name, j->engine);
                break;
            }
            proto_fio_msg(c, dl,
                          "note: job '%s' has direct=0%s (buffered I/O): run with O_DIRECT, as "
                          "iofleet's %s engine always does (--approximate)",
                          j->name, how, j->engine);
        }
        if (!fio_random_map(c, j) || !fio_mixed_sequential(c, j) || !fio_distribution(c, j) ||
            !fio_thinktime_depth(c, j) || !fio_rate(c, j) || !fio_spec_json(c, j, &u[i].spec) ||
            !fio_group_json(c, j, &u[i].group))
            break;
        if (u[i].spec.err || u[i].group.err) {
            rc = -ENOMEM;
            break;
        }
        fio_spec_name(j, u[i].spec_name, sizeof(u[i].spec_name));
        if (u[i].test == 0)
            per++;
    }
    /* Step t's k-th job must be step 0's k-th group. */
    for (size_t i = 0, k = 0; i < njobs && !c->failed && !rc; i++, k++) {
        if (i && u[i].test != u[i - 1].test)
            k = 0;
        if (k >= per || strcmp(u[i].group.p, u[k].group.p)) {
            const struct fio_unit *first = &u[i - k]; /* this step's first job */
            proto_fio_msg(
                c, first->job->line,
                "error: job '%s' and the jobs after it up to the next stonewall run with "
                "other workers, engine, queue depth, files or rate than the jobs from '%s' "
                "(line %u): a plan's worker groups are the same in every test",
                first->job->name, u[0].job->name, u[0].job->line);
            break;
        }
        if (k + 1 < per && (i + 1 == njobs || u[i + 1].test != u[i].test)) {
            proto_fio_msg(
                c, u[i - k].job->line,
                "error: the step from job '%s' runs %zu job%s at once where the first runs "
                "%zu: a plan's worker groups are the same in every test",
                u[i - k].job->name, k + 1, k ? "s" : "", per);
            break;
        }
        if (k && strcmp(u[i].spec.p, u[i - 1].spec.p))
            same = false;
    }
    /* The specs the plan lists: each test's when its jobs share one, else
     * every job's; names made unique with the job's name and a number. */
    for (size_t i = 0; i < njobs && !c->failed && !rc; i++) {
        u[i].listed = !(same && i && u[i].test == u[i - 1].test);
        for (unsigned n = 2; u[i].listed; n++) {
            size_t d = 0;
            while (d < i && !(u[d].listed && !strcmp(u[d].spec_name, u[i].spec_name)))
                d++;
            if (d == i)
                break;
            snprintf(u[i].spec_name, sizeof(u[i].spec_name), "%.180s #%u", u[i].job->name, n);
        }
    }
    if (!c->failed && !rc) {
        iof_buf_addstr(json, "{\n  \"name\": ");
        iof_json_escape(json, c->name, IOF_JSON_TEXT);
        if (c->nnotes) {
            iof_buf_addstr(json, ",\n  \"notes\": [");
            iof_buf_addstr(json, c->notes.p);
            iof_buf_addc(json, ']');
        }
        if (c->notes.err)
            rc = c->notes.err;
        iof_buf_addstr(json, ",\n  \"run\": {");
        if (c->run_ramp_ns) {
            char d[32];
            fio_dur_str(c->run_ramp_ns, d, sizeof(d));
            iof_buf_printf(json, "\"ramp\": \"%s\", ", d);
        }
        if (c->run_dur_ns) {
            char d[32];
            fio_dur_str(c->run_dur_ns, d, sizeof(d));
            iof_buf_printf(json, "\"duration\": \"%s\", ", d);
        }
        iof_buf_addstr(json, "\"interval\": \"1s\"},\n  \"specs\": [\n");
        for (size_t i = 0, first = 1; i < njobs; i++) {
            if (!u[i].listed)
                continue;
            iof_buf_printf(json, "%s    {\"name\": ", first ? "" : ",\n");
            iof_json_escape(json, u[i].spec_name, IOF_JSON_TEXT);
            iof_buf_printf(json, ", %s}", u[i].spec.p);
            first = 0;
        }
        iof_buf_addstr(json, "\n  ],\n  \"workers\": [");
        for (size_t k = 0; k < per; k++) {
            const char *g = u[k].group.p;
            iof_buf_addstr(json, k ? ", " : "");
            if (!same) {
                fio_group_name(u[k].job->name, gnames, k, gnames[k]);
                iof_buf_addstr(json, "{\"name\": ");
                iof_json_escape(json, gnames[k], IOF_JSON_TEXT);
                iof_buf_addstr(json, ", \"specs\": [");
                for (size_t t = 0; t < nt; t++) {
                    iof_buf_addstr(json, t ? ", " : "");
                    iof_json_escape(json, u[t * per + k].spec_name, IOF_JSON_TEXT);
                }
                iof_buf_addstr(json, "], ");
                g++; /* past its '{' */
            }
            iof_buf_addstr(json, g);
        }
        iof_buf_addstr(json, "]\n}\n");
        if (json->err)
            rc = json->err;
    }
    for (size_t i = 0; i < njobs; i++) {
        iof_buf_free(&u[i].spec);
        iof_buf_free(&u[i].group);
    }
    free(u);
    free(gnames);
    return rc;
}

int proto_import_fio(const char *name, const char *text, size_t len, unsigned flags,
                     struct iof_buf *json, struct iof_buf *msgs, struct iof_diag *diag)
{
    struct fio_ctx c = {
        .name = name, .msgs = msgs, .approximate = (flags & IOF_IMPORT_APPROXIMATE) != 0};
    struct fio_job *jobs = NULL;
    size_t njobs = 0;
    char *copy;
    int rc;

    if (len > IOF_IMPORT_MAX_TEXT)
        return iof_diag_set(diag, IOF_EPLAN, "%s: larger than %u bytes", name, IOF_IMPORT_MAX_TEXT);
    if (memchr(text, 0, len))
        return iof_diag_set(diag, IOF_EPLAN, "%s: a NUL byte: not a fio job file", name);
    copy = malloc(len + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, text, len);
    copy[len] = 0;
    rc = proto_fio_parse(&c, copy);
    if (!rc && !c.failed) {
        size_t nreal = 0;
        for (size_t s = 0; s < c.nsec; s++)
            nreal += !c.sec[s].global;
        if (!nreal) {
            proto_fio_msg(&c, 1, "error: no job section (only [global] or nothing)");
        } else if (!(jobs = calloc(nreal, sizeof(*jobs)))) {
            rc = -ENOMEM;
        }
        for (size_t s = 0; jobs && s < c.nsec && !c.failed; s++) {
            struct fio_job *j;
            if (c.sec[s].global)
                continue;
            j = &jobs[njobs++];
            fio_job_defaults(j);
            fio_copy(j->name, sizeof(j->name), c.sec[s].name);
            j->line = c.sec[s].line;
            /* The engine first: an engine iofleet does not have is the
             * reason a job cannot be imported, whatever its other options
             * (nfs_url, hostname...) would say. */
            {
                struct fio_kv *eng = NULL;
                for (size_t g = 0; g <= s; g++)
                    for (size_t o = 0; (g == s || c.sec[g].global) && o < c.sec[g].count; o++)
                        if (!strcmp(c.kv[c.sec[g].first + o].key, "ioengine"))
                            eng = &c.kv[c.sec[g].first + o];
                if (eng && !fio_engine(&c, j, eng, eng->reported)) {
                    eng->reported = true;
                    break;
                }
            }
            /* Every [global] before the job, then the job's own options. */
            for (size_t g = 0; g < s; g++)
                for (size_t o = 0; c.sec[g].global && o < c.sec[g].count; o++)
                    fio_apply(&c, j, &c.kv[c.sec[g].first + o]);
            for (size_t o = 0; o < c.sec[s].count; o++)
                fio_apply(&c, j, &c.kv[c.sec[s].first + o]);
            /* rw decides which of bs=R,W counts: read bs again after rw. */
            for (size_t g = 0; g <= s; g++)
                for (size_t o = 0; (g == s || c.sec[g].global) && o < c.sec[g].count; o++) {
                    struct fio_kv *kv = &c.kv[c.sec[g].first + o];
                    if ((!strcmp(kv->key, "bs") || !strcmp(kv->key, "blocksize")) && !c.failed)
                        fio_bs(&c, j, kv);
                    else if (!strcmp(kv->key, "bssplit") && !c.failed)
                        fio_bssplit(&c, j, kv);
                }
        }
        if (!rc && !c.failed)
            rc = fio_emit(&c, jobs, njobs, json);
    }
    if (!rc && msgs->err)
        rc = msgs->err;
    if (!rc && c.failed)
        rc = iof_diag_set(diag, IOF_EPLAN, "%s: cannot be imported (the reasons are above)", name);
    free(jobs);
    free(c.kv);
    free(c.sec);
    for (size_t i = 0; i < c.nowned; i++)
        free(c.owned[i]);
    iof_buf_free(&c.notes);
    free(c.owned);
    free(copy);
    return rc;
}

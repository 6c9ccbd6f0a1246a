/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_vdbench.c - `iofleet import FILE --format vdbench`: a vdbench
 * (5.04) raw-I/O parameter file, HCIBench's among them, as plan JSON.
 *
 * vdbench's model: sd= (storage: a lun, its threads), wd= (workload: which
 * SDs, xfersize, rdpct, seekpct, skew), rd= (run: which WDs, iorate,
 * elapsed, warmup, interval, for-loops); `xx=default` sets defaults for the
 * definitions after it; hd= lists the hosts. iofleet's model: every rd= is a
 * test (for-loops a cycle), the SDs of its WDs the targets of one worker
 * group at queue depth `threads` (outstanding I/Os per SD), the WDs' mixes
 * the spec's lines (a WD's skew is its share of the I/Os, an xfersize
 * distribution is by I/O count, as in vdbench). What the plan cannot
 * express exactly is refused naming the parameter and FILE:LINE, or with
 * --approximate accepted with a note.
 *
 * Syntax: lines starting with '*', '/' or '#' are comments; a definition
 * continues on the next line when its line ends with ','; values in
 * parentheses are lists; sizes take k/m/g/t (powers of 1024); $variables
 * (and !variables) take the values vdbench takes from its command line
 * from --var; anything for file systems (fsd=, fwd=) is refused by name. */
#include "proto/import_vdbench.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/plan.h"
#include "common/jsonw.h"

struct vdb_sd {
    const struct vdb_def *def;
    char lun[1024];
    uint64_t size;
    unsigned threads;
    bool direct;
    char range[96];       /* the target's "range" JSON object, "" for the whole lun */
    uint64_t range_bytes; /* of a sized lun, 0 when unknown */
};

struct vdb_line {
    uint64_t size;
    unsigned share, read, random;
    char dist[64]; /* the line's "distribution", "" for uniform */
};

/* range=(a,b): percentages of the lun (a < b <= 100), or bytes when either
 * is above 200 ("(1g,2g)"). JSON into out; false (message given) if not exact. */
static bool vdb_range(struct vdb_ctx *c, const struct vdb_kv *kv, uint64_t lunsize, char *out,
                      size_t cap, uint64_t *bytes)
{
    char buf[IOF_IMPORT_MAX_LINE + 1], *it[4], a[24], b[24];
    size_t n = proto_vdb_list(c, kv, kv->val, buf, it, 3);

    if (!n)
        return false;
    double lo, hi;
    uint64_t blo, bhi;

    *bytes = 0;
    if (n != 2) {
        proto_vdb_bad(c, kv, "expected (START,END)");
        return false;
    }
    if (!proto_vdb_num(it[0], &lo) && !proto_vdb_num(it[1], &hi) && lo <= 200 && hi <= 200) {
        if (hi > 100) {
            proto_vdb_bad(c, kv, "a range that wraps past the end of the SD (an END above 100)");
            return false;
        }
        if (lo != (unsigned)lo || hi != (unsigned)hi || lo >= hi) {
            proto_vdb_bad(c, kv,
                          "the plan takes whole percentages with START below END (a fraction of a "
                          "percent has no exact region on a lun of unknown size)");
            return false;
        }
        if (lo == 0 && hi == 100) {
            out[0] = 0;
            *bytes = lunsize;
            return true;
        }
        snprintf(out, cap, "\"range\": {\"offset\": \"%u%%\", \"size\": \"%u%%\"}", (unsigned)lo,
                 (unsigned)(hi - lo));
        *bytes = lunsize / 100 * (uint64_t)(hi - lo);
        if (lunsize % 100)
            *bytes = 0;
        return true;
    }
    if (proto_vdb_size(it[0], &blo) || proto_vdb_size(it[1], &bhi) || blo >= bhi || blo % 512 ||
        bhi % 512) {
        proto_vdb_bad(c, kv, "expected whole percentages, or sizes that are multiples of 512");
        return false;
    }
    proto_plan_format_size(blo, a, sizeof(a));
    proto_plan_format_size(bhi - blo, b, sizeof(b));
    snprintf(out, cap, "\"range\": {\"offset\": \"%s\", \"size\": \"%s\"}", a, b);
    *bytes = bhi - blo;
    return true;
}

/* hotband=(LO,HI): vdbench's hot band, I/O limited to LO..HI % of each SD
 * and skewed inside it toward its lower LBAs by a law vdbench's
 * documentation does not give. No plan distribution reproduces that; with
 * --approximate the band is a zoned distribution, uniform inside the band,
 * noted. The distribution string into dist; false (message given) if not. */
static bool vdb_hotband(struct vdb_ctx *c, const struct vdb_kv *kv, int random, bool ranged,
                        char *dist, size_t cap)
{
    char buf[IOF_IMPORT_MAX_LINE + 1], *it[4];
    size_t n;
    double lo, hi;
    int len = 0;

    if (!c->approximate) {
        proto_vdb_bad(c, kv,
                      "vdbench skews the I/O inside the band toward its lower LBAs by a law its "
                      "documentation does not give, which no plan distribution reproduces (import "
                      "with --approximate to run it uniform over the band)");
        return false;
    }
    if (!(n = proto_vdb_list(c, kv, kv->val, buf, it, 3)))
        return false;
    if (n != 2 || proto_vdb_num(it[0], &lo) || proto_vdb_num(it[1], &hi) || lo >= hi ||
        lo != (unsigned)lo || hi != (unsigned)hi || hi > 100) {
        proto_vdb_bad(c, kv,
                      "the plan's zones take whole percentages (START,END) with START below END "
                      "and END at most 100 (no bytes, no wrap past the end)");
        return false;
    }
    if (random != 100) {
        proto_vdb_bad(c, kv,
                      "a hot band with sequential I/O (seekpct below 100): a plan distribution "
                      "places random I/Os only");
        return false;
    }
    if (ranged) {
        proto_vdb_bad(c, kv, "a hot band of an SD or workload with its own range=");
        return false;
    }
    dist[0] = 0;
    if (lo == 0 && hi == 100)
        return true;
    len = snprintf(dist, cap, "zoned:");
    if (lo > 0)
        len += snprintf(dist + len, cap - (size_t)len, "0/%u:", (unsigned)lo);
    len += snprintf(dist + len, cap - (size_t)len, "100/%u", (unsigned)(hi - lo));
    if (hi < 100)
        snprintf(dist + len, cap - (size_t)len, ":0/%u", (unsigned)(100 - hi));
    proto_vdb_msg(c, kv->file, kv->line,
                  "note: hotband=%s: run uniform over %u%%..%u%% of each SD (distribution %s); "
                  "vdbench skews the I/O inside the band toward its lower LBAs (--approximate)",
                  kv->val, (unsigned)lo, (unsigned)hi, dist);
    return true;
}

/* seekpct (or one of forseekpct): 0..100 random, "seq"/"sequential" 0,
 * "random" 100, "eof" (or -1) -1. */
static bool vdb_seek(struct vdb_ctx *c, const struct vdb_kv *kv, const char *v, int *out)
{
    double d;

    if (!strcasecmp(v, "seq") || !strcasecmp(v, "sequential")) {
        *out = 0;
        return true;
    }
    if (!strcasecmp(v, "random") || !strcasecmp(v, "rand")) {
        *out = 100;
        return true;
    }
    if (!strcasecmp(v, "eof") || !strcmp(v, "-1")) {
        *out = -1;
        return true;
    }
    if (proto_vdb_num(v, &d) || d > 100) {
        proto_vdb_bad(c, kv, "expected 0..100, seq, random or eof");
        return false;
    }
    if (d != (unsigned)d) {
        if (!c->approximate) {
            proto_vdb_bad(c, kv,
                          "a fraction of a percent (the plan's random share is a whole percentage; "
                          "import with --approximate to round it)");
            return false;
        }
        d = (double)(unsigned)(d + 0.5);
        proto_vdb_msg(c, kv->file, kv->line, "note: %s=%s: rounded to %u%% random (--approximate)",
                      kv->key, kv->val, (unsigned)d);
    }
    *out = (int)d;
    return true;
}

/* rdpct: 0..100, whole unless --approximate. */
static bool vdb_pct(struct vdb_ctx *c, const struct vdb_kv *kv, const char *v, unsigned *out)
{
    double d;

    if (proto_vdb_num(v, &d) || d > 100) {
        proto_vdb_bad(c, kv, "expected 0..100");
        return false;
    }
    if (d != (unsigned)d) {
        if (!c->approximate) {
            proto_vdb_bad(c, kv,
                          "a fraction of a percent (the plan takes whole percentages; import with "
                          "--approximate to round it)");
            return false;
        }
        d = (double)(unsigned)(d + 0.5);
        proto_vdb_msg(c, kv->file, kv->line, "note: %s=%s: rounded to %u%% (--approximate)",
                      kv->key, kv->val, (unsigned)d);
    }
    *out = (unsigned)d;
    return true;
}

/* xfersize=SIZE or (SIZE,PCT,SIZE,PCT...): the lines' sizes and their share
 * of the I/Os in percent. */
static size_t vdb_xfer(struct vdb_ctx *c, const struct vdb_kv *kv, struct vdb_line *out)
{
    char buf[IOF_IMPORT_MAX_LINE + 1], *it[VDB_MAX_LIST];
    size_t n = proto_vdb_list(c, kv, kv->val, buf, it, VDB_MAX_LIST);
    unsigned total = 0;

    if (!n)
        return 0;
    if (n == 1) {
        if (proto_vdb_size(it[0], &out[0].size) || !out[0].size) {
            proto_vdb_bad(c, kv, "not a size");
            return 0;
        }
        out[0].share = 100;
        return 1;
    }
    if (n == 3) {
        proto_vdb_bad(
            c, kv,
            "(MIN,MAX,ALIGN) picks each transfer size at random in a range; a plan's lines "
            "have fixed sizes (write a distribution: (4k,50,8k,50))");
        return 0;
    }
    if (n % 2) {
        proto_vdb_bad(c, kv, "expected (SIZE,PERCENT,SIZE,PERCENT...)");
        return 0;
    }
    for (size_t i = 0; i < n / 2; i++) {
        double pct;
        if (proto_vdb_size(it[2 * i], &out[i].size) || !out[i].size ||
            proto_vdb_num(it[2 * i + 1], &pct) || pct > 100) {
            proto_vdb_bad(c, kv, "expected (SIZE,PERCENT,SIZE,PERCENT...)");
            return 0;
        }
        if (pct != (unsigned)pct) {
            proto_vdb_bad(c, kv, "a fraction of a percent (a line's share is a whole percentage)");
            return 0;
        }
        out[i].share = (unsigned)pct;
        total += out[i].share;
    }
    if (total != 100) {
        proto_vdb_bad(c, kv, "the percentages add up to %u, not 100", total);
        return 0;
    }
    return n / 2;
}

/* ---- the plan ---- */

/* One rd= as the plan runs it. */
struct vdb_run {
    const struct vdb_def *def;
    struct iof_buf spec, group, cycle;
    uint64_t elapsed_s, warmup_s, interval_s;
    bool has_warmup;
    char name[200];
};

/* The SD behind def, resolved; false (message given) when it does not map. */
static bool vdb_sd(struct vdb_ctx *c, const struct vdb_def *d, struct vdb_sd *s)
{
    const struct vdb_kv *kv;

    memset(s, 0, sizeof(*s));
    s->def = d;
    s->threads = 8; /* vdbench's default */
    if (!(kv = proto_vdb_get(c, d, "lun"))) {
        proto_vdb_msg(c, d->file, d->line, "error: sd=%s has no lun=", d->name);
        return false;
    }
    if (proto_import_text_bad(c->msgs, kv->file, kv->line, "lun", kv->val)) {
        c->failed = true;
        return false;
    }
    snprintf(s->lun, sizeof(s->lun), "%s", kv->val);
    if ((kv = proto_vdb_get(c, d, "size")) && (proto_vdb_size(kv->val, &s->size) || !s->size)) {
        proto_vdb_bad(c, kv, "not a size");
        return false;
    }
    if ((kv = proto_vdb_get(c, d, "threads"))) {
        double t;
        if (proto_vdb_num(kv->val, &t) || t < 1 || t != (unsigned)t || t > PROTO_PLAN_MAX_QD) {
            proto_vdb_bad(c, kv, "expected a whole number 1..%u", (unsigned)PROTO_PLAN_MAX_QD);
            return false;
        }
        s->threads = (unsigned)t;
    }
    if ((kv = proto_vdb_get(c, d, "openflags"))) {
        char buf[IOF_IMPORT_MAX_LINE + 1], *it[8];
        size_t n = proto_vdb_list(c, kv, kv->val, buf, it, 8);
        for (size_t i = 0; i < n; i++) {
            if (!strcasecmp(it[i], "o_direct") || !strcasecmp(it[i], "directio"))
                s->direct = true;
            else if (strcasecmp(it[i], "o_rdwr") && strcasecmp(it[i], "o_rdonly")) {
                proto_vdb_bad(c, kv, "iofleet opens with O_DIRECT only (o_direct or directio)");
                return false;
            }
        }
    }
    s->range_bytes = s->size;
    if ((kv = proto_vdb_get(c, d, "range")) &&
        !vdb_range(c, kv, s->size, s->range, sizeof(s->range), &s->range_bytes))
        return false;
    return true;
}

/* The worker group's targets: one per SD, a run of luns NAME0..NAMEn that
 * differ only in a number counting up by one written as one NAME{0..n}. */
static void vdb_targets(struct vdb_ctx *c, const struct vdb_sd *sd, size_t nsd, struct iof_buf *b)
{
    iof_buf_addstr(b, "\"targets\": [");
    for (size_t i = 0; i < nsd;) {
        const struct vdb_sd *s = &sd[i];
        const char *path = s->lun;
        char tmpl[1200], sz[32];
        size_t run = 1, pl = 0, dl;
        unsigned long first = 0;

        /* the digits at the end of the last path component before any suffix */
        for (const char *q = path; *q; q++)
            if (isdigit((unsigned char)*q) && (q == path || !isdigit((unsigned char)q[-1])))
                pl = (size_t)(q - path);
        dl = strspn(path + pl, "0123456789");
        if (dl && dl < 8 && !(dl > 1 && path[pl] == '0')) {
            first = strtoul(path + pl, NULL, 10);
            while (i + run < nsd) {
                const struct vdb_sd *t = &sd[i + run];
                char want[1200];
                snprintf(want, sizeof(want), "%.*s%lu%s", (int)pl, path,
                         (unsigned long)(first + run), path + pl + dl);
                if (strcmp(t->lun, want) || t->size != s->size || strcmp(t->range, s->range))
                    break;
                run++;
            }
        }
        if (run > 1)
            snprintf(tmpl, sizeof(tmpl), "%.*s{%lu..%lu}%s", (int)pl, path, first,
                     (unsigned long)(first + run - 1), path + pl + dl);
        else
            snprintf(tmpl, sizeof(tmpl), "%s", path);
        iof_buf_addstr(b, i ? ",\n       {\"path\": " : "\n       {\"path\": ");
        if (tmpl[0] == '/' && strncmp(tmpl, "/dev/", 5)) {
            const char *base = strrchr(tmpl, '/') + 1;
            proto_vdb_msg(
                c, s->def->file, s->def->line,
                "note: lun=%s is a test file '%s' in the agent's workdir (dynamo --workdir "
                "puts it on the same filesystem)",
                tmpl, base);
            iof_json_escape(b, base, IOF_JSON_TEXT);
        } else {
            iof_json_escape(b, tmpl, IOF_JSON_TEXT);
        }
        if (s->size && strncmp(tmpl, "/dev/", 5)) {
            proto_plan_format_size(s->size, sz, sizeof(sz));
            iof_buf_printf(b, ", \"size\": \"%s\"", sz);
        }
        if (s->range[0])
            iof_buf_printf(b, ", %s", s->range);
        iof_buf_addc(b, '}');
        i += run;
    }
    iof_buf_addstr(b, "\n     ]");
}

/* Whole seconds of a vdbench time: a number of seconds, or with s/m/h. */
static bool vdb_secs(struct vdb_ctx *c, const struct vdb_kv *kv, uint64_t *out)
{
    char *end;
    double v;
    double mul = 1;

    errno = 0;
    v = strtod(kv->val, &end);
    if (end == kv->val || errno || v < 0) {
        proto_vdb_bad(c, kv, "not a time");
        return false;
    }
    if (!strcasecmp(end, "s"))
        mul = 1;
    else if (!strcasecmp(end, "m"))
        mul = 60;
    else if (!strcasecmp(end, "h"))
        mul = 3600;
    else if (*end) {
        proto_vdb_bad(c, kv, "not a time");
        return false;
    }
    v *= mul;
    if (v != (double)(uint64_t)v) {
        proto_vdb_bad(c, kv, "a fraction of a second");
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

/* A for-loop list as a JSON array (sizes as strings, percentages as numbers). */
static bool vdb_for_list(struct vdb_ctx *c, const struct vdb_kv *kv, struct iof_buf *b,
                         unsigned *n_out, unsigned long *vals)
{
    char buf[IOF_IMPORT_MAX_LINE + 1], *it[VDB_MAX_LIST];
    size_t n = proto_vdb_list(c, kv, kv->val, buf, it, VDB_MAX_LIST);

    if (!n)
        return false;
    iof_buf_addc(b, '[');
    for (size_t i = 0; i < n; i++) {
        char s[32];
        uint64_t sz;
        unsigned u;
        int sk;
        iof_buf_addstr(b, i ? ", " : "");
        if (!strcmp(kv->key, "forxfersize") || !strcmp(kv->key, "xfersize")) {
            if (proto_vdb_size(it[i], &sz) || !sz) {
                proto_vdb_bad(c, kv, "'%s' is not a size", it[i]);
                return false;
            }
            proto_plan_format_size(sz, s, sizeof(s));
            iof_buf_printf(b, "\"%s\"", s);
        } else if (!strcmp(kv->key, "forrdpct")) {
            if (!vdb_pct(c, kv, it[i], &u))
                return false;
            iof_buf_printf(b, "%u", u);
        } else if (!strcmp(kv->key, "forseekpct")) {
            if (!vdb_seek(c, kv, it[i], &sk))
                return false;
            if (sk < 0) {
                proto_vdb_bad(c, kv, "eof in a for-loop (a run to the end of the SD)");
                return false;
            }
            iof_buf_printf(b, "%d", sk);
        } else { /* forthreads */
            double t;
            if (proto_vdb_num(it[i], &t) || t < 1 || t != (unsigned)t || t > PROTO_PLAN_MAX_QD) {
                proto_vdb_bad(c, kv, "'%s' is not a whole number of threads 1..%u", it[i],
                              (unsigned)PROTO_PLAN_MAX_QD);
                return false;
            }
            vals[i] = (unsigned long)t;
        }
    }
    iof_buf_addc(b, ']');
    *n_out = (unsigned)n;
    return true;
}

/* The rd's for-loops as the plan's cycle: forxfersize/forrdpct/forseekpct
 * as spec axes in the order given (the first the outermost loop), forthreads
 * as the queue_depth cycle, which the plan runs innermost; so forthreads
 * must come last and be a linear or doubling series. */
static bool vdb_cycle(struct vdb_ctx *c, const struct vdb_def *rd, size_t nlines, struct iof_buf *b)
{
    static const char *const loops[] = {"forxfersize", "forrdpct", "forseekpct", "forthreads"};
    static const char *const axes[] = {"size", "read", "random", "queue_depth"};
    const struct vdb_kv *seen[4] = {NULL};
    const struct vdb_kv *last = NULL;

    for (size_t i = 1; i < rd->count; i++)
        for (size_t l = 0; l < 4; l++)
            if (!strcmp(c->kv[rd->first + i].key, loops[l])) {
                seen[l] = &c->kv[rd->first + i];
                last = seen[l];
            }
    /* rd=default for-loops too */
    for (size_t l = 0; l < 4; l++)
        if (!seen[l] && (seen[l] = proto_vdb_get(c, rd, loops[l])) && !last)
            last = seen[l];
    if (!seen[0] && !seen[1] && !seen[2] && !seen[3])
        return true;
    if (nlines > 1 && (seen[0] || seen[1] || seen[2])) {
        const struct vdb_kv *kv = seen[0] ? seen[0] : seen[1] ? seen[1] : seen[2];
        proto_vdb_bad(
            c, kv,
            "a for-loop over a mix of several transfer sizes or workloads (the plan cycles "
            "single-line specs only)");
        return false;
    }
    if (seen[3] && last != seen[3] && (seen[0] || seen[1] || seen[2])) {
        proto_vdb_bad(
            c, seen[3],
            "forthreads before another for-loop: the plan cycles the queue depth innermost, "
            "so forthreads must be the last for-loop");
        return false;
    }
    {
        bool first = b->len == 0;
        const struct vdb_kv *order[3];
        size_t no = 0;
        for (size_t i = 1; i < rd->count; i++)
            for (size_t l = 0; l < 3; l++)
                if (seen[l] == &c->kv[rd->first + i])
                    order[no++] = seen[l];
        for (size_t l = 0; l < 3; l++) {
            bool in = false;
            for (size_t k = 0; k < no; k++)
                in |= order[k] == seen[l];
            if (seen[l] && !in)
                order[no++] = seen[l];
        }
        for (size_t k = 0; k < no; k++) {
            unsigned n;
            size_t l = 0;
            while (strcmp(order[k]->key, loops[l]))
                l++;
            iof_buf_printf(b, "%s\"%s\": ", first ? "" : ", ", axes[l]);
            if (!vdb_for_list(c, order[k], b, &n, NULL))
                return false;
            first = false;
        }
        if (seen[3]) {
            unsigned long v[VDB_MAX_LIST];
            unsigned n;
            struct iof_buf junk = IOF_BUF_INIT;
            bool ok = vdb_for_list(c, seen[3], &junk, &n, v);
            iof_buf_free(&junk);
            if (!ok)
                return false;
            if (n == 1) {
                iof_buf_printf(b,
                               "%s\"queue_depth\": {\"from\": %lu, \"to\": %lu, \"step\": "
                               "\"+1\"}",
                               first ? "" : ", ", v[0], v[0]);
            } else {
                bool lin = v[1] > v[0], geo = v[1] > v[0] && v[1] % v[0] == 0;
                for (unsigned i = 2; i < n; i++) {
                    lin &= v[i] - v[i - 1] == v[1] - v[0] && v[i] > v[i - 1];
                    geo &= v[i] == v[i - 1] * (v[1] / v[0]);
                }
                if (!lin && !geo) {
                    proto_vdb_bad(c, seen[3],
                                  "the plan cycles the queue depth in equal steps (+N) or by a "
                                  "factor (xN); this series is neither");
                    return false;
                }
                iof_buf_printf(b,
                               "%s\"queue_depth\": {\"from\": %lu, \"to\": %lu, \"step\": "
                               "\"%c%lu\"}",
                               first ? "" : ", ", v[0], v[n - 1], lin ? '+' : 'x',
                               lin ? v[1] - v[0] : v[1] / v[0]);
            }
        }
    }
    return true;
}

/* An rd= as a spec, a worker group and a cycle. */
static bool vdb_run(struct vdb_ctx *c, const struct vdb_def *rd, unsigned nhosts, struct vdb_run *r)
{
    const struct vdb_def *wds[VDB_MAX_LIST], *sds[IOF_PLAN_MAX_TARGETS];
    struct vdb_sd *sd = NULL;
    size_t nwd, nsd = 0, nlines = 0;
    const struct vdb_kv *kv, *wdkv, *iokv;
    struct vdb_line lines[PROTO_PLAN_MAX_LINES];
    unsigned threads = 0, skew_left = 100, nskewless = 0;
    int skews[VDB_MAX_LIST];
    bool eof = false, ok = false, sd_ranged = false;
    char s[64];

    r->def = rd;
    r->elapsed_s = 30; /* vdbench's defaults */
    r->interval_s = 1;
    if ((kv = proto_vdb_get(c, rd, "elapsed")) && !vdb_secs(c, kv, &r->elapsed_s))
        return false;
    if ((kv = proto_vdb_get(c, rd, "interval")) &&
        (!vdb_secs(c, kv, &r->interval_s) || !r->interval_s)) {
        if (!c->failed)
            proto_vdb_bad(c, kv, "an interval of 0");
        return false;
    }
    if ((kv = proto_vdb_get(c, rd, "warmup"))) {
        if (!vdb_secs(c, kv, &r->warmup_s))
            return false;
        r->has_warmup = true;
    } else {
        r->warmup_s = r->interval_s; /* vdbench leaves the first interval out */
    }
    if (r->elapsed_s <= r->warmup_s) {
        proto_vdb_msg(c, rd->file, rd->line,
                      "error: rd=%s: elapsed=%" PRIu64
                      " leaves no measured time after the warmup of "
                      "%" PRIu64 "s",
                      rd->name, r->elapsed_s, r->warmup_s);
        return false;
    }
    if ((kv = proto_vdb_get(c, rd, "sd"))) {
        proto_vdb_bad(c, kv, "sd= in an rd= (choose the SDs in the wd=)");
        return false;
    }
    if (!(wdkv = proto_vdb_get(c, rd, "wd"))) {
        proto_vdb_msg(c, rd->file, rd->line, "error: rd=%s has no wd=", rd->name);
        return false;
    }
    if (!(nwd = proto_vdb_select(c, wdkv, VDB_WD, wds, VDB_MAX_LIST)))
        return false;
    /* Every wd= of the run on the same SDs and range: one mix on one group. */
    for (size_t w = 0; w < nwd; w++) {
        const struct vdb_def *wd = wds[w];
        const struct vdb_def *wsd[IOF_PLAN_MAX_TARGETS];
        const struct vdb_kv *rk = proto_vdb_get(c, wd, "range"),
                            *r0 = w ? proto_vdb_get(c, wds[0], "range") : NULL;
        size_t n;
        if (!(kv = proto_vdb_get(c, wd, "sd"))) {
            proto_vdb_msg(c, wd->file, wd->line, "error: wd=%s has no sd=", wd->name);
            return false;
        }
        if (!(n = proto_vdb_select(c, kv, VDB_SD, wsd, IOF_PLAN_MAX_TARGETS)))
            return false;
        if (w == 0) {
            memcpy(sds, wsd, n * sizeof(*wsd));
            nsd = n;
        } else if (n != nsd || memcmp(sds, wsd, n * sizeof(*wsd)) || (!rk != !r0) ||
                   (rk && strcmp(rk->val, r0->val))) {
            proto_vdb_msg(
                c, wd->file, wd->line,
                "error: rd=%s runs wd=%s and wd=%s on different SDs or ranges at once: a plan "
                "test runs one mix on every target of a worker group, and vdbench's skew "
                "between different SDs has no plan equivalent",
                rd->name, wds[0]->name, wd->name);
            return false;
        }
        skews[w] = -1;
        if ((kv = proto_vdb_get(c, wd, "skew"))) {
            double sk;
            if (proto_vdb_num(kv->val, &sk) || sk > 100 || sk != (unsigned)sk) {
                proto_vdb_bad(c, kv, "expected a whole percentage 0..100");
                return false;
            }
            skews[w] = (int)sk;
            if ((unsigned)sk > skew_left) {
                proto_vdb_bad(c, kv, "the skews of rd=%s add up to more than 100", rd->name);
                return false;
            }
            skew_left -= (unsigned)sk;
        } else {
            nskewless++;
        }
    }
    if (nskewless ? skew_left % nskewless : skew_left) {
        proto_vdb_msg(c, rd->file, rd->line,
                      "error: rd=%s: the skews leave %u%% to %u workloads without skew=: %s (the "
                      "plan's shares are whole percentages)",
                      rd->name, skew_left, nskewless,
                      nskewless ? "not a whole percentage each" : "they do not add up to 100");
        return false;
    }
    if (!(sd = calloc(nsd, sizeof(*sd))))
        return false;
    for (size_t i = 0; i < nsd; i++) {
        if (!vdb_sd(c, sds[i], &sd[i]))
            goto out;
        if (!sd[i].direct) {
            if (!c->approximate) {
                proto_vdb_msg(
                    c, sds[i]->file, sds[i]->line,
                    "error: cannot map sd=%s without openflags=o_direct: vdbench reads and "
                    "writes through the page cache then, and iofleet's engine always uses "
                    "O_DIRECT (add openflags=o_direct, or import with --approximate)",
                    sds[i]->name);
                goto out;
            }
            proto_vdb_msg(c, sds[i]->file, sds[i]->line,
                          "note: sd=%s has no openflags=o_direct (buffered I/O): run with O_DIRECT "
                          "(--approximate)",
                          sds[i]->name);
        }
        if (i && (sd[i].threads != sd[0].threads)) {
            proto_vdb_msg(
                c, sds[i]->file, sds[i]->line,
                "error: sd=%s has threads=%u where sd=%s has %u: a worker group keeps one "
                "queue depth on every target",
                sds[i]->name, sd[i].threads, sds[0]->name, sd[0].threads);
            goto out;
        }
    }
    /* The workloads' range= (the same for all of them, checked above) is
     * each SD's region, as an sd= range= would be. */
    if ((kv = proto_vdb_get(c, wds[0], "range")))
        for (size_t i = 0; i < nsd; i++) {
            if (proto_vdb_get(c, sds[i], "range")) {
                proto_vdb_bad(c, kv, "a wd= range= on sd=%s, which has a range= of its own",
                              sds[i]->name);
                goto out;
            }
            if (!vdb_range(c, kv, sd[i].size, sd[i].range, sizeof(sd[i].range), &sd[i].range_bytes))
                goto out;
        }
    for (size_t i = 0; i < nsd; i++)
        sd_ranged |= sd[i].range[0] != 0;
    threads = sd[0].threads;
    if ((kv = proto_vdb_get(c, rd, "threads"))) {
        double t;
        if (proto_vdb_num(kv->val, &t) || t < 1 || t != (unsigned)t || t > PROTO_PLAN_MAX_QD) {
            proto_vdb_bad(c, kv, "expected a whole number 1..%u", (unsigned)PROTO_PLAN_MAX_QD);
            goto out;
        }
        threads = (unsigned)t;
    }
    /* The lines: each wd's transfer sizes, its share skew x the size's %. */
    for (size_t w = 0; w < nwd; w++) {
        const struct vdb_def *wd = wds[w];
        struct vdb_line x[VDB_MAX_LIST / 2];
        size_t nx = 1;
        unsigned read = 100, skew = skews[w] >= 0 ? (unsigned)skews[w] : skew_left / nskewless;
        int random = 100;
        const struct vdb_kv *xk = proto_vdb_get(c, rd, "xfersize");
        x[0].size = 4096;
        x[0].share = 100;
        if (!xk)
            xk = proto_vdb_get(c, wd, "xfersize");
        if (xk && !(nx = vdb_xfer(c, xk, x)))
            goto out;
        if ((kv = proto_vdb_get(c, rd, "rdpct")) || (kv = proto_vdb_get(c, wd, "rdpct")))
            if (!vdb_pct(c, kv, kv->val, &read))
                goto out;
        if ((kv = proto_vdb_get(c, rd, "seekpct")) || (kv = proto_vdb_get(c, wd, "seekpct")))
            if (!vdb_seek(c, kv, kv->val, &random))
                goto out;
        if (random < 0) {
            eof = true;
            random = 0;
        }
        x[0].dist[0] = 0;
        if ((kv = proto_vdb_get(c, wd, "hotband")) &&
            !vdb_hotband(c, kv, random, sd_ranged, x[0].dist, sizeof(x[0].dist)))
            goto out;
        if (!skew)
            continue;
        for (size_t i = 0; i < nx; i++) {
            if (skew * x[i].share % 100) {
                proto_vdb_msg(c, wd->file, wd->line,
                              "error: wd=%s: skew %u%% of a %u%% transfer size is not a whole "
                              "percentage of the I/Os (a plan line's share is)",
                              wd->name, skew, x[i].share);
                goto out;
            }
            if (nlines >= PROTO_PLAN_MAX_LINES) {
                proto_vdb_msg(c, wd->file, wd->line, "error: rd=%s: more than %d lines in its mix",
                              rd->name, PROTO_PLAN_MAX_LINES);
                goto out;
            }
            lines[nlines] = (struct vdb_line){.size = x[i].size,
                                              .share = skew * x[i].share / 100,
                                              .read = read,
                                              .random = (unsigned)random};
            snprintf(lines[nlines++].dist, sizeof(lines[0].dist), "%s", x[0].dist);
        }
    }
    /* spec */
    iof_buf_addstr(&r->spec, "\"lines\": [");
    for (size_t i = 0; i < nlines; i++) {
        proto_plan_format_size(lines[i].size, s, sizeof(s));
        iof_buf_printf(&r->spec, "%s{\"size\": \"%s\"", i ? ",\n               " : "", s);
        if (nlines > 1)
            iof_buf_printf(&r->spec, ", \"share\": %u", lines[i].share);
        iof_buf_printf(&r->spec, ", \"read\": %u, \"random\": %u", lines[i].read, lines[i].random);
        if (lines[i].dist[0])
            iof_buf_printf(&r->spec, ", \"distribution\": \"%s\"", lines[i].dist);
        iof_buf_addc(&r->spec, '}');
    }
    iof_buf_addc(&r->spec, ']');
    if (nlines == 1) {
        proto_plan_format_size(lines[0].size, s, sizeof(s));
        snprintf(r->name, sizeof(r->name), "%.64s: %s %u%% read %u%% random", rd->name, s,
                 lines[0].read, lines[0].random);
    } else {
        snprintf(r->name, sizeof(r->name), "%.64s", rd->name);
    }
    if (eof) {
        uint64_t total = 0;
        for (size_t i = 0; i < nsd; i++) {
            if (!sd[i].range_bytes) {
                proto_vdb_msg(
                    c, sds[i]->file, sds[i]->line,
                    "error: seekpct=eof reads sd=%s to its end once, and its size is not in "
                    "the file (give size=, or a range in bytes)",
                    sds[i]->name);
                goto out;
            }
            total += sd[i].range_bytes;
        }
        if (nsd > 1 || nlines > 1) {
            proto_vdb_msg(
                c, rd->file, rd->line,
                "error: rd=%s: seekpct=eof over %s: the plan's io_limit ends a worker after "
                "an amount of I/O, which is exact for one SD and one workload only",
                rd->name, nsd > 1 ? "several SDs" : "a mix");
            goto out;
        }
        proto_plan_format_size(total, s, sizeof(s));
        iof_buf_printf(&r->spec, ", \"io_limit\": \"%s\"", s);
    }
    if ((kv = proto_vdb_get(c, rd, "maxdata"))) {
        uint64_t md;
        if (eof) {
            proto_vdb_bad(c, kv, "maxdata with seekpct=eof");
            goto out;
        }
        if (proto_vdb_size(kv->val, &md) || !md) {
            proto_vdb_bad(c, kv,
                          "not a size (maxdata below 200 counts passes over the SDs, which the "
                          "plan cannot)");
            goto out;
        }
        if (md < 200 * 1024 || md % nhosts) {
            proto_vdb_bad(
                c, kv,
                "a number of passes, or bytes that do not divide among %u hosts (the plan's "
                "io_limit is per worker)",
                nhosts);
            goto out;
        }
        proto_plan_format_size(md / nhosts, s, sizeof(s));
        iof_buf_printf(&r->spec, ", \"io_limit\": \"%s\"", s);
    }
    /* group */
    iof_buf_addstr(&r->group, "\"count\": 1, \"engine\": \"libaio\", ");
    iof_buf_printf(&r->group, "\"queue_depth\": %u,\n     ", threads);
    vdb_targets(c, sd, nsd, &r->group);
    /* data: vdbench writes a new random pattern for every write unless
     * compratio/dedupratio say otherwise. */
    {
        const struct vdb_kv *cr = proto_vdb_get(c, rd, "compratio"),
                            *dr = proto_vdb_gen(c, "dedupratio"),
                            *du = proto_vdb_gen(c, "dedupunit");
        unsigned comp = 0, dedupe = 0;
        if (!cr)
            cr = proto_vdb_gen(c, "compratio");
        for (int k = 0; k < 2; k++) {
            const struct vdb_kv *x = k ? dr : cr;
            double ratio;
            double pct;
            if (!x)
                continue;
            if (proto_vdb_num(x->val, &ratio) || ratio < 1) {
                proto_vdb_bad(c, x, "expected a ratio of 1 or more");
                goto out;
            }
            pct = 100.0 - 100.0 / ratio;
            if (pct != (double)(unsigned)pct) {
                if (!c->approximate) {
                    proto_vdb_bad(
                        c, x,
                        "1:%g leaves %.4g%% of the data %s, not a whole percentage as the "
                        "plan's data takes (import with --approximate to round it)",
                        ratio, 100.0 / ratio, k ? "unique" : "incompressible");
                    goto out;
                }
                proto_vdb_msg(c, x->file, x->line, "note: %s=%s: rounded to %u%% (--approximate)",
                              x->key, x->val, (unsigned)(pct + 0.5));
                pct = (double)(unsigned)(pct + 0.5);
            }
            *(k ? &dedupe : &comp) = (unsigned)pct;
        }
        if (cr || dr) {
            iof_buf_printf(&r->group,
                           ",\n     \"data\": {\"dedupe\": \"%u%%\", \"compress\": \"%u%%\"",
                           dedupe, comp);
            if (du) {
                uint64_t u;
                if (proto_vdb_size(du->val, &u) || !u) {
                    proto_vdb_bad(c, du, "not a size");
                    goto out;
                }
                proto_plan_format_size(u, s, sizeof(s));
                iof_buf_printf(&r->group, ", \"dedupe_unit\": \"%s\"", s);
            }
            iof_buf_addc(&r->group, '}');
        } else {
            iof_buf_addstr(&r->group, ",\n     \"pattern\": \"random\"");
        }
    }
    /* rate */
    if (!(iokv = proto_vdb_get(c, rd, "iorate"))) {
        proto_vdb_msg(c, rd->file, rd->line, "error: rd=%s has no iorate= (vdbench requires one)",
                      rd->name);
        goto out;
    }
    for (size_t w = 0; w < nwd; w++)
        if ((kv = proto_vdb_get(c, wds[w], "iorate"))) {
            proto_vdb_bad(c, kv,
                          "a wd= of its own rate (the plan rates a worker group, not a mix)");
            goto out;
        }
    if (!strcasecmp(iokv->val, "curve")) {
        const struct vdb_kv *ck = proto_vdb_get(c, rd, "curve");
        char buf[IOF_IMPORT_MAX_LINE + 1], *it[VDB_MAX_LIST];
        size_t n = proto_vdb_list(c, ck ? ck : iokv, ck ? ck->val : VDB_CURVE_DEFAULT, buf, it,
                                  VDB_MAX_LIST);
        iof_buf_addstr(&r->cycle, "\"rate\": {\"curve\": [");
        for (size_t i = 0; i < n; i++) {
            double p;
            if (proto_vdb_num(it[i], &p) || p <= 0 || p > 100 || p != (unsigned)p) {
                proto_vdb_bad(c, ck,
                              "'%s': the plan's curve takes whole percentages 1..100 of the "
                              "unthrottled rate",
                              it[i]);
                goto out;
            }
            iof_buf_printf(&r->cycle, "%s%u", i ? ", " : "", (unsigned)p);
        }
        iof_buf_addstr(&r->cycle, "]}");
    } else if (strcasecmp(iokv->val, "max")) {
        double rate;
        const struct vdb_kv *dk = proto_vdb_get(c, rd, "distribution");
        bool poisson = true; /* vdbench's default: exponential inter-arrival times */
        if (proto_vdb_num(iokv->val, &rate) || rate <= 0) {
            proto_vdb_bad(c, iokv,
                          "expected max, curve or one I/O rate (several rates are several runs: "
                          "write one rd= each)");
            goto out;
        }
        if (dk) {
            if (!strcasecmp(dk->val, "uniform") || !strcasecmp(dk->val, "deterministic") ||
                !strcasecmp(dk->val, "u") || !strcasecmp(dk->val, "d")) {
                poisson = false;
                if (tolower((unsigned char)dk->val[0]) == 'u')
                    proto_vdb_msg(
                        c, dk->file, dk->line,
                        "note: distribution=uniform (gaps uniform in 0..2x the mean) is run "
                        "with even gaps of the mean");
            } else if (strcasecmp(dk->val, "exponential") && strcasecmp(dk->val, "e")) {
                proto_vdb_bad(c, dk, "expected exponential, uniform or deterministic");
                goto out;
            }
        }
        /* vdbench divides a run's iorate among its hosts; each node runs one worker. */
        iof_buf_printf(&r->group, ",\n     \"rate\": {\"iops\": %.10g, \"arrival\": \"%s\"}",
                       rate / nhosts, poisson ? "poisson" : "uniform");
    }
    if (!vdb_cycle(c, rd, nlines, &r->cycle))
        goto out;
    ok = !r->spec.err && !r->group.err && !r->cycle.err;
out:
    free(sd);
    return ok;
}

/* Seconds as a plan duration in the largest unit that divides them. */
static void vdb_secs_str(uint64_t s, char *buf, size_t cap)
{
    if (s && s % 3600 == 0)
        snprintf(buf, cap, "%" PRIu64 "h", s / 3600);
    else if (s && s % 60 == 0)
        snprintf(buf, cap, "%" PRIu64 "m", s / 60);
    else
        snprintf(buf, cap, "%" PRIu64 "s", s);
}

static int vdb_emit(struct vdb_ctx *c, struct iof_buf *json)
{
    char d1[32], d2[32];
    struct vdb_run *runs;
    size_t nrd = 0, nr = 0;
    char hosts[64][VDB_NAME];
    unsigned nhosts = 0;
    int rc = 0;
    bool same_time = true;

    for (size_t i = 0; i < c->ndef; i++) {
        const struct vdb_def *d = &c->def[i];
        if (d->kind == VDB_RD && !d->is_default)
            nrd++;
        if (d->kind == VDB_HD && !d->is_default && strcasecmp(d->name, "localhost")) {
            const struct vdb_kv *cl = proto_vdb_get(c, d, "clients");
            if (cl && strcmp(cl->val, "1")) {
                proto_vdb_bad(c, cl, "simulated clients per host: give iofleet more agents");
                return 0;
            }
            if (nhosts >= sizeof(hosts) / sizeof(hosts[0])) {
                proto_vdb_msg(c, d->file, d->line, "error: more than %zu hosts",
                              sizeof(hosts) / sizeof(hosts[0]));
                return 0;
            }
            if (proto_import_text_bad(c->msgs, d->file, d->line, "host name", d->name)) {
                c->failed = true;
                return 0;
            }
            snprintf(hosts[nhosts++], VDB_NAME, "%s", d->name);
        }
    }
    if (!nrd) {
        proto_vdb_msg(c, c->name, 1, "error: no rd= (a parameter file runs its rd= definitions)");
        return 0;
    }
    if (!(runs = calloc(nrd, sizeof(*runs))))
        return -ENOMEM;
    for (size_t i = 0; i < c->ndef && !c->failed; i++) {
        const struct vdb_def *d = &c->def[i];
        if (d->kind != VDB_RD || d->is_default)
            continue;
        iof_buf_init(&runs[nr].spec, 0);
        iof_buf_init(&runs[nr].group, 0);
        iof_buf_init(&runs[nr].cycle, 0);
        if (!vdb_run(c, d, nhosts ? nhosts : 1, &runs[nr++]))
            break;
    }
    for (size_t i = 1; i < nr && !c->failed; i++) {
        const struct vdb_run *a = &runs[0], *b = &runs[i];
        if (strcmp(iof_buf_str(&a->group), iof_buf_str(&b->group))) {
            proto_vdb_msg(
                c, b->def->file, b->def->line,
                "error: rd=%s runs other SDs, threads, data or rate than rd=%s (line %u): a "
                "plan's worker groups are the same in every test (import it separately)",
                b->def->name, a->def->name, a->def->line);
            break;
        }
        if (strcmp(iof_buf_str(&a->cycle), iof_buf_str(&b->cycle))) {
            proto_vdb_msg(c, b->def->file, b->def->line,
                          "error: rd=%s has other for-loops or curve than rd=%s: a plan's cycle is "
                          "the same for every spec (import it separately)",
                          b->def->name, a->def->name);
            break;
        }
        if (a->interval_s != b->interval_s) {
            proto_vdb_msg(c, b->def->file, b->def->line,
                          "error: rd=%s reports every %" PRIu64 "s where rd=%s does every %" PRIu64
                          "s: a plan has one interval",
                          b->def->name, b->interval_s, a->def->name, a->interval_s);
            break;
        }
        if (a->elapsed_s != b->elapsed_s || a->warmup_s != b->warmup_s)
            same_time = false;
    }
    if (!c->failed && !c->notes.err) {
        char pname[256];
        size_t n = strlen(c->name);
        /* the plan is named after the file, without a .vdb */
        snprintf(pname, sizeof(pname), "%.*s",
                 n > 4 && !strcasecmp(c->name + n - 4, ".vdb") ? (int)n - 4 : (int)n, c->name);
        iof_buf_addstr(json, "{\n  \"name\": ");
        iof_json_escape(json, pname, IOF_JSON_TEXT);
        if (c->nnotes) {
            iof_buf_addstr(json, ",\n  \"notes\": [");
            iof_buf_addstr(json, c->notes.p);
            iof_buf_addc(json, ']');
        }
        iof_buf_addstr(json, ",\n  \"run\": {");
        if (same_time) {
            vdb_secs_str(runs[0].warmup_s, d1, sizeof(d1));
            vdb_secs_str(runs[0].elapsed_s - runs[0].warmup_s, d2, sizeof(d2));
            iof_buf_printf(json, "\"ramp\": \"%s\", \"duration\": \"%s\", ", d1, d2);
        }
        vdb_secs_str(runs[0].interval_s, d1, sizeof(d1));
        iof_buf_printf(json, "\"interval\": \"%s\"},\n  \"specs\": [\n", d1);
        for (size_t i = 0; i < nr; i++) {
            iof_buf_printf(json, "%s    {\"name\": ", i ? ",\n" : "");
            iof_json_escape(json, runs[i].name, IOF_JSON_TEXT);
            iof_buf_printf(json, ",\n     %s", iof_buf_str(&runs[i].spec));
            if (!same_time) {
                vdb_secs_str(runs[i].warmup_s, d1, sizeof(d1));
                vdb_secs_str(runs[i].elapsed_s - runs[i].warmup_s, d2, sizeof(d2));
                iof_buf_printf(json, ", \"ramp\": \"%s\", \"duration\": \"%s\"", d1, d2);
            }
            iof_buf_addc(json, '}');
        }
        iof_buf_addstr(json, "\n  ],\n  \"workers\": [\n    {\"nodes\": [");
        if (!nhosts)
            iof_buf_addstr(json, "\"*\"");
        for (unsigned h = 0; h < nhosts; h++) {
            iof_buf_addstr(json, h ? ", " : "");
            iof_json_escape(json, hosts[h], IOF_JSON_TEXT);
        }
        iof_buf_printf(json, "], %s}\n  ]", iof_buf_str(&runs[0].group));
        if (runs[0].cycle.len)
            iof_buf_printf(json, ",\n  \"cycle\": {%s}", iof_buf_str(&runs[0].cycle));
        iof_buf_addstr(json, "\n}\n");
        if (json->err)
            rc = json->err;
    }
    if (c->notes.err)
        rc = c->notes.err;
    for (size_t i = 0; i < nr; i++) {
        iof_buf_free(&runs[i].spec);
        iof_buf_free(&runs[i].group);
        iof_buf_free(&runs[i].cycle);
    }
    free(runs);
    return rc;
}

int proto_import_vdbench(const char *name, const char *text, size_t len, unsigned flags,
                         const char *dir, const char *const *vars, size_t nvars,
                         struct iof_buf *json, struct iof_buf *msgs, struct iof_diag *diag)
{
    struct vdb_ctx c = {.name = name,
                        .dir = dir,
                        .msgs = msgs,
                        .approximate = (flags & IOF_IMPORT_APPROXIMATE) != 0,
                        .vars = vars,
                        .nvars = nvars};
    char *copy;
    int rc;

    for (size_t i = 0; i < nvars; i++)
        if (!proto_import_vdbench_var_ok(vars[i]))
            return iof_diag_set(diag, IOF_EPLAN,
                                "--var takes NAME=VALUE, NAME letters, digits and '_'");
    if (len > IOF_IMPORT_MAX_TEXT)
        return iof_diag_set(diag, IOF_EPLAN, "%s: larger than %u bytes", name, IOF_IMPORT_MAX_TEXT);
    if (memchr(text, 0, len))
        return iof_diag_set(diag, IOF_EPLAN, "%s: a NUL byte: not a vdbench parameter file", name);
    iof_buf_init(&c.notes, 0);
    copy = malloc(len + 1);
    if (nvars && !(c.var_used = calloc(nvars, sizeof(*c.var_used)))) {
        free(copy);
        return -ENOMEM;
    }
    if (!copy) {
        free(c.var_used);
        return -ENOMEM;
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    rc = proto_vdb_parse(&c, name, copy);
    if (!rc && !c.failed && proto_vdb_check_keys(&c)) {
        proto_vdb_refuse_unexact(&c);
        if (!c.failed)
            rc = vdb_emit(&c, json);
    }
    /* vdbench stops on a command-line variable its file does not use; a
     * leftover --var is a warning here, as it changes nothing. */
    for (size_t i = 0; i < nvars && !rc && !c.failed; i++)
        if (!c.var_used[i])
            iof_buf_printf(msgs,
                           "%s: warning: --var %.*s: the file has no $%.*s or !%.*s, so it is not "
                           "used\n",
                           name, (int)strcspn(vars[i], "="), vars[i], (int)strcspn(vars[i], "="),
                           vars[i], (int)strcspn(vars[i], "="), vars[i]);
    if (!rc && msgs->err)
        rc = msgs->err;
    if (!rc && c.failed)
        rc = iof_diag_set(diag, IOF_EPLAN, "%s: cannot be imported (the reasons are above)", name);
    for (size_t i = 0; i < c.nowned; i++)
        free(c.owned[i]);
    free(c.owned);
    free(c.kv);
    free(c.def);
    free(c.var_used);
    iof_buf_free(&c.notes);
    free(copy);
    return rc;
}

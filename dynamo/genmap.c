/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/genmap.c - the expected generation of each block of a verified
 * test file (genmap.h): a state file in the workdir mapped shared, write
 * and read bookkeeping with atomics only. */
#include "dynamo/genmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dynamo/scope.h"

#define STATE_MAGIC 0x70616d6e65676f69ULL /* "iogenmap" */
#define STATE_HDR 64u

struct state_hdr {
    uint64_t magic;
    uint64_t shift;
    uint64_t n;
    uint64_t dev, ino;
    uint64_t reserved[3];
};
_Static_assert(sizeof(struct state_hdr) == STATE_HDR, "state file header");

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
    return h;
}

void dyn_genmap_state_name(const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, ".iofleet-verify-%016" PRIx64 ".gen", fnv1a(path));
}

int dyn_genmap_open(struct dyn_scope *scope, const char *path, dev_t dev, ino_t ino, uint64_t size,
                    struct dyn_genmap **out, struct iof_diag *diag)
{
    char name[64];
    const char *base;
    struct dyn_genmap *m;
    struct state_hdr h, want = {.magic = STATE_MAGIC,
                                .shift = DYN_GENMAP_SHIFT,
                                .n = (size + (1u << DYN_GENMAP_SHIFT) - 1) >> DYN_GENMAP_SHIFT,
                                .dev = (uint64_t)dev,
                                .ino = (uint64_t)ino};
    int dirfd, fd, r;
    struct stat st;

    *out = NULL;
    if (want.n == 0 || want.n > DYN_GENMAP_MAX)
        return 0;
    dyn_genmap_state_name(path, name, sizeof(name));
    dirfd = dyn_scope_open_parent(scope, name, &base, diag);
    if (dirfd < 0)
        return dirfd;
    fd = openat(dirfd, base, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
    r = fd < 0 ? -errno : 0;
    close(dirfd);
    if (r)
        return iof_diag_set(diag, r, "verify state '%s' in the workdir: %s", name, strerror(-r));
    m = calloc(1, sizeof(*m));
    if (!m) {
        close(fd);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    m->n = want.n;
    m->maplen = STATE_HDR + (size_t)want.n * 8;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        r = iof_diag_set(diag, IOF_EDENIED, "verify state '%s' in the workdir: not a plain file",
                         name);
        goto fail;
    }
    /* Another layout, or another file under the same name: start afresh. */
    if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(&h, &want, sizeof(h)) != 0 ||
        (uint64_t)st.st_size != m->maplen) {
        if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)m->maplen) < 0 ||
            pwrite(fd, &want, sizeof(want), 0) != (ssize_t)sizeof(want)) {
            r = iof_diag_set(diag, -errno, "verify state '%s' in the workdir: %s", name,
                             strerror(errno));
            goto fail;
        }
    }
    m->map = mmap(NULL, m->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m->map == MAP_FAILED) {
        m->map = NULL;
        r = iof_diag_set(diag, -errno, "verify state '%s': %s", name, strerror(errno));
        goto fail;
    }
    m->gen = (_Atomic uint64_t *)(void *)((uint8_t *)m->map + STATE_HDR);
    m->busy = calloc(m->n, sizeof(*m->busy));
    if (!m->busy) {
        r = iof_diag_set(diag, -ENOMEM, "out of memory");
        goto fail;
    }
    atomic_init(&m->done, 0);
    close(fd);
    *out = m;
    return 0;
fail:
    close(fd);
    dyn_genmap_close(m);
    return r;
}

int dyn_genmap_forget(struct dyn_scope *scope, const char *path, struct iof_diag *diag)
{
    char name[DYN_GENMAP_STATE_NAME_MAX];
    const char *base;
    int dirfd, r;

    dyn_genmap_state_name(path, name, sizeof(name));
    dirfd = dyn_scope_open_parent(scope, name, &base, diag);
    if (dirfd < 0)
        return dirfd;
    r = unlinkat(dirfd, base, 0) < 0 && errno != ENOENT ? -errno : 0;
    close(dirfd);
    if (r)
        return iof_diag_set(diag, r, "verify state '%s' in the workdir: %s", name, strerror(-r));
    return 0;
}

void dyn_genmap_close(struct dyn_genmap *m)
{
    if (!m)
        return;
    if (m->map)
        munmap(m->map, m->maplen);
    free((void *)m->busy);
    free(m);
}

/* Granules [*a, *b) a range touches, clipped to the map. */
static bool span(const struct dyn_genmap *m, uint64_t off, uint32_t len, uint64_t *a, uint64_t *b)
{
    *a = off >> DYN_GENMAP_SHIFT;
    *b = (off + len + (1u << DYN_GENMAP_SHIFT) - 1) >> DYN_GENMAP_SHIFT;
    if (*b > m->n)
        *b = m->n;
    return *a < *b;
}

void dyn_genmap_write_start(struct dyn_genmap *m, uint64_t off, uint32_t len)
{
    uint64_t a, b;

    if (!span(m, off, len, &a, &b))
        return;
    for (uint64_t g = a; g < b; g++) {
        /* Unknown until it completes (a crash leaves it unknown, never
         * wrong). Alone: whatever was ambiguous is settled by this write;
         * with another in flight, neither can be judged. */
        if (atomic_fetch_add_explicit(&m->busy[g], 1, memory_order_acq_rel))
            atomic_store_explicit(&m->gen[g], DYN_GENMAP_AMB, memory_order_release);
        else
            atomic_store_explicit(&m->gen[g], 0, memory_order_release);
    }
}

void dyn_genmap_write_done(struct dyn_genmap *m, uint64_t off, uint32_t len, uint64_t gen, bool ok)
{
    uint64_t a, b;
    bool head = (off & ((1u << DYN_GENMAP_SHIFT) - 1)) == 0;

    if (!span(m, off, len, &a, &b))
        return;
    for (uint64_t g = a; g < b; g++) {
        /* The block's header is at its first granule; the others hold no
         * block start any more. Stored before the count drops, so a write
         * issued after this one is seen done finds it. */
        uint64_t v = atomic_load_explicit(&m->gen[g], memory_order_acquire);
        uint64_t nv = g == a && head && ok ? gen & ~DYN_GENMAP_AMB : 0;
        if ((v & DYN_GENMAP_AMB) || atomic_load_explicit(&m->busy[g], memory_order_acquire) > 1)
            nv |= DYN_GENMAP_AMB;
        atomic_store_explicit(&m->gen[g], nv, memory_order_release);
        atomic_fetch_sub_explicit(&m->busy[g], 1, memory_order_acq_rel);
    }
    atomic_fetch_add_explicit(&m->done, 1, memory_order_acq_rel);
}

static bool quiet(struct dyn_genmap *m, uint64_t off, uint32_t len)
{
    uint64_t a, b;

    if (!span(m, off, len, &a, &b))
        return false;
    for (uint64_t g = a; g < b; g++)
        if (atomic_load_explicit(&m->busy[g], memory_order_acquire))
            return false;
    return true;
}

void dyn_genmap_read_start(struct dyn_genmap *m, uint64_t off, uint32_t len,
                           struct dyn_genmap_ticket *tk)
{
    tk->done = atomic_load_explicit(&m->done, memory_order_acquire);
    tk->quiet = quiet(m, off, len);
}

bool dyn_genmap_read_calm(struct dyn_genmap *m, uint64_t off, uint32_t len,
                          const struct dyn_genmap_ticket *tk)
{
    return tk->quiet && quiet(m, off, len);
}

bool dyn_genmap_read_quiet(struct dyn_genmap *m, uint64_t off, uint32_t len,
                           const struct dyn_genmap_ticket *tk)
{
    return dyn_genmap_read_calm(m, off, len, tk) &&
           atomic_load_explicit(&m->done, memory_order_acquire) == tk->done;
}

uint64_t dyn_genmap_expected(const struct dyn_genmap *m, uint64_t off)
{
    uint64_t g = off >> DYN_GENMAP_SHIFT, v;

    if ((off & ((1u << DYN_GENMAP_SHIFT) - 1)) || g >= m->n)
        return 0;
    v = atomic_load_explicit(&m->gen[g], memory_order_acquire);
    return v & DYN_GENMAP_AMB ? 0 : v;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_hist.c - common/hist: the histogram wire formats, sparse
 * and runs.
 *
 * The input is one encoded histogram (the bytes inside a stats `lat`, before
 * base64, or inside a binary stats body), tried as both forms. A refused
 * input must leave the histogram reset. An accepted one must be internally
 * consistent (bucket sum == count, min <= max in the first and last
 * non-empty buckets), encode back to exactly the input bytes in its form
 * (each form has one encoding per histogram) and to the same histogram in
 * the other form, and give percentiles within [min, max]; merging it into an
 * empty histogram must change nothing.
 */
#include "fuzz.h"

#include "common/err.h"
#include "common/hist.h"

#include <errno.h>
#include <string.h>

/* ~19 KiB each: static, not on the stack. Only this function uses them. */
static struct iof_hist h, merged, empty;
static uint8_t out[IOF_HIST_BUCKETS * 20 + 64];

static struct iof_hist other;

/* The run form of the input: checked like the sparse one, and against it. */
static void runs_check(const uint8_t *data, size_t size)
{
    int rc = iof_hist_decode_runs(&h, data, size);
    long n;

    iof_hist_reset(&empty);
    if (rc) {
        FUZZ_CHECK(rc == IOF_EPROTO, "runs decode returned %d", rc);
        FUZZ_CHECK(memcmp(&h, &empty, sizeof(h)) == 0, "a refused histogram is not reset (runs)");
        return;
    }
    FUZZ_CHECK(iof_hist_runs_encoded_len(&h) == size, "runs length %zu for %zu bytes",
               iof_hist_runs_encoded_len(&h), size);
    n = iof_hist_encode_runs(&h, out, sizeof(out));
    FUZZ_CHECK(n >= 0 && (size_t)n == size && memcmp(out, data, size) == 0,
               "runs re-encoding gives %ld bytes, not the %zu decoded", n, size);
    /* The same histogram through the sparse form. */
    n = iof_hist_encode(&h, out, sizeof(out));
    FUZZ_CHECK(n >= 0 && iof_hist_decode(&other, out, (size_t)n) == 0 &&
                   memcmp(&other, &h, sizeof(h)) == 0,
               "the sparse form of a run-form histogram differs");
    iof_hist_reset(&merged);
    FUZZ_CHECK(iof_hist_decode_runs_add_summary(&merged, data, size, NULL) == 0 &&
                   memcmp(&merged, &h, sizeof(h)) == 0,
               "runs: decoding into an empty histogram differs");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc;

    runs_check(data, size);
    rc = iof_hist_decode(&h, data, size);

    iof_hist_reset(&empty);
    if (rc) {
        FUZZ_CHECK(rc == IOF_EPROTO, "decode returned %d", rc);
        FUZZ_CHECK(memcmp(&h, &empty, sizeof(h)) == 0, "a refused histogram is not reset");
        return 0;
    }

    uint64_t total = 0;
    unsigned first = IOF_HIST_BUCKETS, last = 0;
    for (unsigned i = 0; i < IOF_HIST_BUCKETS; i++) {
        if (!h.buckets[i])
            continue;
        total += h.buckets[i];
        if (first == IOF_HIST_BUCKETS)
            first = i;
        last = i;
    }
    FUZZ_CHECK(total == h.count, "buckets add up to %llu, count %llu", (unsigned long long)total,
               (unsigned long long)h.count);
    if (h.count == 0) {
        FUZZ_CHECK(memcmp(&h, &empty, sizeof(h)) == 0, "an empty histogram is not the reset one");
    } else {
        FUZZ_CHECK(h.min_ns <= h.max_ns, "min %llu > max %llu", (unsigned long long)h.min_ns,
                   (unsigned long long)h.max_ns);
        FUZZ_CHECK(iof_hist_index(h.min_ns) == first && iof_hist_index(h.max_ns) == last,
                   "min/max outside the first/last non-empty bucket");
    }

    size_t need = iof_hist_encoded_max(&h);
    FUZZ_CHECK(need == size, "encoded_max %zu for a %zu-byte encoding", need, size);
    FUZZ_CHECK(need <= sizeof(out), "encoded_max %zu over %zu", need, sizeof(out));
    FUZZ_CHECK(iof_hist_encode(&h, out, need - 1) == -ENOBUFS || need == 0,
               "encode into a short buffer did not refuse");
    long n = iof_hist_encode(&h, out, sizeof(out));
    FUZZ_CHECK(n >= 0 && (size_t)n == size && memcmp(out, data, size) == 0,
               "re-encoding gives %ld bytes, not the %zu decoded", n, size);

    for (unsigned k = 0; k <= 100; k += 5) {
        uint64_t p = iof_hist_percentile(&h, k / 100.0);
        if (h.count)
            FUZZ_CHECK(p >= h.min_ns && p <= h.max_ns, "p%u %llu outside [%llu, %llu]", k,
                       (unsigned long long)p, (unsigned long long)h.min_ns,
                       (unsigned long long)h.max_ns);
        else
            FUZZ_CHECK(p == 0, "p%u of an empty histogram is %llu", k, (unsigned long long)p);
    }
    (void)iof_hist_mean(&h);

    iof_hist_reset(&merged);
    iof_hist_merge(&merged, &h);
    FUZZ_CHECK(memcmp(&merged, &h, sizeof(h)) == 0, "empty + h != h");

    /* The same histogram through the run form. */
    n = iof_hist_encode_runs(&h, out, sizeof(out));
    FUZZ_CHECK(n >= 0 && iof_hist_decode_runs(&other, out, (size_t)n) == 0 &&
                   memcmp(&other, &h, sizeof(h)) == 0,
               "the run form of a sparse histogram differs");
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/replay.c - runs a fuzz target over a corpus, without libFuzzer.
 *
 *     replay_<name> PATH...
 *
 * Each PATH is a file or a directory whose regular files (not the hidden
 * ones) are read in name order; every file is one input, passed to
 * LLVMFuzzerTestOneInput() in a buffer of exactly its size, so ASan sees an
 * over-read by one byte. Exit status 0 after at least one input, 1 when no
 * input was found (a missing corpus is an error, not a pass) or a file could
 * not be read; a finding aborts the process. CTest runs one per target as
 * fuzz.replay_<name>, with the gcc and ASan builds as well as clang's.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* Reads the whole file into a new buffer of exactly its size (1 byte for an
 * empty file, whose size is still reported as 0). 0 or -errno. */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    uint8_t *buf;

    *out = NULL;
    *len = 0;
    if (!f)
        return -errno;
    if (fstat(fileno(f), &st) != 0 || st.st_size < 0) {
        int err = -errno;
        fclose(f);
        return err ? err : -EIO;
    }
    buf = malloc(st.st_size ? (size_t)st.st_size : 1);
    if (!buf) {
        fclose(f);
        return -ENOMEM;
    }
    if (st.st_size && fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        free(buf);
        fclose(f);
        return -EIO;
    }
    fclose(f);
    *out = buf;
    *len = (size_t)st.st_size;
    return 0;
}

/* Runs one file; returns 0 or -errno (reported here). */
static int run_file(const char *path)
{
    uint8_t *data;
    size_t len;
    int rc = read_file(path, &data, &len);

    if (rc) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(-rc));
        return rc;
    }
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    return 0;
}

static int not_hidden(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* Runs every regular file of dir; adds them to *count. 0 or -errno. */
static int run_dir(const char *dir, size_t *count)
{
    struct dirent **names;
    int n = scandir(dir, &names, not_hidden, alphasort), rc = 0;

    if (n < 0) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -errno;
    }
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        if (!rc &&
            snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) < (int)sizeof(path) &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rc = run_file(path);
            *count += rc == 0;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    size_t count = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int rc;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        if (S_ISDIR(st.st_mode)) {
            rc = run_dir(argv[i], &count);
        } else {
            rc = run_file(argv[i]);
            count += rc == 0;
        }
        if (rc)
            return 1;
    }
    printf("replay: %zu input%s, no finding\n", count, count == 1 ? "" : "s");
    return count ? 0 : 1;
}

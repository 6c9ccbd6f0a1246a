/* SPDX-License-Identifier: Apache-2.0 */
/* common/outfile.h - the one way iofleet writes a file a user named on its
 * command line (result files, reports, imported plans, certificates).
 *
 * The file is written under a temporary name made with O_CREAT|O_EXCL|
 * O_NOFOLLOW in the same directory, then renamed over the name: nothing is
 * ever written through a symbolic link, a link's target is never created, and
 * readers see no file or a whole one. Existence is judged with lstat(): a
 * regular file or a symbolic link (dangling or not) at the name is refused
 * unless IOF_OUTFILE_FORCE, and with it the name (the link itself) is
 * replaced. A directory, a block device or a socket is always refused. A
 * FIFO or character device at the name (not through a link) is written as it
 * is, and so are "-" and "/dev/stdout" (standard output) and "/dev/stderr".
 *
 * A file written as it goes (a run's CSV) publishes early: after
 * iof_outfile_publish() the name holds the file and later writes land in it
 * (the manager's own new file, never a link's target).
 *
 * IOF_OUTFILE_APPEND (a log that every run adds to, as Iometer's results
 * file) writes at the end of the regular file at the name itself, creating
 * it when there is none (O_APPEND|O_CREAT|O_NOFOLLOW): nothing already in it
 * is rewritten, a symbolic link at the name is refused (never followed, even
 * with IOF_OUTFILE_FORCE, which it ignores), so is a file with other hard
 * links (appending would change it under names the user did not give), and
 * one another process holds an exclusive flock() on (another run appending).
 * The lock is held until the file is closed. A file created here and still
 * empty is removed by iof_outfile_abort().
 */
#ifndef IOF_COMMON_OUTFILE_H
#define IOF_COMMON_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/err.h"

enum iof_outfile_flag {
    IOF_OUTFILE_FORCE = 1 << 0, /* replace what exists at the name */
    IOF_OUTFILE_SEEKABLE =
        1 << 1,                  /* refuse stdout, FIFOs and devices (a file rewritten in place) */
    IOF_OUTFILE_APPEND = 1 << 2, /* add to the end of the file at the name (below) */
};

struct iof_outfile {
    int fd;     /* write here; -1 when closed */
    FILE *f;    /* iof_outfile_stdio()'s stream, which owns fd; NULL without */
    char *path; /* the name as given */
    char *tmp;  /* the temporary name until published; NULL once published or special */
    unsigned flags;
    bool special; /* stdout, stderr, a FIFO or a character device: written in place */
    bool created; /* IOF_OUTFILE_APPEND: the file did not exist and was made here */
};

#define IOF_OUTFILE_INIT                                                                           \
    {                                                                                              \
        .fd = -1                                                                                   \
    }

/* Checks what is at path without following a link (the early refusal of a
 * command line, before anything runs): 0 when the name may be written with
 * these flags, else an error with diag "PATH: REASON" (-EEXIST: exists and no
 * IOF_OUTFILE_FORCE; -EISDIR; -EINVAL: a block device, socket, or with
 * IOF_OUTFILE_SEEKABLE a FIFO, device or stdout). */
int iof_outfile_check(const char *path, unsigned flags, struct iof_diag *diag);

/* Opens o for writing path: checks as iof_outfile_check(), then creates the
 * temporary file PATH.tmp-XXXXXX (mode 0666 & ~umask by default, or mode
 * when not 0) or opens the special file. o must be IOF_OUTFILE_INIT or
 * closed. 0, or an error with diag naming the path; o is then closed. */
int iof_outfile_open(struct iof_outfile *o, const char *path, mode_t mode, unsigned flags,
                     struct iof_diag *diag);

/* A stdio stream over o->fd (64 KiB buffer), owned by o; NULL with errno. */
FILE *iof_outfile_stdio(struct iof_outfile *o);

/* Flushes and fsyncs what was written, renames the temporary file to the
 * name (without IOF_OUTFILE_FORCE only if the name is still free, judged
 * atomically), and fsyncs the directory. Later writes go to the published
 * file. No-op when already published or special. 0 or an error with diag;
 * the temporary file then stays (o->tmp names it). */
int iof_outfile_publish(struct iof_outfile *o, struct iof_diag *diag);

/* Publishes (unless done) and closes; o is closed on return. On an error
 * the temporary file is removed, or with keep_on_failure kept and named in
 * diag (measured data a failed rename must not lose). */
int iof_outfile_close(struct iof_outfile *o, bool keep_on_failure, struct iof_diag *diag);

/* Closes and unlinks the temporary file of an unpublished o (a published or
 * special file stays as written). Accepts a closed o. */
void iof_outfile_abort(struct iof_outfile *o);

/* Writes the whole of data to path through the steps above (one call for a
 * file produced at once): 0 or an error with diag; nothing is left at the
 * name or in the directory on failure. */
int iof_outfile_write(const char *path, mode_t mode, unsigned flags, const void *data, size_t len,
                      struct iof_diag *diag);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import.h - importers of other tools' workload files into plan JSON:
 * fio job files (proto/import_fio.c), Iometer configuration files
 * (proto/import_icf.c) and vdbench parameter files (proto/import_vdbench.c).
 *
 * An importer reads hostile text: lines are bounded (IOF_IMPORT_MAX_LINE
 * bytes), so are the number of lines, sections and options; garbage is
 * refused with a message, never a crash.
 *
 * Messages: one line each, "NAME:LINE: ...", appended to `msgs` with a
 * newline after each:
 *   "job.fio:7: ignored: group_reporting (reporting only, not the load)"
 *   "job.fio:9: note: verify=md5: checked with crc32c (--approximate)"
 *   "job.fio:3: error: cannot map rw=trim: iofleet issues reads and writes only"
 * Lines with "error:" are what made the import fail: anything that changes
 * the load and cannot be reproduced exactly, unless APPROXIMATE accepts it
 * with a "note:". */
#ifndef IOF_PROTO_IMPORT_H
#define IOF_PROTO_IMPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"

#define IOF_IMPORT_MAX_TEXT (1u << 20) /* bytes of input */
#define IOF_IMPORT_MAX_LINE 4096u      /* bytes of one line */
#define IOF_IMPORT_MAX_LINES 100000u
#define IOF_IMPORT_MAX_JOBS 256u    /* sections */
#define IOF_IMPORT_MAX_OPTIONS 8192 /* key=value lines in all */

/* Appends one message "NAME:LINE: TEXT" (escaped as common/text.h does for
 * a terminal: "\x1b") and a newline to msgs; true when TEXT starts with
 * "error:" (the import fails). For the importers. */
bool proto_import_vmsg(struct iof_buf *msgs, const char *name, size_t line, const char *fmt,
                       va_list ap) __attribute__((format(printf, 4, 0)));
bool proto_import_msg(struct iof_buf *msgs, const char *name, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The importers' check of a name or path read from the file (`what`: "access
 * specification name", "section name", "option 'filename'"): false when
 * value keeps common/text.h's policy; else true with the message
 * "NAME:LINE: error: WHAT 'VALUE': must not contain control characters,
 * got \x1b (a control character) at byte N" appended to msgs. */
bool proto_import_text_bad(struct iof_buf *msgs, const char *name, size_t line, const char *what,
                           const char *value);

/* proto_import_fio() flags. APPROXIMATE: accept what cannot be exact
 * (buffered I/O run with O_DIRECT...), each approximation a "note:". */
#define IOF_IMPORT_APPROXIMATE 1u

/* Imports the fio job file `text` (`len` bytes, need not be NUL-terminated;
 * `name` is used in messages) as plan JSON appended to `json`, with the
 * messages above in `msgs`. Every message other than "ignored:" and "error:"
 * (a "note:") is also kept in the plan's
 * "notes", so what the plan does not reproduce stays with it. Returns 0
 * (warnings may be in msgs), IOF_EPLAN when something that changes the load cannot be
 * mapped (msgs says what, diag sums it up) or -ENOMEM. The JSON is not
 * validated: the caller passes it to proto_plan_parse(). */
int proto_import_fio(const char *name, const char *text, size_t len, unsigned flags,
                     struct iof_buf *json, struct iof_buf *msgs, struct iof_diag *diag);

/* The same for an Iometer configuration file (.icf). `maps` (borrowed,
 * `nmaps` entries) are "NAME=PATH": a target whose whole name or first word
 * ("C:" of "C: \"label\"") is NAME gets PATH; any other target is written as
 * "iometer:NAME", a placeholder the plan loader refuses by name.
 * `sector_size` (bytes, 0: not known) is the disks' sector size, the unit
 * of Iometer's starting sector, maximum disk size and align 0: without it a
 * non-zero starting sector or maximum disk size is an error, and align 0 is
 * 512 (noted). */
int proto_import_icf(const char *name, const char *text, size_t len, const char *const *maps,
                     size_t nmaps, unsigned sector_size, struct iof_buf *json, struct iof_buf *msgs,
                     struct iof_diag *diag);

/* The same for a vdbench raw-I/O parameter file (HCIBench's too). `dir`
 * (borrowed, NULL: include= is refused) is the directory include= files are
 * read from. `vars` (borrowed, `nvars` entries "NAME=VALUE", NAME letters,
 * digits and '_') are vdbench's command-line variables: each $NAME or !NAME
 * of the file (and of its include= files) is replaced by VALUE; one without
 * a value is an error naming it and its line, a var the file does not use a
 * "warning:" line in msgs; a malformed entry is IOF_EPLAN. Flags as for fio
 * (APPROXIMATE: fractions rounded, buffered SDs run with O_DIRECT, each a
 * "note:" kept in the plan's notes). */
int proto_import_vdbench(const char *name, const char *text, size_t len, unsigned flags,
                         const char *dir, const char *const *vars, size_t nvars,
                         struct iof_buf *json, struct iof_buf *msgs, struct iof_diag *diag);

/* True when var is "NAME=VALUE" with a NAME vdbench's $NAME can spell
 * (letters, digits, '_'); what `iofleet import --var` checks. */
bool proto_import_vdbench_var_ok(const char *var);

/* True when text's first line that is not a comment starts a vdbench
 * definition (sd=, wd=, rd=, hd=, or a general parameter): how `iofleet
 * import` tells a vdbench file whose name does not. */
bool proto_import_vdbench_detect(const char *text, size_t len);

#endif

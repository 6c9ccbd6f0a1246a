/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_import.c - proto/import_fio.c, proto/import_icf.c and
 * proto/import_vdbench.c: the fio job file, Iometer configuration file and
 * vdbench parameter file importers.
 *
 * Input: an Iometer file when it starts with "Version " (imported with two
 * --map pairs), a vdbench file when its first definition is sd=, wd=, rd=
 * or hd= (include= refused), else a fio job file. The importer must accept it or refuse it with
 * IOF_EPLAN (or -ENOMEM) and a one-line summary; every message it gives is
 * one line starting "j.fio:LINE: ". An accepted file's JSON goes through the
 * plan loader, which must accept it or refuse it with a one-line message
 * (the importer's output is never a JSON syntax error), and an accepted plan
 * frees cleanly. */
#include "fuzz.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/spec.h"
#include "proto/import.h"
#include "proto/plan.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct iof_buf json = IOF_BUF_INIT, msgs = IOF_BUF_INIT;
    struct iof_diag diag = {{0}};
    struct iof_plan plan = {0};
    static const char *const maps[] = {"PHYSICALDRIVE:1=/dev/sdb", "C:=data.tst"};
    static const char *const vars[] = {"lun=/dev/sdb", "n=4"};
    bool icf = size >= 8 && !memcmp(data, "Version ", 8);
    bool vdb = !icf && proto_import_vdbench_detect((const char *)data, size);
    int rc = icf ? proto_import_icf("j.fio", (const char *)data, size, maps, 2, size % 2 ? 4096 : 0,
                                    &json, &msgs, &diag)
             : vdb ? proto_import_vdbench("j.fio", (const char *)data, size, IOF_IMPORT_APPROXIMATE,
                                          NULL, vars, 2, &json, &msgs, &diag)
                   : proto_import_fio("j.fio", (const char *)data, size, IOF_IMPORT_APPROXIMATE,
                                      &json, &msgs, &diag);

    FUZZ_CHECK(rc == 0 || rc == IOF_EPLAN || rc == -ENOMEM, "unexpected rc %d", rc);
    if (rc == IOF_EPLAN)
        FUZZ_CHECK(diag.msg[0] && !strchr(diag.msg, '\n'), "summary '%s' not one line", diag.msg);
    for (const char *m = msgs.p; m && *m;) {
        const char *nl = strchr(m, '\n');
        FUZZ_CHECK(nl != NULL, "a message without its newline");
        FUZZ_CHECK(!strncmp(m, "j.fio:", 6), "message '%.*s' without FILE:", (int)(nl - m), m);
        for (const char *q = m; q < nl; q++)
            FUZZ_CHECK((unsigned char)*q >= 0x20 && *q != 0x7f, "control byte in a message");
        m = nl + 1;
    }
    if (!rc) {
        FUZZ_CHECK(json.p != NULL, "accepted without JSON");
        rc = proto_plan_parse("j.fio", json.p, json.len, NULL, 0, &plan, &diag);
        FUZZ_CHECK(rc == 0 || rc == IOF_EPLAN || rc == -ENOMEM, "plan rc %d", rc);
        if (rc == IOF_EPLAN) {
            FUZZ_CHECK(!strchr(diag.msg, '\n'), "plan message not one line");
            FUZZ_CHECK(strncmp(diag.msg, "j.fio: invalid JSON", 19) &&
                           strncmp(diag.msg, "j.fio: line ", 12),
                       "the importer wrote bad JSON: %s\n%s", diag.msg, json.p);
        }
        iof_plan_free(&plan);
    }
    iof_buf_free(&json);
    iof_buf_free(&msgs);
    return 0;
}

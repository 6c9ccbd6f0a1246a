/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_api_plans.c - serve's plan endpoints (manager/api_plans.c) and
 * the import driver they share with `iofleet import` (manager/import_drive.c).
 *
 * Checked: a library name is 1 to 64 of [A-Za-z0-9._-], not starting with '.', none of the
 * API's own paths, and a refused one is named; the import's query parameters follow the
 * CLI's option rules (format, map, var given twice, sector-size, approximate, unknown ones,
 * a file name with '/'), each refusal naming the parameter; an import answers the plan as a
 * string and every importer message as a note with its line; a refused file's message
 * names its line; an export of a plan the loader refuses is the loader's message. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/buf.h"
#include "manager/api_plans.h"
#include "manager/import_drive.h"

static void test_names(void **state)
{
    static const char *good[] = {"a", "quickstart", "my-plan_2.v1", "A.json.bak", "x."};
    static const char *bad[] = {"",    ".x",    "..",     "../x",   "a/b", "a b",
                                "a:b", "check", "import", "export", "é"};
    char longest[66];
    struct iof_diag d = {{0}};

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_int_equal(mgr_api_plans_name_check(good[i], &d), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&d, 0, sizeof(d));
        assert_int_equal(mgr_api_plans_name_check(bad[i], &d), -EINVAL);
        assert_non_null(strstr(d.msg, "1 to 64 letters, digits"));
    }
    memset(longest, 'a', 64);
    longest[64] = '\0';
    assert_int_equal(mgr_api_plans_name_check(longest, &d), 0);
    longest[64] = 'a';
    longest[65] = '\0';
    assert_int_equal(mgr_api_plans_name_check(longest, &d), -EINVAL);
}

/* Sets one parameter on a new query; returns its result with d's message. */
static int param(const char *key, const char *value, struct iof_diag *d)
{
    struct mgr_api_import *q = mgr_api_import_new();
    int rc;

    assert_non_null(q);
    memset(d, 0, sizeof(*d));
    rc = mgr_api_import_param(q, key, value, d);
    mgr_api_import_free(q);
    return rc;
}

static void test_import_params(void **state)
{
    struct mgr_api_import *q;
    struct iof_diag d;

    (void)state;
    assert_int_equal(param("format", "auto", &d), 0);
    assert_int_equal(param("format", "icf", &d), 0);
    assert_int_equal(param("format", "xls", &d), -EINVAL);
    assert_string_equal(d.msg, "unknown format 'xls' (expected fio, icf or vdbench)");
    assert_int_equal(param("map", "C:=/dev/sdb", &d), 0);
    assert_int_equal(param("map", "=/dev/sdb", &d), -EINVAL);
    assert_non_null(strstr(d.msg, "map takes NAME=PATH"));
    assert_int_equal(param("sector-size", "4096", &d), 0);
    assert_int_equal(param("sector", "512", &d), 0);
    assert_int_equal(param("sector-size", "520", &d), -EINVAL);
    assert_string_equal(d.msg, "sector-size takes 512 or 4096 (bytes), got '520'");
    assert_int_equal(param("approximate", "1", &d), 0);
    assert_int_equal(param("approx", "yes", &d), -EINVAL);
    assert_non_null(strstr(d.msg, "approx takes 1 or 0"));
    assert_int_equal(param("var", "a-b=1", &d), -EINVAL);
    assert_int_equal(param("name", "dir/job.fio", &d), -EINVAL);
    assert_int_equal(param("colour", "red", &d), -EINVAL);
    assert_non_null(strstr(d.msg, "unknown parameter 'colour'"));

    q = mgr_api_import_new();
    assert_int_equal(mgr_api_import_param(q, "var", "a=1", &d), 0);
    assert_int_equal(mgr_api_import_param(q, "var", "a=2", &d), -EINVAL);
    assert_string_equal(d.msg, "var a is given twice");
    mgr_api_import_free(q);
}

static void test_import_answer(void **state)
{
    static const char job[] = "[job]\nbs=4k\nrw=randread\ngroup_reporting\nsize=1m\n"
                              "filename=f\n";
    struct mgr_api_import *q = mgr_api_import_new();
    struct iof_buf out = IOF_BUF_INIT, json = IOF_BUF_INIT, msgs = IOF_BUF_INIT;
    struct mgr_import_opts o = {0};
    struct iof_diag d = {{0}};
    char note[256];
    cJSON *j, *n;

    (void)state;
    assert_int_equal(mgr_api_import_param(q, "name", "job.fio", &d), 0);
    assert_int_equal(mgr_api_import_run(q, job, strlen(job), &out, &d), 0);
    mgr_api_import_free(q);
    /* The plan is the driver's bytes, as `iofleet import` writes them. */
    assert_int_equal(mgr_import_text(&o, "fio", "job.fio", job, strlen(job), NULL, &json, &msgs,
                                     note, sizeof(note), &d),
                     0);
    j = cJSON_Parse(out.p);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "format")->valuestring, "fio");
    assert_string_equal(cJSON_GetObjectItem(j, "plan")->valuestring, json.p);
    n = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "notes"), 0);
    assert_non_null(n);
    assert_int_equal(cJSON_GetObjectItem(n, "line")->valueint, 4);
    assert_non_null(
        strstr(cJSON_GetObjectItem(n, "message")->valuestring, "ignored: group_reporting"));
    cJSON_Delete(j);
    iof_buf_free(&out);
    iof_buf_free(&json);
    iof_buf_free(&msgs);
}

static void test_import_refused(void **state)
{
    static const char job[] = "[job]\nbs=4k\nrw=trim\nfilename=f\n";
    struct mgr_api_import *q = mgr_api_import_new();
    struct iof_buf out = IOF_BUF_INIT;
    struct iof_diag d = {{0}};

    (void)state;
    assert_int_equal(mgr_api_import_param(q, "name", "trim.fio", &d), 0);
    assert_int_equal(mgr_api_import_run(q, job, strlen(job), &out, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "trim.fio:3: error: cannot map rw=trim"));
    assert_int_equal(out.len, 0);
    /* A name that does not tell, a text that is not vdbench's: no format. */
    assert_int_equal(mgr_api_import_param(q, "name", "job.txt", &d), 0);
    assert_int_equal(mgr_api_import_run(q, job, strlen(job), &out, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "cannot tell the format of 'job.txt'"));
    /* An option for another format: the CLI's rule. */
    assert_int_equal(mgr_api_import_param(q, "name", "job.fio", &d), 0);
    assert_int_equal(mgr_api_import_param(q, "sector-size", "512", &d), 0);
    assert_int_equal(mgr_api_import_run(q, job, strlen(job), &out, &d), -EINVAL);
    assert_string_equal(d.msg, "sector-size is for Iometer configuration files");
    mgr_api_import_free(q);
    iof_buf_free(&out);
}

static void test_export_refused(void **state)
{
    static const char bad[] =
        "{\"name\": \"x\", \"run\": {\"duration\": \"1s\"}, \"specs\": [{\"name\": \"a\", "
        "\"lines\": [{\"size\": \"4q\"}]}], "
        "\"workers\": [{\"targets\": [{\"path\": \"f\", \"size\": \"1m\"}]}]}";
    struct iof_buf out = IOF_BUF_INIT;
    struct iof_diag d = {{0}};

    (void)state;
    assert_int_not_equal(mgr_api_plans_export("icf", bad, strlen(bad), &out, &d), 0);
    assert_non_null(strstr(d.msg, "plan: specs[0].lines[0].size: invalid size '4q'"));
    memset(&d, 0, sizeof(d));
    assert_int_equal(mgr_api_plans_export("csv", bad, strlen(bad), &out, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "icf only"));
    iof_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),          cmocka_unit_test(test_import_params),
        cmocka_unit_test(test_import_answer),  cmocka_unit_test(test_import_refused),
        cmocka_unit_test(test_export_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_plan_keys.c - the plan schema table (proto/plan_schema.c)
 * as proto_plan_keys() lists it, against man/iofleet-plan.5: every key of
 * the table is a tagged entry of the page's KEYS section and the page names
 * no key the table does not have (a "*" in a tag stands for one key of any
 * name: cycle.*.from). Every key has a kind and a line of help, and every
 * row of the table is consistent: its place fits its kind, its default is in
 * its range. */
/* The table's rows themselves (proto/plan_internal.h), before cmocka.h,
 * which has a fail() of its own. */
#include "proto/plan_internal.h"
#undef fail

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/plan.h"

#define MAX_KEYS 256
#define KEY_MAX 128

struct keys {
    char path[MAX_KEYS][KEY_MAX];
    char kind[MAX_KEYS][24];
    size_t n;
    bool bad_help;
};

static int collect(void *arg, const struct proto_plan_key *k)
{
    struct keys *ks = arg;

    assert_true(ks->n < MAX_KEYS);
    assert_true(strlen(k->path) < KEY_MAX);
    snprintf(ks->path[ks->n], KEY_MAX, "%s", k->path);
    snprintf(ks->kind[ks->n], sizeof(ks->kind[0]), "%s", k->kind ? k->kind : "");
    if (!k->kind || !k->help || strlen(k->help) < 10 || strchr(k->help, '\n'))
        ks->bad_help = true;
    ks->n++;
    return 0;
}

static struct keys *table_keys(void)
{
    struct keys *ks = calloc(1, sizeof(*ks));

    assert_non_null(ks);
    assert_int_equal(proto_plan_keys(collect, ks), 0);
    return ks;
}

/* The tags under .SH KEYS of the page: the first word of the line after
 * each .TP, font escapes and roff's \- removed. */
static struct keys *page_keys(void)
{
    char path[1024], line[1024];
    const char *slash = strrchr(__FILE__, '/');
    struct keys *ks = calloc(1, sizeof(*ks));
    bool in_keys = false, tag = false;
    FILE *f;

    assert_non_null(ks);
    assert_non_null(slash);
    snprintf(path, sizeof(path), "%.*s/../../../man/iofleet-plan.5", (int)(slash - __FILE__),
             __FILE__);
    f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    while (fgets(line, sizeof(line), f)) {
        char word[KEY_MAX];
        size_t n = 0;
        const char *s = line;
        if (!strncmp(line, ".SH ", 4)) {
            in_keys = !strcmp(line, ".SH KEYS\n");
            continue;
        }
        if (!in_keys)
            continue;
        if (!tag) {
            tag = !strncmp(line, ".TP", 3);
            continue;
        }
        tag = false;
        if (!strncmp(s, ".BR ", 4))
            s += 4;
        else if (!strncmp(s, ".B ", 3))
            s += 3;
        while (*s && *s != ' ' && *s != '"' && *s != '\n' && n + 1 < sizeof(word)) {
            if (s[0] == '\\' && s[1] == 'f' && s[2]) {
                s += 3;
            } else if (s[0] == '\\' && s[1] == '-') {
                word[n++] = '-';
                s += 2;
            } else {
                word[n++] = *s++;
            }
        }
        word[n] = '\0';
        assert_true(ks->n < MAX_KEYS);
        snprintf(ks->path[ks->n++], KEY_MAX, "%s", word);
    }
    fclose(f);
    return ks;
}

/* A page tag names key: equal, or equal but for "*" components. */
static bool tag_names(const char *tag, const char *key)
{
    while (*tag && *key) {
        if (tag[0] == '*' && (tag[1] == '.' || tag[1] == '\0')) {
            key += strcspn(key, ".");
            tag++;
            continue;
        }
        if (*tag != *key)
            return false;
        tag++;
        key++;
    }
    return *tag == '\0' && *key == '\0';
}

static void test_every_key_documented(void **state)
{
    struct keys *table = table_keys(), *page = page_keys();
    size_t missing = 0, extra = 0;

    (void)state;
    assert_true(table->n >= 60);
    assert_true(page->n >= 50);
    for (size_t i = 0; i < table->n; i++) {
        size_t j = 0;
        while (j < page->n && !tag_names(page->path[j], table->path[i]))
            j++;
        if (j == page->n) {
            print_error("plan key %s is not documented in man/iofleet-plan.5\n", table->path[i]);
            missing++;
        }
    }
    for (size_t j = 0; j < page->n; j++) {
        size_t i = 0;
        while (i < table->n && !tag_names(page->path[j], table->path[i]))
            i++;
        if (i == table->n) {
            print_error("man/iofleet-plan.5 documents %s, which is no plan key\n", page->path[j]);
            extra++;
        }
    }
    free(table);
    free(page);
    assert_int_equal(missing, 0);
    assert_int_equal(extra, 0);
}

static const char *kind_of(const struct keys *ks, const char *path)
{
    for (size_t i = 0; i < ks->n; i++)
        if (!strcmp(ks->path[i], path))
            return ks->kind[i];
    fail_msg("no key %s", path);
    return NULL;
}

static void test_keys_kinds_and_help(void **state)
{
    struct keys *ks = table_keys();

    (void)state;
    assert_false(ks->bad_help);
    for (size_t i = 0; i < ks->n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(ks->path[i], ks->path[j]))
                fail_msg("key %s listed twice", ks->path[i]);
    assert_string_equal(kind_of(ks, "name"), "string");
    assert_string_equal(kind_of(ks, "run.duration"), "duration");
    assert_string_equal(kind_of(ks, "specs"), "array");
    assert_string_equal(kind_of(ks, "specs[].lines[].size"), "size");
    assert_string_equal(kind_of(ks, "specs[].lines[].read"), "integer");
    assert_string_equal(kind_of(ks, "workers[].engine"), "one of");
    assert_string_equal(kind_of(ks, "workers[].hipri"), "boolean");
    assert_string_equal(kind_of(ks, "workers[].data.dedupe"), "percentage");
    assert_string_equal(kind_of(ks, "workers[].targets[].range"), "object");
    assert_string_equal(kind_of(ks, "workers[].targets[].range.offset"), "size");
    assert_string_equal(kind_of(ks, "workers[].rate.iops"), "number");
    assert_string_equal(kind_of(ks, "cycle.rate.find_max.p99"), "duration");
    assert_string_equal(kind_of(ks, "cycle.workers.step"), "string");
    assert_string_equal(kind_of(ks, "cycle.targets.from"), "integer");
    free(ks);
}

static int stop_at_third(void *arg, const struct proto_plan_key *k)
{
    int *n = arg;

    (void)k;
    return ++*n == 3 ? 42 : 0;
}

static void test_keys_walk_stops(void **state)
{
    int n = 0;

    (void)state;
    assert_int_equal(proto_plan_keys(stop_at_third, &n), 42);
    assert_int_equal(n, 3);
}

/* The rows of def and of every object under it. */
static void check_rows(const struct objdef *def, size_t *nrows)
{
    for (size_t i = 0; i < def->nfields; i++) {
        const struct field *f = &def->fields[i];
        bool required = f->flags & PF_REQUIRED;
        (*nrows)++;
        switch (f->kind) {
        case PK_STRING:
            if (f->off == PLAN_NO_OFF)
                assert_int_equal(f->width, sizeof(const char *));
            else
                assert_int_equal(f->width, f->max + 1); /* the char array holds the longest */
            break;
        case PK_BOOL:
            assert_int_equal(f->width, sizeof(bool));
            assert_true(f->def <= 1);
            break;
        case PK_INT:
        case PK_SIZE:
        case PK_DURATION:
        case PK_PCT:
        case PK_ENUM:
            if (f->width != 4 && f->width != 8)
                fail_msg("%s: width %zu", f->name, f->width);
            if (f->width == 4 && f->kind != PK_ENUM && f->max > UINT32_MAX)
                fail_msg("%s: max %" PRIu64 " does not fit 32 bits", f->name, f->max);
            if (f->kind == PK_ENUM) {
                assert_non_null(f->names);
                assert_true(f->def < f->nnames);
            } else if (!required && (f->def < f->min || f->def > f->max)) {
                fail_msg("%s: default %" PRIu64 " outside %" PRIu64 "..%" PRIu64, f->name, f->def,
                         f->min, f->max);
            }
            break;
        case PK_OBJECT:
            assert_non_null(f->sub);
            break;
        case PK_ARRAY:
            assert_true(f->min <= f->max);
            break;
        case PK_NUMBER:
            break;
        }
        if (f->kind == PK_OBJECT || f->kind == PK_ARRAY || f->kind == PK_NUMBER)
            assert_int_equal(f->off, 0); /* read by its object's code, no place */
        if (f->sub)
            check_rows(f->sub, nrows);
    }
}

static void test_table_rows(void **state)
{
    size_t n = 0;

    (void)state;
    check_rows(&plan_root_def, &n);
    assert_true(n >= 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_key_documented),
        cmocka_unit_test(test_keys_kinds_and_help),
        cmocka_unit_test(test_keys_walk_stops),
        cmocka_unit_test(test_table_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

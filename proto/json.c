/* SPDX-License-Identifier: Apache-2.0 */
/* proto/json.c - cJSON helpers of proto/: printing JSON with every integral
 * number exact. */
#include "proto/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Replaces, below parent, every integral number by raw text of its exact
 * digits. */
static int make_exact(cJSON *parent)
{
    cJSON *it = parent->child;
    while (it) {
        cJSON *next = it->next;
        if (cJSON_IsNumber(it) && isfinite(it->valuedouble) &&
            fabs(it->valuedouble) <= PROTO_JSON_EXACT_MAX &&
            it->valuedouble == floor(it->valuedouble)) {
            char text[32];
            cJSON *raw;
            if (it->valuedouble < 0)
                snprintf(text, sizeof(text), "-%" PRIu64, (uint64_t)(-it->valuedouble));
            else
                snprintf(text, sizeof(text), "%" PRIu64, (uint64_t)it->valuedouble);
            raw = cJSON_CreateRaw(text);
            if (raw && it->string) {
                /* ReplaceItemViaPointer keeps the position, not the key. */
                raw->string = malloc(strlen(it->string) + 1);
                if (!raw->string) {
                    cJSON_Delete(raw);
                    return -1;
                }
                strcpy(raw->string, it->string);
            }
            if (!raw || !cJSON_ReplaceItemViaPointer(parent, it, raw)) {
                cJSON_Delete(raw);
                return -1;
            }
        } else if (it->child && make_exact(it)) {
            return -1;
        }
        it = next;
    }
    return 0;
}

int proto_json_make_exact(cJSON *item)
{
    return make_exact(item);
}

char *proto_json_print_exact(const cJSON *item)
{
    cJSON *copy = cJSON_Duplicate(item, 1);
    char *text;

    if (!copy)
        return NULL;
    /* The root itself may be a number. */
    if (cJSON_IsNumber(copy)) {
        text = cJSON_PrintUnformatted(copy);
        cJSON_Delete(copy);
        return text;
    }
    if (make_exact(copy)) {
        cJSON_Delete(copy);
        return NULL;
    }
    text = cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    return text;
}

/* ---- syntax errors, explained ---- */

#define JS_DEPTH_MAX 1000 /* cJSON's CJSON_NESTING_LIMIT */

struct js {
    const char *t;
    size_t n, i;
    int depth;
    struct proto_json_fault *f;
};

static bool js_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '-' || c == '.';
}

static void js_ws(struct js *s)
{
    while (s->i < s->n &&
           (s->t[s->i] == ' ' || s->t[s->i] == '\t' || s->t[s->i] == '\n' || s->t[s->i] == '\r'))
        s->i++;
}

static bool js_comment(const struct js *s)
{
    return s->i < s->n && (s->t[s->i] == '#' || (s->t[s->i] == '/' && s->i + 1 < s->n &&
                                                 (s->t[s->i + 1] == '/' || s->t[s->i + 1] == '*')));
}

/* Records the error at byte `at` and returns -1. */
static int js_fail_at(struct js *s, size_t at, const char *cause)
{
    struct proto_json_fault *f = s->f;
    size_t k = 0;

    f->offset = at;
    f->cause = cause;
    if (at >= s->n) {
        snprintf(f->token, sizeof(f->token), "the end of the text");
    } else if (js_word_char(s->t[at])) {
        while (at + k < s->n && js_word_char(s->t[at + k]) && k < 24)
            k++;
        snprintf(f->token, sizeof(f->token), "'%.*s%s'", (int)k, s->t + at,
                 at + k < s->n && js_word_char(s->t[at + k]) ? "..." : "");
    } else if (s->t[at] == '/' && at + 1 < s->n && (s->t[at + 1] == '/' || s->t[at + 1] == '*')) {
        snprintf(f->token, sizeof(f->token), "'/%c'", s->t[at + 1]);
    } else if ((unsigned char)s->t[at] < 0x20 || (unsigned char)s->t[at] >= 0x7f) {
        snprintf(f->token, sizeof(f->token), "byte 0x%02x", (unsigned char)s->t[at]);
    } else {
        snprintf(f->token, sizeof(f->token), s->t[at] == '\'' ? "\"%c\"" : "'%c'", s->t[at]);
    }
    return -1;
}

static int js_fail(struct js *s, const char *cause)
{
    return js_fail_at(s, s->i, cause);
}

/* Why there is no value where one was expected (at s->i). */
static int js_not_value(struct js *s, const char *where_end)
{
    char c = s->i < s->n ? s->t[s->i] : 0;

    if (s->i >= s->n)
        return js_fail(s, where_end);
    if (js_comment(s))
        return js_fail(s, "a comment: JSON has no comments (remove it)");
    if (c == '\'')
        return js_fail(s, "single quotes: JSON strings need double quotes");
    if (js_word_char(c))
        return js_fail(s, "unquoted text: a string needs double quotes (\"4k\", \"10s\")");
    return js_fail(s, "expected a value (a string, number, object, array, true, false or null)");
}

static int js_value(struct js *s);

static int js_string(struct js *s)
{
    size_t start = s->i++;

    while (s->i < s->n && s->t[s->i] != '"') {
        if (s->t[s->i] == '\\') {
            char e = s->i + 1 < s->n ? s->t[s->i + 1] : 0;
            if (e == 'u') {
                for (int k = 2; k < 6; k++) {
                    char h = s->i + (size_t)k < s->n ? s->t[s->i + (size_t)k] : 0;
                    if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') ||
                          (h >= 'A' && h <= 'F')))
                        return js_fail(s, "an invalid \\u escape: it needs 4 hex digits");
                }
                s->i += 6;
                continue;
            }
            if (!e || !strchr("\"\\/bfnrt", e))
                return js_fail(s, "an invalid escape: use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or "
                                  "\\uXXXX (a Windows path needs \\\\ or /)");
            s->i += 2;
            continue;
        }
        s->i++;
    }
    if (s->i >= s->n)
        return js_fail_at(s, start, "a string that is never closed (a missing '\"')");
    s->i++;
    return 0;
}

/* As lenient as cJSON, which hands [0-9+-.eE]* to strtod. */
static int js_number(struct js *s)
{
    size_t start = s->i;

    while (s->i < s->n && strchr("0123456789+-.eE", s->t[s->i]))
        s->i++;
    if (s->i < s->n && js_word_char(s->t[s->i]))
        return js_fail_at(s, start,
                          "a number followed by text: a size or duration with a unit is a "
                          "string (\"4k\", \"10s\")");
    return 0;
}

static int js_literal(struct js *s)
{
    static const char *const words[] = {"true", "false", "null"};

    for (size_t k = 0; k < 3; k++) {
        size_t l = strlen(words[k]);
        if (s->n - s->i >= l && !memcmp(s->t + s->i, words[k], l) &&
            (s->i + l >= s->n || !js_word_char(s->t[s->i + l]))) {
            s->i += l;
            return 0;
        }
    }
    return js_not_value(s, "");
}

/* After a member or an element: ',' or the closing `close`. */
static int js_after_item(struct js *s, char close, bool *more, size_t *comma)
{
    const char *end = close == '}' ? "the text ends inside an object (a missing '}')"
                                   : "the text ends inside an array (a missing ']')";
    char c;

    js_ws(s);
    c = s->i < s->n ? s->t[s->i] : 0;
    if (c == ',') {
        *comma = s->i++;
        *more = true;
        return 0;
    }
    if (c == close) {
        s->i++;
        *more = false;
        return 0;
    }
    if (s->i >= s->n)
        return js_fail(s, end);
    if (js_comment(s))
        return js_fail(s, "a comment: JSON has no comments (remove it)");
    if (c == '"' || c == '{' || c == '[' || c == '-' || (c >= '0' && c <= '9') || c == '\'' ||
        js_word_char(c))
        return js_fail(s, close == '}' ? "a missing ',' before this member"
                                       : "a missing ',' before this element");
    if (c == '}' || c == ']')
        return js_fail(s, close == '}' ? "']' where ',' or '}' should close the object"
                                       : "'}' where ',' or ']' should close the array");
    return js_fail(s, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

static int js_object(struct js *s)
{
    size_t comma = 0;
    bool more = true, first = true;

    s->i++;
    for (; more; first = false) {
        char c;
        js_ws(s);
        c = s->i < s->n ? s->t[s->i] : 0;
        if (c == '}' && first) {
            s->i++;
            return 0;
        }
        if (c == '}')
            return js_fail_at(s, comma,
                              "a trailing comma before '}': JSON allows none after the last "
                              "member");
        if (c != '"') {
            if (s->i >= s->n)
                return js_fail(s, "the text ends inside an object (a missing '}')");
            if (js_comment(s))
                return js_fail(s, "a comment: JSON has no comments (remove it)");
            if (c == '\'')
                return js_fail(s, "single quotes: JSON keys need double quotes");
            if (js_word_char(c))
                return js_fail(s, "an unquoted key: JSON keys need double quotes (\"name\")");
            return js_fail(s, "expected a key in double quotes");
        }
        if (js_string(s))
            return -1;
        js_ws(s);
        if (s->i >= s->n || s->t[s->i] != ':') {
            if (js_comment(s))
                return js_fail(s, "a comment: JSON has no comments (remove it)");
            return js_fail(s, s->i >= s->n ? "the text ends inside an object (a missing '}')"
                                           : "a missing ':' after the key");
        }
        s->i++;
        if (js_value(s) || js_after_item(s, '}', &more, &comma))
            return -1;
    }
    return 0;
}

static int js_array(struct js *s)
{
    size_t comma = 0;
    bool more = true, first = true;

    s->i++;
    for (; more; first = false) {
        js_ws(s);
        if (s->i < s->n && s->t[s->i] == ']') {
            if (first) {
                s->i++;
                return 0;
            }
            return js_fail_at(s, comma,
                              "a trailing comma before ']': JSON allows none after the last "
                              "element");
        }
        if (js_value(s) || js_after_item(s, ']', &more, &comma))
            return -1;
    }
    return 0;
}

static int js_value(struct js *s)
{
    char c;
    int rc;

    js_ws(s);
    if (s->i >= s->n)
        return js_not_value(s, s->n ? "the text ends where a value should be"
                                    : "empty: a plan is one JSON object");
    c = s->t[s->i];
    if (c == '{' || c == '[') {
        if (++s->depth > JS_DEPTH_MAX)
            return js_fail(s, "nested more than 1000 levels deep");
        rc = c == '{' ? js_object(s) : js_array(s);
        s->depth--;
        return rc;
    }
    if (c == '"')
        return js_string(s);
    if (c == '-' || (c >= '0' && c <= '9'))
        return js_number(s);
    if (c == 't' || c == 'f' || c == 'n')
        return js_literal(s);
    return js_not_value(s, "");
}

int proto_json_find_error(const char *text, size_t len, struct proto_json_fault *f)
{
    struct js s = {.t = text, .n = len, .f = f};

    memset(f, 0, sizeof(*f));
    if (js_value(&s))
        return 1;
    js_ws(&s);
    if (s.i < s.n) {
        js_fail(&s, js_comment(&s) ? "a comment: JSON has no comments (remove it)"
                                   : "text after the end of the JSON value");
        return 1;
    }
    return 0;
}

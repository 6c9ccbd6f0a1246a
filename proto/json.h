/* SPDX-License-Identifier: Apache-2.0 */
/* proto/json.h - cJSON helpers shared by the plan loader and the message
 * codecs (cJSON stays inside proto/). */
#ifndef IOF_PROTO_JSON_H
#define IOF_PROTO_JSON_H

#include <cjson/cJSON.h>

/* 2^53: every integer up to it is exact in a double, the type cJSON (and
 * JavaScript) read JSON numbers into. Plans and messages hold no larger JSON
 * numbers; bigger values travel as strings. */
#define PROTO_JSON_EXACT_MAX 9007199254740992.0

/* Compact JSON text of item with every integral number written exactly
 * (cJSON's own printer rounds some integers above 10^15 to 15 digits).
 * Returns new text (free()) or NULL on ENOMEM. item is not modified. */
char *proto_json_print_exact(const cJSON *item);

/* The same rewrite in place, below container `item` (integral numbers become
 * raw text of their exact digits). 0, or -1 on ENOMEM. */
int proto_json_make_exact(cJSON *item);

/* The first syntax error of JSON text cJSON refused, for a message that
 * says where, what and why: its byte offset, the token there as shown
 * ("','", "'//'", "'name'", "the end of the text") and its likely cause
 * ("a trailing comma before '}': JSON allows none after the last member",
 * a missing comma, an unquoted key, a comment, single quotes...). */
struct proto_json_fault {
    size_t offset;
    char token[48];
    const char *cause;
};

/* Scans text (len bytes) as cJSON reads it. 1 with *f filled at the first
 * error; 0 when it finds none (the caller falls back on cJSON's position). */
int proto_json_find_error(const char *text, size_t len, struct proto_json_fault *f);

#endif

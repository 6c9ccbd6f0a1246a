/* proto/json.c - cJSON helpers of proto/: printing JSON with every integral
 * number exact. */
#include "proto/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integers up to 2^53 are exact in a double; plans and messages hold no
 * larger JSON numbers (bigger values travel as strings). */
#define JSON_EXACT_MAX 9007199254740992.0

/* Replaces, below parent, every integral number by raw text of its exact
 * digits. */
static int make_exact(cJSON *parent)
{
    cJSON *it = parent->child;
    while (it) {
        cJSON *next = it->next;
        if (cJSON_IsNumber(it) && isfinite(it->valuedouble) &&
            fabs(it->valuedouble) <= JSON_EXACT_MAX && it->valuedouble == floor(it->valuedouble)) {
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

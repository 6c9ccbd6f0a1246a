/* proto/json.h - cJSON helpers shared by the plan loader and the message
 * codecs (cJSON stays inside proto/). */
#ifndef IOF_PROTO_JSON_H
#define IOF_PROTO_JSON_H

#include <cjson/cJSON.h>

/* Compact JSON text of item with every integral number written exactly
 * (cJSON's own printer rounds some integers above 10^15 to 15 digits).
 * Returns new text (free()) or NULL on ENOMEM. item is not modified. */
char *proto_json_print_exact(const cJSON *item);

/* The same rewrite in place, below container `item` (integral numbers become
 * raw text of their exact digits). 0, or -1 on ENOMEM. */
int proto_json_make_exact(cJSON *item);

#endif

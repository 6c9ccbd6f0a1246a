/* proto/version.c - the protocol version of this build as text. */
#include "proto/version.h"

#define PROTO_STR2(x) #x
#define PROTO_STR(x) PROTO_STR2(x)

const char *proto_version_string(void)
{
    return PROTO_STR(PROTO_VERSION_MAJOR) "." PROTO_STR(PROTO_VERSION_MINOR);
}

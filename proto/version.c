#include "proto/version.h"

#define PROTO_STR2(x) #x
#define PROTO_STR(x) PROTO_STR2(x)

const char *proto_version_string(void)
{
    return PROTO_STR(PROTO_VERSION_MAJOR) "." PROTO_STR(PROTO_VERSION_MINOR);
}

/* proto/version.h - protocol version of this build. Same major interoperates;
 * a higher minor only adds optional fields, which older peers ignore. */
#ifndef IOF_PROTO_VERSION_H
#define IOF_PROTO_VERSION_H

#define PROTO_VERSION_MAJOR 1
#define PROTO_VERSION_MINOR 0

/* "1.0" */
const char *proto_version_string(void);

#endif

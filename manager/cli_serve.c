/* SPDX-License-Identifier: Apache-2.0 */
/* manager/cli_serve.c - `iofleet serve`'s command line: its option table
 * (which drives the parser, --help, the man page test and the completion)
 * and the checks before manager/serve.c starts. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cliopt.h"
#include "common/log.h"
#include "common/spec.h"
#include "manager/api_auth.h"
#include "manager/cli.h"
#include "manager/history/store.h"
#include "manager/serve.h"
#include "manager/sinks/http.h"

#define SERVE_STR_(x) #x
#define SERVE_STR(x) SERVE_STR_(x)

enum serve_opt_id {
    SOPT_HELP = 1,
    SOPT_HTTP,
    SOPT_HTTP_TLS_CERT,
    SOPT_HTTP_TLS_KEY,
    SOPT_HTTP_TOKENS,
    SOPT_HTTP_CLIENT_CA,
    SOPT_LISTEN,
    SOPT_DB,
    SOPT_TLS_CA,
    SOPT_TLS_CERT,
    SOPT_TLS_KEY,
    SOPT_PKI,
    SOPT_INSECURE,
    SOPT_PLANS,
    SOPT_HEARTBEAT_MS,
    SOPT_VERBOSE,
};

static const struct iof_opt serve_opts[] = {
    {"help", 'h', IOF_OPT_NONE, NULL, "print this help and exit", SOPT_HELP},
    {"http", 0, IOF_OPT_REQUIRED, "[ADDR:]PORT",
     "serve the JSON API (docs/api.md) here: ADDR defaults to 127.0.0.1 and must be a loopback "
     "address unless the API has HTTPS and tokens, PORT 0 picks a free one (default "
     "127.0.0.1:" SERVE_STR(MGR_SERVE_HTTP_PORT) ")",
     SOPT_HTTP},
    {"http-tls-cert", 0, IOF_OPT_REQUIRED, "F",
     "serve the API over HTTPS (TLS 1.3 or 1.2) with this PEM certificate, e.g. the manager.pem "
     "of iofleet pki init (clients then name the server by its certificate's name, "
     "--manager-name); with --http-tls-key",
     SOPT_HTTP_TLS_CERT},
    {"http-tls-key", 0, IOF_OPT_REQUIRED, "F",
     "the unencrypted PEM private key of --http-tls-cert, e.g. manager-key.pem", SOPT_HTTP_TLS_KEY},
    {"http-tokens", 0, IOF_OPT_REQUIRED, "F",
     "every API request then needs a token of this file (Authorization: Bearer TOKEN): viewer "
     "for GET, operator for POST; iofleet serve token new adds one. Only its owner may read it "
     "(mode 0600)",
     SOPT_HTTP_TOKENS},
    {"http-client-ca", 0, IOF_OPT_REQUIRED, "F",
     "ask API clients for a certificate signed by this CA (the ca.pem of iofleet pki init): one "
     "whose name a 'cert NAME SCOPE' line of --http-tokens lists needs no token; with "
     "--http-tls-cert and --http-tokens",
     SOPT_HTTP_CLIENT_CA},
    {"listen", 0, IOF_OPT_OPTIONAL, "[ADDR][:PORT]",
     "accept dynamo agents started with --manager here (default all addresses, port 7066)",
     SOPT_LISTEN},
    {"db", 0, IOF_OPT_REQUIRED, "PATH",
     "the run history GET /api/v1/runs shows and runs started through the API are recorded "
     "in (default $XDG_DATA_HOME/iofleet/runs.db, else "
     "~/.local/share/iofleet/runs.db, as iofleet run)",
     SOPT_DB},
    {"plans", 0, IOF_OPT_REQUIRED, "DIR",
     "the user's plan library (GET /api/v1/plans: NAME.json files, PUT and DELETE change them), "
     "created mode 0700 (default: plans beside the --db file); the shipped plans are read from "
     "$IOFLEET_CONFIGS, else the installed share/iofleet/configs",
     SOPT_PLANS},
    {"tls-ca", 0, IOF_OPT_REQUIRED, "F",
     "the CA certificate (from iofleet pki init); with --tls-cert and --tls-key: TLS 1.3 with "
     "mutual authentication, each agent's name must be its certificate's",
     SOPT_TLS_CA},
    {"tls-cert", 0, IOF_OPT_REQUIRED, "F", "the manager's certificate", SOPT_TLS_CERT},
    {"tls-key", 0, IOF_OPT_REQUIRED, "F", "the manager's private key", SOPT_TLS_KEY},
    {"pki", 0, IOF_OPT_REQUIRED, "DIR",
     "the directory iofleet pki init wrote: --tls-ca DIR/ca.pem --tls-cert DIR/manager.pem "
     "--tls-key DIR/manager-key.pem, each --tls-* given still wins (default: $IOFLEET_PKI, "
     "when no --insecure or --tls-* is given)",
     SOPT_PKI},
    {"insecure", 0, IOF_OPT_NONE, NULL,
     "accept agents over plain TCP without authentication (any local user could pose as an "
     "agent); the agents need it too",
     SOPT_INSECURE},
    {"heartbeat-ms", 0, IOF_OPT_REQUIRED, "N",
     "the manager's heartbeat period, 100..60000 ms, offered to each agent (default as iofleet "
     "run)",
     SOPT_HEARTBEAT_MS},
    {"verbose", 'v', IOF_OPT_NONE, NULL, "log each agent's protocol and TLS session", SOPT_VERBOSE},
};

static bool serve_listen_takes(int id, const char *next)
{
    (void)next;
    return id == SOPT_LISTEN; /* serve takes no positional argument */
}

static const struct iof_cmd serve_cmd = {
    .prog = "iofleet serve",
    .synopsis = "[OPTION]...",
    .about = "A long-running manager: accepts dynamo agents that dial in (--listen, as iofleet "
             "run --listen) and keeps them connected, and answers a versioned JSON API on "
             "--http (docs/api.md): GET /api/v1/version, GET /api/v1/agents (each agent "
             "connected or seen in the last hour, with the inventory iofleet agents prints), "
             "GET /api/v1/runs and /api/v1/runs/ID (the run history of --db), POST "
             "/api/v1/plans/check (a plan checked as iofleet validate does), POST "
             "/api/v1/plans/import and /api/v1/plans/export (as iofleet import and export), "
             "/api/v1/plans and /api/v1/plans/NAME (the plan library of --plans), POST "
             "/api/v1/runs (a plan run on the connected agents and recorded in --db), GET "
             "/api/v1/runs/current and POST /api/v1/runs/current/stop. SIGINT or SIGTERM "
             "stops it: a run under way is interrupted and recorded, every agent is told bye. "
             "SIGHUP reads the --http-tokens file again.",
    .opts = serve_opts,
    .nopts = sizeof(serve_opts) / sizeof(serve_opts[0]),
    .epilog = "exit codes: 0 stopped by SIGINT or SIGTERM, 1 out of memory, 2 usage error\n"
              "            (a non-loopback --http without HTTPS and tokens, an --http-tls-*\n"
              "            or --http-tokens file included), 3 a port cannot be bound or\n"
              "            plain TCP without --insecure\n",
    .takes_next = serve_listen_takes,
};

enum token_opt_id { TOPT_HELP = 1, TOPT_TOKENS, TOPT_SCOPE, TOPT_NAME };

static const struct iof_opt token_opts[] = {
    {"help", 'h', IOF_OPT_NONE, NULL, "print this help and exit", TOPT_HELP},
    {"http-tokens", 0, IOF_OPT_REQUIRED, "F",
     "the tokens file iofleet serve --http-tokens reads: created mode 0600 when missing, else "
     "its owner and mode are checked as serve checks them",
     TOPT_TOKENS},
    {"scope", 0, IOF_OPT_REQUIRED, "SCOPE",
     "viewer (every GET) or operator (POST too: start and stop runs, check plans)", TOPT_SCOPE},
    {"name", 0, IOF_OPT_REQUIRED, "NAME",
     "who the token is for, 1..64 of letters, digits, '.', '_', '-', unique in the file (the "
     "log names it, never the token)",
     TOPT_NAME},
};

static const struct iof_cmd token_cmd = {
    .prog = "iofleet serve token new",
    .synopsis = "--http-tokens F --scope viewer|operator --name NAME",
    .about = "Makes a random token (256 bits from OpenSSL's RAND_bytes), prints it once on "
             "standard output and appends its SHA-256 with the scope and name to the tokens "
             "file: the token itself is stored nowhere. A client sends it as Authorization: "
             "Bearer TOKEN. Revoke a token by deleting its line: a running serve refuses it "
             "within a second, no restart.",
    .opts = token_opts,
    .nopts = sizeof(token_opts) / sizeof(token_opts[0]),
    .epilog = "exit codes: 0 written, 1 out of memory or an I/O error, 2 usage error (a\n"
              "            name already in the file, a file others may read included)\n",
};

/* `iofleet serve token new ...`: argv[0] is "token". */
static int serve_token(int argc, char **argv)
{
    char token[MGR_API_TOKEN_LEN + 1];
    const char *file = NULL, *name = NULL, *scope = NULL, *val;
    struct iof_diag d = {{0}};
    struct iof_opt_parser p;
    int id, rc = 0;

    if (argc < 2 || strcmp(argv[1], "new")) {
        if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            iof_opt_help(&token_cmd, stdout);
            return 0;
        }
        return iof_opt_usage_error(&token_cmd, "iofleet serve token needs the command new%s%s%s",
                                   argc >= 2 ? ", got '" : "", argc >= 2 ? argv[1] : "",
                                   argc >= 2 ? "'" : "");
    }
    if (iof_opt_init(&p, &token_cmd, argc - 1, argv + 1)) {
        IOF_USER("iofleet serve token new: out of memory");
        return 1;
    }
    while (rc == 0 && (id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        switch (id) {
        case IOF_OPT_ERROR:
            rc = 2;
            break;
        case IOF_OPT_HELP:
            rc = -1;
            break;
        case TOPT_TOKENS:
            file = val;
            break;
        case TOPT_SCOPE:
            scope = val;
            break;
        case TOPT_NAME:
            name = val;
            break;
        default:
            rc = iof_opt_usage_error(&token_cmd, "takes no argument, got '%s'", val);
            break;
        }
    }
    iof_opt_free(&p);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!file || !scope || !name)
        return iof_opt_usage_error(&token_cmd, "needs --http-tokens, --scope and --name");
    if (!mgr_api_scope_parse(scope))
        return iof_opt_usage_error(&token_cmd, "--scope must be viewer or operator, got '%s'",
                                   scope);
    if ((rc = mgr_api_token_new(file, mgr_api_scope_parse(scope), name, token, &d))) {
        IOF_USER("iofleet serve token new: %s", d.msg);
        return rc == -EINVAL || rc == -EEXIST ? 2 : 1;
    }
    printf("%s\n", token);
    fflush(stdout);
    IOF_USER("iofleet serve token new: %s token '%s' added to %s; it is shown only this once "
             "(send it as Authorization: Bearer TOKEN)",
             scope, name, file);
    return 0;
}

void mgr_cli_serve_help(FILE *f)
{
    iof_opt_help(&serve_cmd, f);
}

/* The TLS files of --pki DIR, else of $IOFLEET_PKI when neither --insecure
 * nor any --tls-* is given; each --tls-* given wins. 0, or 2 after naming
 * a missing file. */
static int serve_pki(const char *pki, bool insecure, const char **set[3],
                     char path[3][IOF_PATH_MAX])
{
    static const char *const base[3] = {"ca.pem", "manager.pem", "manager-key.pem"};
    const char *dir = pki, *from = "--pki";

    if (!dir && !insecure && !*set[0] && !*set[1] && !*set[2]) {
        dir = getenv("IOFLEET_PKI");
        from = "IOFLEET_PKI";
        if (dir && !*dir)
            dir = NULL;
    }
    if (!dir)
        return 0;
    for (int i = 0; i < 3; i++) {
        struct stat st;
        if (*set[i])
            continue;
        if (snprintf(path[i], IOF_PATH_MAX, "%s/%s", dir, base[i]) >= IOF_PATH_MAX) {
            IOF_USER("iofleet serve: %s %s: path too long", from, dir);
            return 2;
        }
        if (stat(path[i], &st) < 0) {
            IOF_USER("iofleet serve: %s%s%s: %s: %s (iofleet pki init %s writes it)", from,
                     from[0] == '-' ? " " : "=", dir, path[i], strerror(errno), dir);
            return 2;
        }
        *set[i] = path[i];
    }
    return 0;
}

int mgr_cli_serve(int argc, char **argv)
{
    struct mgr_serve_opts o = {.http = "127.0.0.1:" SERVE_STR(MGR_SERVE_HTTP_PORT), .listen = ""};
    char pki_path[3][IOF_PATH_MAX], db_path[IOF_PATH_MAX], plans_path[IOF_PATH_MAX];
    const char **tls[3] = {&o.tls_ca, &o.tls_cert, &o.tls_key};
    const char *pki = NULL, *val;
    struct iof_opt_parser p;
    int id, rc = 0;

    if (argc >= 2 && !strcmp(argv[1], "token"))
        return serve_token(argc - 1, argv + 1);
    if (iof_opt_init(&p, &serve_cmd, argc, argv)) {
        IOF_USER("iofleet serve: out of memory");
        return 1;
    }
    while (rc == 0 && (id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        switch (id) {
        case IOF_OPT_ERROR:
            rc = 2;
            break;
        case IOF_OPT_HELP:
            rc = -1;
            break;
        case IOF_OPT_POSITIONAL:
            rc = iof_opt_usage_error(&serve_cmd, "takes no argument, got '%s'", val);
            break;
        case SOPT_HTTP: {
            char host[64];
            uint16_t port;
            struct iof_diag d = {{0}};
            if (mgr_http_parse(val, host, sizeof(host), &port, &d)) {
                IOF_USER("iofleet serve: --http %s", d.msg);
                rc = 2;
            }
            o.http = val;
            break;
        }
        case SOPT_HTTP_TLS_CERT:
            o.http_auth.tls_cert = val;
            break;
        case SOPT_HTTP_TLS_KEY:
            o.http_auth.tls_key = val;
            break;
        case SOPT_HTTP_TOKENS:
            o.http_auth.tokens = val;
            break;
        case SOPT_HTTP_CLIENT_CA:
            o.http_auth.client_ca = val;
            break;
        case SOPT_LISTEN:
            o.listen = val ? val : "";
            break;
        case SOPT_DB:
            o.db = val;
            break;
        case SOPT_PLANS:
            o.plans = val;
            break;
        case SOPT_TLS_CA:
            o.tls_ca = val;
            break;
        case SOPT_TLS_CERT:
            o.tls_cert = val;
            break;
        case SOPT_TLS_KEY:
            o.tls_key = val;
            break;
        case SOPT_PKI:
            pki = val;
            break;
        case SOPT_INSECURE:
            o.insecure = true;
            break;
        case SOPT_HEARTBEAT_MS: {
            char *end;
            unsigned long v;
            errno = 0;
            v = strtoul(val, &end, 10);
            if (!*val || *val == '-' || *end || errno || v < 100 || v > 60000)
                rc = iof_opt_usage_error(
                    &serve_cmd, "--heartbeat-ms must be a number 100..60000, got '%s'", val);
            o.heartbeat_ms = (uint32_t)v;
            break;
        }
        case SOPT_VERBOSE:
            o.verbose = true;
            break;
        default:
            rc = iof_opt_usage_error(&serve_cmd, "option not handled");
            break;
        }
    }
    iof_opt_free(&p);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (serve_pki(pki, o.insecure, tls, pki_path))
        return 2;
    if (!!o.tls_ca + !!o.tls_cert + !!o.tls_key != 0 &&
        !!o.tls_ca + !!o.tls_cert + !!o.tls_key != 3)
        return iof_opt_usage_error(&serve_cmd,
                                   "TLS needs all of --tls-ca, --tls-cert and --tls-key");
    if (!o.http_auth.tls_cert != !o.http_auth.tls_key)
        return iof_opt_usage_error(&serve_cmd,
                                   "HTTPS needs both --http-tls-cert and --http-tls-key");
    if (o.tls_ca && o.insecure)
        return iof_opt_usage_error(&serve_cmd, "--insecure and TLS contradict each other");
    if (!o.db) {
        struct iof_diag d = {{0}};
        if (mgr_store_default_path(db_path, sizeof(db_path), &d)) {
            IOF_USER("iofleet serve: run history: %s (--db PATH names one)", d.msg);
            return 2;
        }
        o.db = db_path;
    }
    if (!o.plans) { /* beside the run history */
        const char *slash = strrchr(o.db, '/');
        int n = slash ? snprintf(plans_path, sizeof(plans_path), "%.*s/plans", (int)(slash - o.db),
                                 o.db)
                      : snprintf(plans_path, sizeof(plans_path), "plans");
        if (n < 0 || (size_t)n >= sizeof(plans_path)) {
            IOF_USER("iofleet serve: --db %s: the name is too long for a plans folder beside it "
                     "(--plans DIR names one)",
                     o.db);
            return 2;
        }
        o.plans = plans_path;
    }
    o.configs = getenv("IOFLEET_CONFIGS");
    if (!o.configs || !*o.configs)
        o.configs = IOF_CONFIGS_DIR;
    return mgr_serve(&o);
}

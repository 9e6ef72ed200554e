/*
 * The library's version and the names of its return codes and statuses.
 */
#include "concord.h"

const char *concord_version(void) {
#define CONCORD_STR2(x) #x
#define CONCORD_STR(x) CONCORD_STR2(x)
    return CONCORD_STR(CONCORD_VERSION_MAJOR) "." CONCORD_STR(
        CONCORD_VERSION_MINOR) "." CONCORD_STR(CONCORD_VERSION_PATCH);
}

const char *concord_strerror(int code) {
    switch (code) {
    case CONCORD_OK: return "success";
    case CONCORD_EINVAL: return "invalid argument";
    case CONCORD_ENOMEM: return "out of memory";
    case CONCORD_EPARSE: return "malformed input";
    case CONCORD_EIO: return "input/output error";
    case CONCORD_ENOTCONVERGED: return "solver did not converge";
    case CONCORD_ENUMERIC: return "numerical failure";
    case CONCORD_EINFEASIBLE: return "infeasible problem";
    case CONCORD_ECALLBACK: return "a user callback failed";
    default: return "unknown error";
    }
}

const char *concord_status_name(int status) {
    switch (status) {
    case CONCORD_STATUS_UNSOLVED: return "unsolved";
    case CONCORD_STATUS_INTEGRAL: return "integral";
    case CONCORD_STATUS_FRACTIONAL: return "fractional";
    case CONCORD_STATUS_MAX_ITER: return "max_iter";
    case CONCORD_STATUS_NUMERIC: return "numeric";
    case CONCORD_STATUS_INFEASIBLE: return "infeasible";
    case CONCORD_STATUS_TIME_LIMIT: return "time_limit";
    case CONCORD_STATUS_INTERRUPTED: return "interrupted";
    case CONCORD_STATUS_CALLBACK_FAILED: return "callback_failed";
    case CONCORD_STATUS_OPTIMAL: return "optimal";
    case CONCORD_STATUS_NODE_LIMIT: return "node_limit";
    case CONCORD_STATUS_STALLED: return "stalled";
    default: return "unknown";
    }
}

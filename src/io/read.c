/*
 * Public reader entry points: format detection, reading a whole file into
 * memory, error and warning formatting shared by the format readers, and
 * the graph list they return. A failed read returns no graph at all.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers.h"

int reader_fail(reader *r, int code, const char *fmt, ...) {
    if (!r->error || r->error_size == 0) return code;
    int n = r->lx.line > 0
                ? snprintf(r->error, r->error_size, "%s:%lld: ", r->name, (long long)r->lx.line)
                : snprintf(r->error, r->error_size, "%s: ", r->name);
    if (n < 0 || (size_t)n >= r->error_size) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error + n, r->error_size - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

int reader_fail_graph(reader *r, const concord_graph *g) {
    return reader_fail(r, CONCORD_EPARSE, "%s", concord_last_error(g));
}

void reader_warn(reader *r, const char *fmt, ...) {
    if (!r->warn) return;
    char message[512];
    int n = snprintf(message, sizeof message, "%s:%lld: ", r->name, (long long)r->lx.line);
    if (n < 0 || (size_t)n >= sizeof message) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message + n, sizeof message - (size_t)n, fmt, ap);
    va_end(ap);
    r->warn(r->context, message);
}

int reader_push_graph(reader *r, concord_graph *g) {
    if (r->count == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 4;
        concord_graph **p = realloc(r->graphs, cap * sizeof *p);
        if (!p) {
            concord_graph_free(g);
            return reader_fail(r, CONCORD_ENOMEM, "out of memory");
        }
        r->graphs = p;
        r->cap = cap;
    }
    r->graphs[r->count++] = g;
    return CONCORD_OK;
}

void concord_free_graphs(concord_graph **graphs, size_t count) {
    if (!graphs) return;
    for (size_t k = 0; k < count; ++k) concord_graph_free(graphs[k]);
    free(graphs);
}

static int has_suffix(const char *name, const char *suffix) {
    size_t n = strlen(name), m = strlen(suffix);
    return n >= m && strcmp(name + n - m, suffix) == 0;
}

int concord_read_buffer(const char *data, size_t size, const char *name,
                        concord_format format, concord_graph ***graphs, size_t *count,
                        char *error, size_t error_size, concord_warning_fn warn,
                        void *context) {
    if (error && error_size) error[0] = '\0';
    if (!graphs || !count || (!data && size > 0)) return CONCORD_EINVAL;
    *graphs = NULL;
    *count = 0;
    reader r = {0};
    r.name = name ? name : "<buffer>";
    r.error = error;
    r.error_size = error_size;
    r.warn = warn;
    r.context = context;
    lexer_init(&r.lx, data ? data : "", size);
    if (format == CONCORD_FORMAT_AUTO)
        format = has_suffix(r.name, ".uai") ? CONCORD_FORMAT_UAI : CONCORD_FORMAT_FG;
    int rc;
    switch (format) {
    case CONCORD_FORMAT_FG: rc = fg_read(&r); break;
    case CONCORD_FORMAT_UAI: rc = uai_read(&r, NULL); break;
    default: rc = reader_fail(&r, CONCORD_EINVAL, "unknown format %d", (int)format);
    }
    lexer_free(&r.lx);
    if (rc == CONCORD_OK && r.count == 0) rc = reader_fail(&r, CONCORD_EPARSE, "no graph in the input");
    if (rc != CONCORD_OK) {
        concord_free_graphs(r.graphs, r.count);
        return rc;
    }
    *graphs = r.graphs;
    *count = r.count;
    return CONCORD_OK;
}

/* Inputs are held in memory whole; beyond this they are refused. */
#define MAX_INPUT_BYTES ((size_t)1 << 31)

/* Reads a whole file into a malloc'ed buffer. */
static int read_whole_file(const char *path, char **data_out, size_t *size_out, char *error,
                           size_t error_size) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        if (error) snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return CONCORD_EIO;
    }
    size_t size = 0, cap = 1 << 16;
    char *data = malloc(cap);
    int rc = data ? CONCORD_OK : CONCORD_ENOMEM, read_errno = 0;
    while (rc == CONCORD_OK) {
        if (size == cap) {
            char *p = cap >= MAX_INPUT_BYTES ? NULL : realloc(data, cap * 2);
            if (!p) {
                rc = cap >= MAX_INPUT_BYTES ? CONCORD_EIO : CONCORD_ENOMEM;
                break;
            }
            data = p;
            cap *= 2;
        }
        size_t got = fread(data + size, 1, cap - size, fp);
        size += got;
        if (got == 0) {
            if (ferror(fp)) {
                rc = CONCORD_EIO;
                read_errno = errno;
            }
            break;
        }
    }
    fclose(fp);
    if (rc != CONCORD_OK) {
        free(data);
        if (error)
            snprintf(error, error_size, "%s: %s", path,
                     rc == CONCORD_ENOMEM ? "out of memory"
                     : read_errno        ? strerror(read_errno)
                                         : "larger than the 2 GiB input limit");
        return rc;
    }
    *data_out = data;
    *size_out = size;
    return CONCORD_OK;
}

int concord_read_file(const char *path, concord_format format, concord_graph ***graphs,
                      size_t *count, char *error, size_t error_size, concord_warning_fn warn,
                      void *context) {
    if (error && error_size) error[0] = '\0';
    if (!path || !graphs || !count) return CONCORD_EINVAL;
    *graphs = NULL;
    *count = 0;
    char *data;
    size_t size;
    int rc = read_whole_file(path, &data, &size, error, error_size);
    if (rc) return rc;
    rc = concord_read_buffer(data, size, path, format, graphs, count, error, error_size, warn,
                             context);
    free(data);
    return rc;
}

int concord_read_uai_buffer(const char *model, size_t model_size, const char *model_name,
                            const char *evidence, size_t evidence_size,
                            const char *evidence_name, concord_graph **graph, char *error,
                            size_t error_size) {
    if (error && error_size) error[0] = '\0';
    if (!graph || (!model && model_size > 0) || (!evidence && evidence_size > 0))
        return CONCORD_EINVAL;
    *graph = NULL;
    reader r = {0}, e = {0};
    r.name = model_name ? model_name : "<model>";
    r.error = e.error = error;
    r.error_size = e.error_size = error_size;
    e.name = evidence_name ? evidence_name : "<evidence>";
    lexer_init(&r.lx, model ? model : "", model_size);
    lexer_init(&e.lx, evidence ? evidence : "", evidence_size);
    int rc = uai_read(&r, evidence ? &e : NULL);
    lexer_free(&r.lx);
    lexer_free(&e.lx);
    if (rc == CONCORD_OK) {
        *graph = r.graphs[0];
        free(r.graphs);
    } else {
        concord_free_graphs(r.graphs, r.count);
    }
    return rc;
}

int concord_read_uai(const char *model_path, const char *evidence_path,
                     concord_graph **graph, char *error, size_t error_size) {
    if (error && error_size) error[0] = '\0';
    if (!model_path || !graph) return CONCORD_EINVAL;
    *graph = NULL;
    char *model = NULL, *evidence = NULL;
    size_t model_size = 0, evidence_size = 0;
    int rc = read_whole_file(model_path, &model, &model_size, error, error_size);
    if (!rc && evidence_path)
        rc = read_whole_file(evidence_path, &evidence, &evidence_size, error, error_size);
    if (!rc)
        rc = concord_read_uai_buffer(model, model_size, model_path, evidence, evidence_size,
                                     evidence_path, graph, error, error_size);
    free(model);
    free(evidence);
    return rc;
}

/*
 * The public reader entry points. Everything goes through the streaming
 * reader (struct concord_reader): it holds the input and hands out one
 * graph at a time, so that a caller keeps in memory the input and the graph
 * in hand, not every graph of the file. concord_read_file, concord_read_buffer
 * and the UAI readers are loops over it. Also here: format detection, reading
 * a whole file, and the error and warning formatting the format readers
 * share.
 */
#include <ctype.h>
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

void concord_free_graphs(concord_graph **graphs, size_t count) {
    if (!graphs) return;
    for (size_t k = 0; k < count; ++k) concord_graph_free(graphs[k]);
    free(graphs);
}

/* Whether name ends in suffix (lower case), in any case: "model.UAI" too,
 * as the command-line tool takes it. */
static int has_suffix(const char *name, const char *suffix) {
    size_t n = strlen(name), m = strlen(suffix);
    if (n < m) return 0;
    for (size_t k = 0; k < m; ++k)
        if (tolower((unsigned char)name[n - m + k]) != suffix[k]) return 0;
    return 1;
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

/* A reader over data (size bytes; owned when `owned`), or NULL when out of
 * memory (owned data is then freed). */
static reader *reader_new(const char *data, size_t size, bool owned, const char *name,
                          concord_format format, char *error, size_t error_size,
                          concord_warning_fn warn, void *context) {
    reader *r = calloc(1, sizeof *r);
    char *name_copy = strdup(name);
    locale_t c_numbers = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!r || !name_copy || !c_numbers) {
        free(r);
        free(name_copy);
        if (c_numbers) freelocale(c_numbers);
        if (owned) free((char *)data);
        if (error && error_size) snprintf(error, error_size, "%s: out of memory", name);
        return NULL;
    }
    r->name = name_copy;
    r->c_numbers = c_numbers;
    r->data = owned ? (char *)data : NULL;
    r->size = size;
    r->format = format;
    r->error = error;
    r->error_size = error_size;
    r->warn = warn;
    r->context = context;
    lexer_init(&r->lx, data ? data : "", size);
    return r;
}

/* CONCORD_EINVAL for a bad argument of a public reader, with `what` as the
 * message. */
static int bad_argument(char *error, size_t error_size, const char *what) {
    if (error && error_size) snprintf(error, error_size, "%s", what);
    return CONCORD_EINVAL;
}

static int check_format(concord_format *format, const char *name, char *error,
                        size_t error_size) {
    if (*format == CONCORD_FORMAT_AUTO)
        *format = has_suffix(name, ".uai") ? CONCORD_FORMAT_UAI : CONCORD_FORMAT_FG;
    if (*format == CONCORD_FORMAT_FG || *format == CONCORD_FORMAT_UAI) return CONCORD_OK;
    if (error && error_size)
        snprintf(error, error_size, "%s: unknown format %d", name, (int)*format);
    return CONCORD_EINVAL;
}

int concord_reader_open_buffer(const char *data, size_t size, const char *name,
                               concord_format format, concord_reader **out, char *error,
                               size_t error_size, concord_warning_fn warn, void *context) {
    if (error && error_size) error[0] = '\0';
    if (!out) return bad_argument(error, error_size, "no place for the reader (out is NULL)");
    *out = NULL;
    if (!data && size > 0) return bad_argument(error, error_size, "data is NULL but size is not 0");
    if (!name) name = "<buffer>";
    int rc = check_format(&format, name, error, error_size);
    if (rc) return rc;
    *out = reader_new(data, size, false, name, format, error, error_size, warn, context);
    return *out ? CONCORD_OK : CONCORD_ENOMEM;
}

int concord_reader_open_file(const char *path, concord_format format, concord_reader **out,
                             char *error, size_t error_size, concord_warning_fn warn,
                             void *context) {
    if (error && error_size) error[0] = '\0';
    if (!out) return bad_argument(error, error_size, "no place for the reader (out is NULL)");
    *out = NULL;
    if (!path) return bad_argument(error, error_size, "path is NULL");
    int rc = check_format(&format, path, error, error_size);
    char *data = NULL;
    size_t size = 0;
    if (!rc) rc = read_whole_file(path, &data, &size, error, error_size);
    if (rc) return rc;
    *out = reader_new(data, size, true, path, format, error, error_size, warn, context);
    return *out ? CONCORD_OK : CONCORD_ENOMEM;
}

/* Attaches evidence (data owned when `owned`) to a UAI reader. */
static int attach_evidence(reader *r, const char *data, size_t size, bool owned,
                           const char *name) {
    reader *e = reader_new(data, size, owned, name, CONCORD_FORMAT_UAI, r->error, r->error_size,
                           NULL, NULL);
    if (!e) return CONCORD_ENOMEM;
    r->evidence = e;
    return CONCORD_OK;
}

int concord_reader_set_evidence(concord_reader *r, const char *path) {
    if (!r || !path) return CONCORD_EINVAL;
    if (r->format != CONCORD_FORMAT_UAI || r->evidence || r->graphs_read > 0 || r->failed ||
        r->at_end) {
        if (r->error && r->error_size)
            snprintf(r->error, r->error_size,
                     "%s: evidence goes with a UAI model, once, before its graph is read",
                     r->name);
        return CONCORD_EINVAL;
    }
    char *data;
    size_t size;
    int rc = read_whole_file(path, &data, &size, r->error, r->error_size);
    if (!rc) rc = attach_evidence(r, data, size, true, path);
    return rc;
}

int concord_reader_next(concord_reader *r, concord_graph **graph) {
    if (!graph) return CONCORD_EINVAL;
    *graph = NULL;
    if (!r) return CONCORD_EINVAL;
    if (r->failed) return r->failed;
    if (r->at_end) return CONCORD_OK;
    /* Numbers are read in the C format whatever the program's locale: in a
     * program that had called setlocale(LC_ALL, "") in a German locale,
     * strtod read "0.5" as 0 and every file with a decimal score failed.
     * The calling thread alone uses the C locale, for this call. */
    const locale_t previous = uselocale(r->c_numbers);
    int rc = r->format == CONCORD_FORMAT_UAI ? uai_next(r, graph) : fg_next(r, graph);
    uselocale(previous);
    if (rc == CONCORD_OK && !*graph) {
        r->at_end = true;
        if (r->graphs_read == 0) rc = reader_fail(r, CONCORD_EPARSE, "no graph in the input");
    }
    if (rc != CONCORD_OK) {
        concord_graph_free(*graph);
        *graph = NULL;
        r->failed = rc;
        return rc;
    }
    if (*graph) r->graphs_read += 1;
    return CONCORD_OK;
}

int concord_reader_uai_states(const concord_reader *r, int32_t var, int32_t *num_states,
                              const int32_t **state_vars) {
    if (!r || !r->uai_card || var < 0 || var >= r->uai_vars) return CONCORD_EINVAL;
    if (num_states) *num_states = r->uai_card[var];
    if (state_vars) *state_vars = r->uai_state_var + r->uai_first[var];
    return CONCORD_OK;
}

void concord_reader_close(concord_reader *r) {
    if (!r) return;
    lexer_free(&r->lx);
    concord_reader_close(r->evidence);
    freelocale(r->c_numbers);
    free(r->data);
    free(r->name);
    free(r->uai_card);
    free(r->uai_first);
    free(r->uai_state_var);
    free(r);
}

/* Every graph of the reader's input into a malloc'ed array; closes it. */
static int read_all(reader *r, concord_graph ***graphs, size_t *count) {
    concord_graph **list = NULL, *g;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = concord_reader_next(r, &g)) == CONCORD_OK && g) {
        if (n == cap) {
            size_t next = cap ? 2 * cap : 4;
            concord_graph **p = realloc(list, next * sizeof *p);
            if (!p) {
                concord_graph_free(g);
                rc = reader_fail(r, CONCORD_ENOMEM, "out of memory");
                break;
            }
            list = p;
            cap = next;
        }
        list[n++] = g;
    }
    concord_reader_close(r);
    if (rc != CONCORD_OK) {
        concord_free_graphs(list, n);
        return rc;
    }
    *graphs = list;
    *count = n;
    return CONCORD_OK;
}

int concord_read_buffer(const char *data, size_t size, const char *name,
                        concord_format format, concord_graph ***graphs, size_t *count,
                        char *error, size_t error_size, concord_warning_fn warn,
                        void *context) {
    if (error && error_size) error[0] = '\0';
    if (!graphs || !count)
        return bad_argument(error, error_size, "no place for the graphs (graphs or count is NULL)");
    *graphs = NULL;
    *count = 0;
    reader *r;
    int rc = concord_reader_open_buffer(data, size, name, format, &r, error, error_size, warn,
                                        context);
    return rc ? rc : read_all(r, graphs, count);
}

int concord_read_file(const char *path, concord_format format, concord_graph ***graphs,
                      size_t *count, char *error, size_t error_size, concord_warning_fn warn,
                      void *context) {
    if (error && error_size) error[0] = '\0';
    if (!graphs || !count)
        return bad_argument(error, error_size, "no place for the graphs (graphs or count is NULL)");
    *graphs = NULL;
    *count = 0;
    reader *r;
    int rc = concord_reader_open_file(path, format, &r, error, error_size, warn, context);
    return rc ? rc : read_all(r, graphs, count);
}

/* The one graph of a UAI reader; closes it. */
static int read_one(reader *r, concord_graph **graph) {
    int rc = concord_reader_next(r, graph);
    concord_reader_close(r);
    return rc;
}

int concord_read_uai_buffer(const char *model, size_t model_size, const char *model_name,
                            const char *evidence, size_t evidence_size,
                            const char *evidence_name, concord_graph **graph, char *error,
                            size_t error_size) {
    if (error && error_size) error[0] = '\0';
    if (!graph) return bad_argument(error, error_size, "no place for the graph (graph is NULL)");
    *graph = NULL;
    if ((!model && model_size > 0) || (!evidence && evidence_size > 0))
        return bad_argument(error, error_size, "model or evidence is NULL but its size is not 0");
    reader *r;
    int rc = concord_reader_open_buffer(model, model_size, model_name ? model_name : "<model>",
                                        CONCORD_FORMAT_UAI, &r, error, error_size, NULL, NULL);
    if (rc) return rc;
    if (evidence &&
        attach_evidence(r, evidence, evidence_size, false,
                        evidence_name ? evidence_name : "<evidence>") != CONCORD_OK) {
        concord_reader_close(r);
        if (error && error_size) snprintf(error, error_size, "out of memory");
        return CONCORD_ENOMEM;
    }
    return read_one(r, graph);
}

int concord_read_uai(const char *model_path, const char *evidence_path,
                     concord_graph **graph, char *error, size_t error_size) {
    if (error && error_size) error[0] = '\0';
    if (!graph) return bad_argument(error, error_size, "no place for the graph (graph is NULL)");
    *graph = NULL;
    reader *r;
    int rc = concord_reader_open_file(model_path, CONCORD_FORMAT_UAI, &r, error, error_size,
                                      NULL, NULL);
    if (rc) return rc;
    if (evidence_path && (rc = concord_reader_set_evidence(r, evidence_path)) != CONCORD_OK) {
        concord_reader_close(r);
        return rc;
    }
    return read_one(r, graph);
}

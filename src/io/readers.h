/*
 * Internal entry points of the file readers and their shared error and
 * graph-list helpers. The public wrappers are in read.c.
 */
#ifndef CONCORD_READERS_H
#define CONCORD_READERS_H

#include <stddef.h>

#include "concord.h"
#include "text.h"

typedef struct reader {
    text_lexer lx;
    const char *name;
    char *error;
    size_t error_size;
    concord_warning_fn warn;
    void *context;
    concord_graph **graphs;
    size_t count, cap;
} reader;

/* Formats "name:line: message" into the reader's error; returns code. */
int reader_fail(reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, for a graph builder failure: appends the graph's message. */
int reader_fail_graph(reader *r, const concord_graph *g);

/* Sends "name:line: message" to the warning callback, if any. */
void reader_warn(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends a graph to the reader's list (frees it on failure). */
int reader_push_graph(reader *r, concord_graph *g);

int fg_read(reader *r);
int uai_read(reader *r, reader *evidence);

#endif /* CONCORD_READERS_H */

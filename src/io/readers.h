/*
 * The streaming reader (struct concord_reader) as the format readers see
 * it, and the error and warning helpers they share. The public entry
 * points, over this one structure, are in read.c.
 */
#ifndef CONCORD_READERS_H
#define CONCORD_READERS_H

#include <locale.h>
#include <stddef.h>

#include "concord.h"
#include "text.h"

typedef struct concord_reader reader;

struct concord_reader {
    text_lexer lx;
    char *name;         /* for messages (owned copy) */
    char *data;         /* the input when the reader owns it (files), else NULL */
    size_t size;        /* bytes of input */
    concord_format format;
    char *error;        /* the caller's message buffer */
    size_t error_size;
    concord_warning_fn warn;
    void *context;
    int failed;         /* sticky: the code of the first failure */
    size_t graphs_read; /* graphs returned so far */
    bool at_end;
    locale_t c_numbers; /* the C locale's number format, used while reading */
    reader *evidence;   /* UAI evidence, or NULL */
    /* UAI: how the last model's states map to the graph's variables */
    int32_t uai_vars;
    int32_t *uai_card;       /* per UAI variable: its cardinality */
    int64_t *uai_first;      /* per UAI variable: offset of its states below */
    int32_t *uai_state_var;  /* per original state: its graph variable, or -1 */
};

/* Formats "name:line: message" into the reader's error; returns code. */
int reader_fail(reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, for a graph builder failure: appends the graph's message. */
int reader_fail_graph(reader *r, const concord_graph *g);

/* Sends "name:line: message" to the warning callback, if any. */
void reader_warn(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The next graph of the input into *g, or *g = NULL at its end. */
int fg_next(reader *r, concord_graph **g);
int uai_next(reader *r, concord_graph **g);

#endif /* CONCORD_READERS_H */

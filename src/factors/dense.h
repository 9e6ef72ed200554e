/*
 * Parameters of the DENSE factor (see dense.c), shared with the graph
 * builder that validates and fills them.
 */
#ifndef CONCORD_DENSE_H
#define CONCORD_DENSE_H

#include <stdint.h>

typedef struct dense_params {
    int32_t n_vars;     /* multi-valued variables */
    int32_t n_configs;  /* product of their state counts */
    int32_t *states;    /* state count of each variable */
    int32_t *offset;    /* link of each variable's first state */
    uint8_t *forbidden; /* per joint state: 1 when it has probability zero */
} dense_params;

/* One allocation holding the parameters (freed with free()); the forbidden
 * table starts all zero. NULL when out of memory. */
dense_params *dense_params_new(int32_t n_vars, const int32_t *states, int32_t n_configs);

#endif /* CONCORD_DENSE_H */

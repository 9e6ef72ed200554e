/*
 * Out-of-line parts of the test helpers.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "structured_gen.h"

double rng_normal(test_rng *r) {
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

double monotonic_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

char *read_whole_file(const char *path, size_t *size) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *data = malloc(cap + 1);
    while (data) {
        n += fread(data + n, 1, cap - n, fp);
        if (n < cap) break; /* end of file, or an error */
        char *more = realloc(data, 2 * cap + 1);
        if (!more) {
            free(data);
            data = NULL;
            break;
        }
        data = more;
        cap *= 2;
    }
    int failed = !data || ferror(fp), saved_errno = errno;
    fclose(fp);
    if (failed) {
        free(data);
        errno = saved_errno;
        return NULL;
    }
    data[n] = '\0';
    if (size) *size = n;
    return data;
}

char *read_whole_file_or_fail(const char *path, size_t *size) {
    char *data = read_whole_file(path, size);
    if (!data) fail_msg("cannot read %s: %s", path, strerror(errno));
    return data;
}

int write_text_file(const char *path, const char *text) {
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    size_t n = strlen(text);
    int failed = fwrite(text, 1, n, fp) != n;
    if (fclose(fp) != 0) failed = 1;
    return failed ? -1 : 0;
}

void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
                char child[1024];
                snprintf(child, sizeof child, "%s/%s", path, e->d_name);
                remove_tree(child);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

bool odometer_next(int *digits, const int *radix, int n) {
    int i = n - 1;
    while (i >= 0 && ++digits[i] == radix[i]) digits[i--] = 0;
    return i >= 0;
}

bool top_two_offer(top_two *t, double x) {
    if (x > t->best) {
        t->second = t->best;
        t->best = x;
        return true;
    }
    if (x > t->second) t->second = x;
    return false;
}

/* The ring of paths handed out by shared_data_path_or_skip and
 * test_data_path. */
static const char *path_in_ring(const char *dir, const char *relative) {
    static char ring[8][1024];
    static unsigned next;
    char *buf = ring[next++ % 8];
    int n = snprintf(buf, sizeof ring[0], "%s/%s", dir, relative);
    if (n < 0 || (size_t)n >= sizeof ring[0]) fail_msg("path too long: %s/%s", dir, relative);
    return buf;
}

const char *shared_data_path_or_skip(const char *relative) {
    const char *path = path_in_ring(CONCORD_SHARED_DATA, relative);
    struct stat st;
    if (stat(path, &st) != 0) {
        print_message("skipped: ../shared/data/%s not found\n", relative);
        skip();
    }
    return path;
}

const char *test_data_path(const char *relative) {
    return path_in_ring(CONCORD_TEST_DATA, relative);
}

concord_solver *new_solver_or_fail(const concord_graph *g) {
    concord_solver *s = NULL;
    int rc = concord_solver_new(g, &s);
    if (rc != CONCORD_OK) fail_msg("concord_solver_new: %s", concord_strerror(rc));
    return s;
}

char *generated_text_or_fail(const gen_spec *spec, size_t *size) {
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    if (!out) fail_msg("open_memstream: %s", strerror(errno));
    const int rc = gen_write_fg(out, spec);
    if (fclose(out) != 0 || rc != 0) fail_msg("the generator refused the graph (%d)", rc);
    if (size) *size = length;
    return text;
}

int read_one_factor_graph(char *text, char **lines, const char *kind, int max, double *theta,
                          int *link_var, char **words) {
    const char *line = strtok_r(text, "\n", lines);
    assert_non_null(line);
    const int n = atoi(line);
    assert_true(n <= max);
    assert_int_equal(atoi(strtok_r(NULL, "\n", lines)), 1);
    for (int i = 0; i < n; ++i) theta[i] = strtod(strtok_r(NULL, "\n", lines), NULL);
    *words = NULL;
    assert_string_equal(strtok_r(strtok_r(NULL, "\n", lines), " ", words), kind);
    const int degree = atoi(strtok_r(NULL, " ", words));
    assert_true(degree <= max);
    for (int k = 0; k < degree; ++k) link_var[k] = atoi(strtok_r(NULL, " ", words)) - 1;
    return degree;
}

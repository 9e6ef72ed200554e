/*
 * The heap of the musl-linked executable (tools/cli_malloc.c), linked into
 * this program in place of the C library's malloc: blocks keep their
 * contents and alignment through random traffic across the small classes
 * and large mappings, reused blocks come back zeroed from calloc, realloc
 * keeps contents from small to large to larger (mremap), aligned blocks
 * are aligned and go back where they came from, and sizes that overflow
 * fail cleanly.
 */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

enum { SLOTS = 512, ROUNDS = 20000 };

/* The capacity cli_malloc records in the header before each block (read
 * through an integer address: the compiler rightly sees it outside the
 * block). */
static size_t recorded_capacity(const void *p) {
    return *(const size_t *)((uintptr_t)p - 2 * sizeof(size_t));
}

static unsigned char pattern(size_t slot, size_t k) { return (unsigned char)(slot * 131 + k * 7 + 1); }

static void fill(unsigned char *p, size_t n, size_t slot) {
    for (size_t k = 0; k < n; ++k) p[k] = pattern(slot, k);
}

static int holds_pattern(const unsigned char *p, size_t n, size_t slot) {
    for (size_t k = 0; k < n; ++k)
        if (p[k] != pattern(slot, k)) return 0;
    return 1;
}

/* Mostly small sizes of every class, a few beyond the small limit. */
static size_t random_size(test_rng *rng) {
    if (rng_uniform(rng) < 0.05) return 131072 + (size_t)(rng_uniform(rng) * 400000.0);
    return (size_t)(rng_uniform(rng) * rng_uniform(rng) * 20000.0);
}

static void the_heap_in_use_is_this_one(void **state) {
    (void)state;
    void *p = malloc(40);
    assert_non_null(p);
    assert_int_equal(recorded_capacity(p), 64);
    free(p);
}

static void random_traffic_keeps_contents_and_alignment(void **state) {
    (void)state;
    test_rng rng = {71};
    unsigned char *block[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    for (int round = 0; round < ROUNDS; ++round) {
        size_t s = (size_t)rng_int(&rng, SLOTS);
        if (block[s]) assert_true(holds_pattern(block[s], size[s], s));
        double action = rng_uniform(&rng);
        if (action < 0.3) {
            free(block[s]);
            block[s] = NULL;
            size[s] = 0;
        } else if (action < 0.6 && block[s]) {
            size_t n = random_size(&rng);
            unsigned char *q = realloc(block[s], n);
            assert_non_null(q);
            size_t kept = n < size[s] ? n : size[s];
            assert_true(holds_pattern(q, kept, s));
            block[s] = q;
            size[s] = n;
            fill(q, n, s);
        } else {
            free(block[s]);
            size_t n = random_size(&rng);
            block[s] = action < 0.8 ? malloc(n) : calloc(1, n);
            assert_non_null(block[s]);
            if (action >= 0.8)
                for (size_t k = 0; k < n; ++k) assert_int_equal(block[s][k], 0);
            size[s] = n;
            fill(block[s], n, s);
        }
        if (block[s]) assert_int_equal((uintptr_t)block[s] % 16, 0);
    }
    for (int s = 0; s < SLOTS; ++s) {
        if (block[s]) assert_true(holds_pattern(block[s], size[s], (size_t)s));
        free(block[s]);
    }
}

static void calloc_clears_a_reused_block(void **state) {
    (void)state;
    unsigned char *p = malloc(1000);
    assert_non_null(p);
    volatile unsigned char *dirty = p; /* stores the compiler may not drop before free */
    for (int k = 0; k < 1000; ++k) dirty[k] = 0xab;
    const uintptr_t freed = (uintptr_t)p;
    free(p);
    unsigned char *q = calloc(10, 100);
    assert_int_equal((uintptr_t)q, freed); /* the freed block came back */
    for (int k = 0; k < 1000; ++k) assert_int_equal(q[k], 0);
    free(q);
}

static void realloc_keeps_contents_from_small_to_large(void **state) {
    (void)state;
    const size_t sizes[] = {100, 3000, 200000, 5000000, 12000000};
    unsigned char *p = NULL;
    size_t had = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        unsigned char *q = realloc(p, sizes[k]);
        assert_non_null(q);
        assert_true(holds_pattern(q, had, 5));
        fill(q, sizes[k], 5);
        p = q;
        had = sizes[k];
    }
    const uintptr_t before = (uintptr_t)p;
    unsigned char *shrunk = realloc(p, 10);
    assert_int_equal((uintptr_t)shrunk, before); /* shrinking keeps the block */
    assert_true(holds_pattern(shrunk, 10, 5));
    free(shrunk);
}

static void aligned_blocks_are_aligned_and_freed_here(void **state) {
    (void)state;
    const size_t alignments[] = {8, 16, 32, 64, 256, 4096};
    for (size_t k = 0; k < sizeof alignments / sizeof alignments[0]; ++k) {
        const size_t alignment = alignments[k];
        unsigned char *p = aligned_alloc(alignment, 3000);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % alignment, 0);
        assert_true(malloc_usable_size(p) >= 3000);
        fill(p, 3000, k);
        unsigned char *q = realloc(p, 500000); /* a move: the contents follow */
        assert_non_null(q);
        assert_true(holds_pattern(q, 3000, k));
        free(q);
        void *r = NULL;
        assert_int_equal(posix_memalign(&r, alignment, 100), alignment < sizeof(void *) ? EINVAL : 0);
        if (r) assert_int_equal((uintptr_t)r % alignment, 0);
        free(r);
        unsigned char *m = memalign(alignment, 200000);
        assert_non_null(m);
        assert_int_equal((uintptr_t)m % alignment, 0);
        fill(m, 200000, k);
        assert_true(holds_pattern(m, 200000, k));
        const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        void *first_page = (void *)((uintptr_t)m / page * page);
        free(m);
        /* the whole mapping went back: its first page is no longer mapped */
        assert_int_equal(msync(first_page, (size_t)page, MS_ASYNC), -1);
        assert_int_equal(errno, ENOMEM);
    }
    errno = 0;
    assert_null(aligned_alloc(48, 10)); /* not a power of two */
    assert_int_equal(errno, EINVAL);
}

static void overflowing_sizes_fail_with_enomem(void **state) {
    (void)state;
    /* volatile: the compiler would refuse the call it can see overflow */
    volatile size_t count = SIZE_MAX / 8, huge = SIZE_MAX - 8;
    errno = 0;
    assert_null(calloc(count, 16));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(malloc(huge));
    assert_int_equal(errno, ENOMEM);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_heap_in_use_is_this_one),
        cmocka_unit_test(random_traffic_keeps_contents_and_alignment),
        cmocka_unit_test(calloc_clears_a_reused_block),
        cmocka_unit_test(realloc_keeps_contents_from_small_to_large),
        cmocka_unit_test(aligned_blocks_are_aligned_and_freed_here),
        cmocka_unit_test(overflowing_sizes_fail_with_enomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

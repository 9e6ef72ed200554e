/*
 * Allocation-free sort of keyed pairs: insertion sort for short runs and a
 * median-of-three quicksort (recursing on the smaller side, so the stack
 * depth stays logarithmic) above that. Factors sort a few to a few thousand
 * breakpoints per call, millions of times per solve, so qsort's indirect
 * comparisons are avoided.
 */
#include "util.h"

static void insertion_sort(keyed *x, int32_t n) {
    for (int32_t i = 1; i < n; ++i) {
        keyed item = x[i];
        int32_t j = i - 1;
        while (j >= 0 && x[j].key > item.key) {
            x[j + 1] = x[j];
            --j;
        }
        x[j + 1] = item;
    }
}

static void swap_keyed(keyed *a, keyed *b) {
    keyed t = *a;
    *a = *b;
    *b = t;
}

void sort_keyed(keyed *x, int32_t n) {
    while (n > 16) {
        int32_t mid = n / 2;
        if (x[mid].key < x[0].key) swap_keyed(&x[mid], &x[0]);
        if (x[n - 1].key < x[0].key) swap_keyed(&x[n - 1], &x[0]);
        if (x[n - 1].key < x[mid].key) swap_keyed(&x[n - 1], &x[mid]);
        double pivot = x[mid].key;
        int32_t i = 0, j = n - 1;
        for (;;) {
            while (x[i].key < pivot) ++i;
            while (x[j].key > pivot) --j;
            if (i >= j) break;
            swap_keyed(&x[i], &x[j]);
            ++i;
            --j;
        }
        int32_t left = j + 1; /* x[0..left) <= pivot <= x[left..n) */
        if (left < n - left) {
            sort_keyed(x, left);
            x += left;
            n -= left;
        } else {
            sort_keyed(x + left, n - left);
            n = left;
        }
    }
    insertion_sort(x, n);
}

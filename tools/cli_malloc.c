/*
 * The heap of the musl-linked `concord` executable (CMakeLists.txt links
 * this file into it and into nothing else; the libraries use whatever
 * malloc their host program has).
 *
 * Why a heap of our own: musl's allocator maps and unmaps a few pages at a
 * time as arrays grow and are freed. Reading and solving one of AD3's
 * small graphs cost 50 mmap/munmap pairs and 120 more page faults than
 * glibc's malloc, which is more than the cheap start of a musl executable
 * saves (see docs/design.md). This heap keeps what it maps:
 *   - a small block (up to SMALL_MAX bytes) has a power-of-two capacity
 *     and is carved from chunks of CHUNK_BYTES mapped on demand; a freed
 *     small block goes on the free list of its capacity and is reused
 *     before anything new is carved;
 *   - a large block is a mapping of its own, grown by mremap and unmapped
 *     when freed.
 * Memory fresh from mmap is zero, so calloc clears only reused blocks.
 * Every block starts with a 16-byte header (its capacity, and the size of
 * its own mapping for a large block), which keeps blocks 16-byte aligned.
 * One spin lock guards the free lists and the current chunk.
 */
#define _GNU_SOURCE /* mremap */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { MIN_SHIFT = 4, MAX_SHIFT = 17, N_CLASSES = MAX_SHIFT - MIN_SHIFT + 1 };
#define SMALL_MAX ((size_t)1 << MAX_SHIFT)
#define CHUNK_BYTES ((size_t)1 << 20)

typedef struct header {
    size_t capacity; /* usable bytes after the header */
    size_t mapping;  /* large blocks: bytes of the block's own mapping; 0 for small ones */
} header;
_Static_assert(sizeof(header) == 16, "the header keeps blocks 16-byte aligned");

typedef struct free_block {
    struct free_block *next;
} free_block;

static free_block *free_lists[N_CLASSES];
static char *chunk_next, *chunk_end;
static atomic_flag heap_lock = ATOMIC_FLAG_INIT;

static void lock(void) {
    while (atomic_flag_test_and_set_explicit(&heap_lock, memory_order_acquire)) continue;
}

static void unlock(void) { atomic_flag_clear_explicit(&heap_lock, memory_order_release); }

static header *header_of(void *p) { return (header *)p - 1; }

/* The smallest class whose capacity, 2^(MIN_SHIFT + k), holds n bytes. */
static int class_of(size_t n) {
    int k = 0;
    while (((size_t)1 << (MIN_SHIFT + k)) < n) ++k;
    return k;
}

static void *map_pages(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Bytes of a large block's mapping for n usable bytes, or 0 on overflow. */
static size_t large_mapping(size_t n) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (n > SIZE_MAX - sizeof(header) - page) return 0;
    return (n + sizeof(header) + page - 1) / page * page;
}

/* A block of at least n bytes; *fresh tells whether it is still zero. */
static void *allocate(size_t n, bool *fresh) {
    *fresh = true;
    if (n > SMALL_MAX) {
        size_t bytes = large_mapping(n);
        header *h = bytes ? map_pages(bytes) : NULL;
        if (!h) {
            errno = ENOMEM;
            return NULL;
        }
        *h = (header){bytes - sizeof(header), bytes};
        return h + 1;
    }
    const int k = class_of(n);
    const size_t capacity = (size_t)1 << (MIN_SHIFT + k);
    lock();
    free_block *reused = free_lists[k];
    if (reused) {
        free_lists[k] = reused->next;
        unlock();
        *fresh = false;
        return reused;
    }
    const size_t bytes = sizeof(header) + capacity;
    if ((size_t)(chunk_end - chunk_next) < bytes) {
        /* what is left of the old chunk (less than a block) is abandoned */
        char *chunk = map_pages(CHUNK_BYTES);
        if (!chunk) {
            unlock();
            errno = ENOMEM;
            return NULL;
        }
        chunk_next = chunk;
        chunk_end = chunk + CHUNK_BYTES;
    }
    header *h = (header *)chunk_next;
    chunk_next += bytes;
    unlock();
    *h = (header){capacity, 0};
    return h + 1;
}

void *malloc(size_t n) {
    bool fresh;
    return allocate(n, &fresh);
}

void *calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    bool fresh;
    void *p = allocate(count * size, &fresh);
    if (p && !fresh) memset(p, 0, count * size);
    return p;
}

void free(void *p) {
    if (!p) return;
    header *h = header_of(p);
    if (h->mapping) {
        munmap(h, h->mapping);
        return;
    }
    free_block *block = p;
    const int k = class_of(h->capacity);
    lock();
    block->next = free_lists[k];
    free_lists[k] = block;
    unlock();
}

void *realloc(void *p, size_t n) {
    if (!p) return malloc(n);
    header *h = header_of(p);
    if (n <= h->capacity) return p;
    if (h->mapping && n > SMALL_MAX) {
        size_t bytes = large_mapping(n);
        header *moved = bytes ? mremap(h, h->mapping, bytes, MREMAP_MAYMOVE) : MAP_FAILED;
        if (moved == MAP_FAILED) {
            errno = ENOMEM;
            return NULL;
        }
        *moved = (header){bytes - sizeof(header), bytes};
        return moved + 1;
    }
    void *q = malloc(n);
    if (!q) return NULL;
    memcpy(q, p, h->capacity);
    free(p);
    return q;
}

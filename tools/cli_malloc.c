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
 *     when freed;
 *   - a block aligned beyond 16 bytes (aligned_alloc and its kin: the
 *     library never asks for one, but musl's own versions would hand out
 *     memory of musl's heap, which free here cannot take back) is a mapping
 *     of its own too, the block `alignment` bytes into it.
 * Memory fresh from mmap is zero, so calloc clears only reused blocks.
 * Every block follows a 16-byte header (its capacity, and the size of its
 * own mapping for a mapped block), which keeps blocks 16-byte aligned.
 * One spin lock guards the free lists and the current chunk.
 */
#define _GNU_SOURCE /* mremap */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { MIN_SHIFT = 4, MAX_SHIFT = 17, N_CLASSES = MAX_SHIFT - MIN_SHIFT + 1 };
#define SMALL_MAX ((size_t)1 << MAX_SHIFT)
#define CHUNK_BYTES ((size_t)1 << 20)

typedef struct header {
    size_t capacity; /* usable bytes after the header */
    size_t mapping;  /* mapped blocks: bytes of their own mapping; 0 for small ones */
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

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* Bytes of a mapping that holds n usable bytes from `offset` bytes in, or
 * 0 on overflow. */
static size_t mapping_bytes(size_t offset, size_t n) {
    const size_t page = page_size();
    if (n > SIZE_MAX - offset - page) return 0;
    return (n + offset + page - 1) / page * page;
}

/* The start of a mapped block's mapping: the header lies in its first
 * page (16 bytes in, or `alignment` - 16 for an aligned block). */
static void *mapping_of(header *h) { return (void *)((uintptr_t)h & ~(page_size() - 1)); }

/* A mapping holding n usable bytes from `offset` bytes in (a multiple of
 * 16, at most a page), its header just before them. */
static void *map_block(size_t offset, size_t n) {
    size_t bytes = mapping_bytes(offset, n);
    char *mapping = bytes ? map_pages(bytes) : NULL;
    if (!mapping) {
        errno = ENOMEM;
        return NULL;
    }
    header *h = (header *)(mapping + offset) - 1;
    *h = (header){bytes - offset, bytes};
    return h + 1;
}

/* A block of at least n bytes; *fresh tells whether it is still zero. */
static void *allocate(size_t n, bool *fresh) {
    *fresh = true;
    if (n > SMALL_MAX) return map_block(sizeof(header), n);
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
        /* what is left of the old chunk, too small for this block, is abandoned */
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
        munmap(mapping_of(h), h->mapping);
        return;
    }
    if (h->capacity > SMALL_MAX) abort(); /* not a block of this heap */
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
    if (h->mapping && n > SMALL_MAX && mapping_of(h) == (void *)h) {
        size_t bytes = mapping_bytes(sizeof(header), n);
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

/* Alignments up to 16 are every block's; larger ones, up to a page, get a
 * mapping of their own. */
static void *allocate_aligned(size_t alignment, size_t n) {
    if (alignment & (alignment - 1) || alignment > page_size()) {
        errno = EINVAL;
        return NULL;
    }
    return alignment <= sizeof(header) ? malloc(n) : map_block(alignment, n);
}

void *aligned_alloc(size_t alignment, size_t n) { return allocate_aligned(alignment, n); }

void *memalign(size_t alignment, size_t n) { return allocate_aligned(alignment, n); }

int posix_memalign(void **out, size_t alignment, size_t n) {
    if (alignment < sizeof(void *)) return EINVAL;
    void *p = allocate_aligned(alignment, n);
    if (!p) return errno;
    *out = p;
    return 0;
}

size_t malloc_usable_size(void *p) { return p ? header_of(p)->capacity : 0; }

// Counts the heap allocations of the whole process while counting is on,
// for `compare --allocations`: malloc and its family are defined here, in
// the executable, so every library's calls (libevent's, GLib's, libuv's,
// sd-event's, the Swift runtime's) come here first (ELF symbol
// interposition, which glibc supports for malloc) and go on to glibc's own.
// Off, a call costs one relaxed load more; free is not counted.
#define _GNU_SOURCE
#include "raw_libevent.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_int counting;
static atomic_long allocations;

static inline void count_one(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t size) { count_one(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { count_one(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { count_one(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { count_one(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count_one(); return __libc_memalign(alignment, size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return ENOMEM;
    *result = pointer;
    return 0;
}

void allocation_counting(int on) { atomic_store(&counting, on); }
long allocation_count(void) { return atomic_load(&allocations); }

#ifndef CTHREADTOKEN_H
#define CTHREADTOKEN_H

// A per-thread token that is never reused: the identity a loop keeps of
// the thread that owns it. A `pthread_t` cannot serve: glibc hands a
// finished thread's descriptor (and so its pthread_t) to the next thread
// it creates, so a loop whose thread had ended took an unrelated new
// thread for its own.

#include <stdint.h>

/// The calling thread's token, or 0 for a thread that never asked for one
/// (such a thread owns no loop, and no owner's token is 0). Defined in
/// thread_token.c; initial-exec, so reading it is one load from the thread
/// pointer, no call.
extern __thread uint64_t CThreadToken_current __attribute__((tls_model("initial-exec")));

/// The calling thread's token, given one (from a process-wide counter,
/// never 0, never given twice) on its first call.
uint64_t CThreadToken_assign(void);

/// The calling thread's token: 0 unless `CThreadToken_assign` was called on
/// this thread. Declared `pure`: it reads only thread-local memory that no
/// Swift code writes, so the optimizer may keep retains out of its way.
__attribute__((pure)) static inline uint64_t CThreadToken_read(void) { return CThreadToken_current; }

#endif

#include "CThreadToken.h"

#include <stdatomic.h>

__thread uint64_t CThreadToken_current __attribute__((tls_model("initial-exec"))) = 0;

/// 64 bits: a process would have to start a thread every nanosecond for
/// five centuries to run out.
static _Atomic uint64_t last_token;

uint64_t CThreadToken_assign(void) {
    if (CThreadToken_current == 0) {
        CThreadToken_current = atomic_fetch_add_explicit(&last_token, 1, memory_order_relaxed) + 1;
    }
    return CThreadToken_current;
}

#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H

// Linux APIs that Swift's Glibc module does not import: timerfd (used to
// notice CLOCK_REALTIME being set) and its flags, which are enum-plus-macro
// pairs the importer drops. Each wrapper only gives Swift a typed name.

#include <sys/timerfd.h>
#include <time.h>

/// timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC).
static inline int CLinux_realtime_timerfd(void) {
    return timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
}

/// Arms `fd` to expire at the absolute CLOCK_REALTIME second `seconds`, and
/// to be cancelled (read fails with ECANCELED) whenever the clock is set.
static inline int CLinux_arm_cancel_on_set(int fd, long seconds) {
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = seconds;
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL);
}

#endif

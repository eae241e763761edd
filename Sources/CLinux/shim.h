#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H

// Linux APIs that Swift's Glibc module does not import: timerfd (used to
// notice CLOCK_REALTIME being set) and its flags, which are enum-plus-macro
// pairs the importer drops. Each wrapper only gives Swift a typed name.

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <errno.h>
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

/// An epoll instance watching `fd` for EPOLLPRI, the readiness a PSI
/// trigger (/proc/pressure/*, a cgroup's memory.pressure) signals. libevent
/// watches only read and write readiness, but an epoll descriptor is itself
/// readable when its set has an event, so the loop watches this one.
/// Returns the epoll descriptor, or -1 with errno set.
static inline int CLinux_epoll_for_priority(int fd) {
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) return -1;
    struct epoll_event event = {0};
    event.events = EPOLLPRI;
    event.data.fd = fd;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event) != 0) {
        int saved = errno;
        close(epfd);
        errno = saved;
        return -1;
    }
    return epfd;
}

/// Takes one ready event from `epfd` without waiting: 1 for EPOLLPRI,
/// 2 when the watched file reported an error (EPOLLERR: the trigger is
/// gone, e.g. its cgroup was removed), 0 for nothing, -1 with errno set.
static inline int CLinux_epoll_take(int epfd) {
    struct epoll_event event = {0};
    int count = epoll_wait(epfd, &event, 1, 0);
    if (count <= 0) return count;
    if (event.events & EPOLLERR) return 2;
    return (event.events & EPOLLPRI) ? 1 : 0;
}

#endif

#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H

// The Linux system calls MainLoop makes outside libevent, wrapped where
// Swift's Glibc module does not import them or drops their flags (macros,
// enum-plus-macro pairs): eventfd and timerfd (the loop's wake-ups and its
// timer clock, the CLOCK_REALTIME set detector), epoll (a PSI trigger's
// POLLPRI), thread names, and libdispatch's main-queue hooks. Each wrapper
// only gives Swift a typed name. (CLibevent wraps libevent alone.)

#include <linux/netlink.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
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


/// eventfd flags are macros too.
static inline int CLinux_eventfd_nonblocking(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// The loop's timer clock: a CLOCK_MONOTONIC timerfd (flags are macros).
static inline int CLinux_monotonic_timerfd(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

/// Arms `fd` to expire at the absolute CLOCK_MONOTONIC instant `nanoseconds`
/// (never early: the kernel fires at or after it); 0 or less disarms it.
static inline int CLinux_arm_timerfd(int fd, long long nanoseconds) {
    struct itimerspec spec = {0};
    if (nanoseconds > 0) {
        spec.it_value.tv_sec = (time_t)(nanoseconds / 1000000000LL);
        spec.it_value.tv_nsec = (long)(nanoseconds % 1000000000LL);
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

// libdispatch's main-queue hooks, the ones CoreFoundation's run loop uses on
// Linux to run the main queue (DispatchQueue.main blocks and, through it,
// @MainActor jobs) on a thread that runs its own loop instead of parking in
// dispatch_main(). They are exported by libdispatch.so but declared only in
// its private headers, so they are declared here. The handle is an eventfd
// (EFD_NONBLOCK) that libdispatch writes when the main queue has work;
// the callback drains the queue on the calling (main) thread.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

/// The main queue's eventfd (created on first call).
static inline int CLinux_main_queue_handle(void) { return _dispatch_get_main_queue_handle_4CF(); }

/// Runs what the main queue holds, on the calling thread (the main thread).
static inline void CLinux_drain_main_queue(void) { _dispatch_main_queue_callback_4CF(NULL); }

/// Whether the calling thread is the process's main thread.
static inline int CLinux_is_main_thread(void) { return getpid() == (pid_t)syscall(SYS_gettid); }

/// Names the calling thread as `ps -L`, `top -H` and /proc/PID/task/TID/comm
/// show it (the kernel keeps the first 15 bytes). One prctl, no file.
static inline void CLinux_name_current_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/// A non-blocking NETLINK_KOBJECT_UEVENT socket bound to multicast `groups`
/// (1: the kernel's device events, 2: udev's); -errno on failure.
static inline int CLinux_uevent_socket(unsigned groups) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
    if (fd < 0) return -errno;
    struct sockaddr_nl address = {0};
    address.nl_family = AF_NETLINK;
    address.nl_groups = groups;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

/// Hands the heap's free pages back to the kernel (glibc's malloc_trim(0)).
static inline int CLinux_malloc_trim(void) { return malloc_trim(0); }

// Child processes through pidfds (Linux 5.3+): a pidfd is readable once its
// process has ended, and waitid(P_PIDFD) reaps exactly that child, so the
// loop needs no SIGCHLD handler and never reaps anyone else's children.
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/// pidfd_open(pid, 0), close-on-exec by the kernel; -1 with errno set.
static inline int CLinux_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/// waitid(P_PIDFD, pidfd, WEXITED | WNOHANG [| WNOWAIT]): 1 when the child
/// has ended (`how` is CLD_EXITED, CLD_KILLED or CLD_DUMPED and `status` its
/// exit code or signal), 0 while it runs, -1 with errno set (ECHILD: not a
/// child of this process, or already reaped). `keep` leaves it unreaped.
static inline int CLinux_pidfd_wait(int pidfd, int keep, int *how, int *status) {
    siginfo_t info;
    info.si_pid = 0;
    if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | WNOHANG | (keep ? WNOWAIT : 0)) != 0) return -1;
    if (info.si_pid == 0) return 0;
    *how = info.si_code;
    *status = info.si_status;
    return 1;
}

/// The `how` values of CLinux_pidfd_wait (macros in the C headers).
static const int CLinux_child_exited = CLD_EXITED;
static const int CLinux_child_killed = CLD_KILLED;
static const int CLinux_child_dumped = CLD_DUMPED;

/// posix_spawn (or posix_spawnp when `search_path`) of `path` with `argv`
/// and `envp` (NULL-terminated), in `directory` (NULL: this one), standard
/// streams from `in`/`out`/`err` (-1: inherited) and no other descriptor
/// (everything from 3 up is closed in the child, close-on-exec or not, as
/// Python's subprocess does by default: a pipe's write end left open in a
/// child keeps its reader from ever seeing the end). The child starts with no
/// signal blocked and every signal at its default action, whatever this
/// thread blocks or this process ignores (a loop's threads block signals;
/// runtimes ignore SIGPIPE). Returns 0 and the pid, or an errno value.
static inline int CLinux_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                               int in, int out, int err, int search_path, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) { posix_spawn_file_actions_destroy(&actions); return result; }
    int fds[3] = {in, out, err};
    for (int target = 0; target < 3 && result == 0; target++) {
        if (fds[target] >= 0) result = posix_spawn_file_actions_adddup2(&actions, fds[target], target);
    }
    if (result == 0) result = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (result == 0 && directory) result = posix_spawn_file_actions_addchdir_np(&actions, directory);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    if (result == 0) result = posix_spawnattr_setsigmask(&attributes, &none);
    if (result == 0) result = posix_spawnattr_setsigdefault(&attributes, &all);
    if (result == 0) result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (result == 0) {
        result = search_path ? posix_spawnp(pid, path, &actions, &attributes, argv, envp)
                             : posix_spawn(pid, path, &actions, &attributes, argv, envp);
    }
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

#endif

import CLinux
import Glibc

/// Starts the detached helper threads MainLoop's parts run beside the loop
/// (the watchdog, an output pump's writer) with every asynchronous signal
/// blocked.
///
/// Why: the kernel hands a signal sent to the process to any thread that
/// does not block it. The loop thread is where libevent's signal sources
/// take them; a helper thread that took one in the window where a source
/// is removed (libevent restores the default action, as `ServiceRunner`
/// does at exit before it ignores SIGTERM) ended the process with the
/// default action: status 143 after a repeated SIGTERM. The mask is set
/// on the creating thread around `pthread_create`, so the new thread
/// starts with it and there is no moment it could take a signal.
/// Synchronous faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS)
/// stay unblocked: a crash on a helper thread still reaches the crash
/// handler.
package enum HelperThread {
    /// Creates and detaches a thread that runs `body(context)`.
    /// - Returns: `pthread_create`'s status (0 when the thread runs).
    package static func startDetached(context: UnsafeMutableRawPointer?,
                                      _ body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?) -> Int32 {
        var blocked = sigset_t()
        sigfillset(&blocked)
        for fault in [SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS] { sigdelset(&blocked, fault) }
        var previous = sigset_t()
        pthread_sigmask(SIG_SETMASK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, body, context)
        if status == 0 { pthread_detach(thread) }
        return status
    }

    /// Names the calling helper thread as `ps -L`, `top -H` and
    /// `/proc/PID/task/TID/comm` show it (the kernel keeps 15 bytes), so a
    /// user can tell MainLoop's threads apart. Called first thing in a
    /// thread's body: from inside it is one `prctl`, where naming another
    /// thread writes a file under `/proc`.
    package static func nameCurrentThread(_ name: String) {
        CLinux_name_current_thread(name)
    }
}

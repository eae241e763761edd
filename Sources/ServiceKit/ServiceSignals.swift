import Glibc

/// The signals a service handles on its loop thread, and how threads it
/// starts elsewhere stay out of their way.
///
/// The kernel hands a process-directed signal to any thread that does not
/// block it. MainLoop's loop thread handles the service's signals
/// (``ServiceRunner``: SIGTERM, SIGINT, SIGHUP, and SIGTSTP/SIGCONT for job
/// control); its own helper threads and libdispatch's block them. A thread
/// you start (SwiftNIO's event-loop group, a thread pool, `Thread`) inherits
/// the mask of the thread that starts it, which on the main thread does not
/// block them: a signal delivered to it while ``ServiceRunner/finish()``
/// has removed the handlers would end the process with the signal's default
/// action. Start such threads inside ``blockingSignals(_:in:)``:
///
/// ```swift
/// import Foundation
/// import MainLoopKit
///
/// let worker = ServiceSignals.blockingSignals(in: { () -> Thread in
///     let thread = Thread { /* work that never handles the service's signals */ }
///     thread.start()
///     return thread
/// })
/// print(worker.isExecuting || worker.isFinished)
/// ```
public enum ServiceSignals {
    /// SIGTERM, SIGINT, SIGHUP, SIGTSTP and SIGCONT: what ``ServiceRunner``
    /// handles on the loop thread.
    public static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGTSTP, SIGCONT]

    /// Runs `body` with `signals` blocked on the calling thread, then
    /// restores its mask: every thread `body` starts inherits the block, so
    /// the signals reach only the threads that handle them.
    public static func blockingSignals<Result>(_ signals: [Int32] = handled, in body: () throws -> Result) rethrows -> Result {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for number in signals { sigaddset(&blocked, number) }
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }
}

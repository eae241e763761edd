import CLibevent
import Glibc

private let signalTrampoline: event_callback_fn = { signal, _, context in
    // Borrowed: a source removed by its own handler stays alive until the janitor runs.
    Unmanaged<SignalSource>.fromOpaque(context!)._withUnsafeGuaranteedRef { source in
        source.core.noteWake()
        guard let monitor = source.core.monitor else { return source.deliver() }
        monitor.measure(.signal, .system) { source.deliver() }
    }
}

/// Delivery of a POSIX signal (SIGINT, SIGTERM, SIGHUP, SIGUSR1, ...) as an
/// ordinary callback on the loop thread, at system priority.
///
/// libevent catches the signal with its own handler and forwards it through
/// a socketpair, so the callback runs in normal (not async-signal) context.
/// Adding a source also unblocks the signal on the loop thread: a process
/// started with the signal blocked (a mask inherited from its parent, as
/// Foundation's `Process` and some supervisors leave it) would otherwise
/// never see it.
/// libevent allows only one event base per process to own signals: add
/// signal sources to one loop only. Loop thread only.
public final class SignalSource: LoopRegistered {
    /// The signal number.
    public let signalNumber: Int32
    /// Whether ``remove()`` was called (or the loop shut down).
    public private(set) var isRemoved = false

    let core: LoopCore
    private let handler: () -> Void
    private var event: OpaquePointer?
    private var limiter = SourceRateLimit()
    /// A delivery came while paused: it runs when the window ends.
    private var arrivedWhilePaused = false

    /// The source's rate limit, if any.
    public var rateLimit: RateLimit? { limiter.limit }
    /// Whether a rate limit pauses the source until its window ends.
    public var isPaused: Bool { limiter.isPaused }

    init(core: LoopCore, signalNumber: Int32, handler: @escaping () -> Void) throws(MainLoopError) {
        self.core = core
        self.signalNumber = signalNumber
        self.handler = handler
        guard let base = core.base else { throw .shutDown }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let created = CLibevent_evsignal_new(base, signalNumber, signalTrampoline, context) else {
            throw systemError("evsignal_new(\(signalNumber))")
        }
        guard event_priority_set(created, core.libeventPriority(.system, outside: true)) == 0, CLibevent_add(created) == 0 else {
            event_free(created)
            throw systemError("event_add for signal \(signalNumber)")
        }
        event = created
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signalNumber)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Limits deliveries to `limit` (nil: no limit, and a paused source
    /// resumes at once). The signal stays caught while paused: signals
    /// that arrive meanwhile are delivered once when the window ends (the
    /// kernel merges a standard signal's repeats anyway).
    /// - Throws: ``MainLoopError/sourceRemoved`` once removed.
    public func setRateLimit(_ limit: RateLimit?) throws(MainLoopError) {
        core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        if limiter.set(limit) { resume() }
    }

    /// Stops handling the signal; libevent restores the previous disposition.
    /// - Throws: ``MainLoopError/sourceRemoved`` when already removed.
    public func remove() throws(MainLoopError) {
        core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        releaseLoopResources()
        core.unregister(self)
    }

    func deliver() {
        guard !isRemoved else { return }
        if limiter.isPaused {
            arrivedWhilePaused = true
            return
        }
        if limiter.isLimited, !limiter.admits(at: core.now) {
            arrivedWhilePaused = true
            limiter.pause(core: core) { [unowned self] in resume() }
            return
        }
        core.workCounter &+= 1
        handler()
    }

    private func resume() {
        limiter.endPause()
        guard arrivedWhilePaused else { return }
        arrivedWhilePaused = false
        deliver()
    }

    func releaseLoopResources() {
        limiter.endPause()
        isRemoved = true
        if let event { event_free(event) }
        event = nil
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension SignalSource: Sendable {}

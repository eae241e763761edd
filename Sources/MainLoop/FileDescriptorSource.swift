import CLibevent

private let fdTrampoline: event_callback_fn = { _, what, context in
    // libevent's EV_READ (0x02), EV_WRITE (0x04) and EV_CLOSED (0x80) are
    // `Readiness`'s bits shifted up by one: a shift and a mask rather than
    // three bit tests (the `fd` probe of scripts/instructions.sh).
    // shim.h fails to compile if libevent's values ever differ.
    let ready = Readiness(rawValue: UInt8(truncatingIfNeeded: UInt16(bitPattern: what) >> 1) & Readiness.all.rawValue)
    // Borrowed, not retained: the registry holds the source, and a source
    // removed by its own handler stays alive until the loop's janitor runs.
    Unmanaged<FileDescriptorSource>.fromOpaque(context!)._withUnsafeGuaranteedRef { source in
        source.core.noteWake()
        guard let monitor = source.core.monitor else { return source.deliver(ready) }
        monitor.measure(source.kind, source.priority) { source.deliver(ready) }
    }
}

/// Readiness notifications for one file descriptor, delivered on the loop
/// thread at the source's priority (level-triggered, like poll).
///
/// The source does not own the descriptor: removing the source never closes
/// it. Created with ``MainRunLoop/addFileDescriptor(_:interest:priority:handler:)``;
/// the interest can change while the loop runs, and an empty interest parks
/// the source without removing it. Loop thread only.
public final class FileDescriptorSource: LoopRegistered {
    /// The watched descriptor.
    public let fileDescriptor: Int32
    /// The priority of its callbacks.
    public let priority: LoopPriority
    /// What the source currently waits for. (Every field is loop-thread
    /// only, so none pays a dynamic exclusivity check: the fd readiness
    /// dispatch row of `compare`, probe `fd`.)
    @exclusivity(unchecked) public private(set) var interest: Readiness
    /// Whether ``remove()`` was called (or the loop shut down).
    @exclusivity(unchecked) public private(set) var isRemoved = false

    /// The loop's shared state (held strongly: no `unowned` load per event).
    let core: LoopCore
    /// What the loop monitor reports its callbacks as (a child process's
    /// pidfd is a child process, not a descriptor to the user).
    var kind: LoopSourceKind = .fileDescriptor
    private let handler: (Readiness) -> Void
    @exclusivity(unchecked) private var event: OpaquePointer?
    /// The rate limit, if one is set, and the pause it imposes. Read on
    /// every dispatch, hence unchecked (the fd dispatch row of `compare`).
    @exclusivity(unchecked) private var limiter = SourceRateLimit()

    /// The source's rate limit, if any.
    public var rateLimit: RateLimit? { limiter.limit }
    /// Whether a rate limit pauses the source until its window ends.
    public var isPaused: Bool { limiter.isPaused }

    init(core: LoopCore, fileDescriptor: Int32, interest: Readiness, priority: LoopPriority,
         handler: @escaping (Readiness) -> Void) throws(MainLoopError) {
        self.core = core
        self.fileDescriptor = fileDescriptor
        self.interest = interest
        self.priority = priority
        self.handler = handler
        try register()
    }

    /// Changes what the source waits for; `[]` parks it.
    /// - Throws: ``MainLoopError/sourceRemoved`` once removed.
    public func update(interest newInterest: Readiness) throws(MainLoopError) {
        core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        guard newInterest != interest else { return }
        unregister()
        interest = newInterest
        try register()
    }

    /// Registers the descriptor with the kernel again, for a number that
    /// may name another file than when it was watched. Closing a file drops
    /// its epoll registration, and a file opened since under the same number
    /// (the kernel hands out the lowest free one) is not watched until this
    /// call; for the file watched all along it changes nothing, and no
    /// readiness is lost (the kernel reports what is ready when a
    /// descriptor is registered). Two system calls. A parked or paused
    /// source is left as is: it registers when it watches again.
    /// - Throws: ``MainLoopError/sourceRemoved`` once removed;
    ///   ``MainLoopError/system(operation:errno:)`` when the kernel refuses
    ///   the descriptor (it is closed): the source then watches nothing
    ///   until another `reregister()` succeeds.
    public func reregister() throws(MainLoopError) {
        core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        guard let event, !limiter.isPaused else { return }
        event_del(event)
        if CLibevent_add(event) != 0 { throw systemError("event_add for fd \(fileDescriptor)") }
    }

    /// Limits dispatches to `limit` (nil: no limit, and a paused source
    /// resumes at once). While paused, the descriptor is not watched; it
    /// stays ready, so its readiness is delivered when the window ends.
    /// - Throws: ``MainLoopError/sourceRemoved`` once removed.
    public func setRateLimit(_ limit: RateLimit?) throws(MainLoopError) {
        core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        if limiter.set(limit) { resume() }
    }

    /// Stops watching the descriptor. The descriptor stays open.
    /// - Throws: ``MainLoopError/sourceRemoved`` when already removed.
    public func remove() throws(MainLoopError) {
        core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        releaseLoopResources()
        core.unregister(self)
    }

    func deliver(_ ready: Readiness) {
        guard !isRemoved else { return }
        if limiter.isLimited, !limiter.admits(at: core.now) {
            // Past the burst: out of libevent until the window ends.
            if let event { event_del(event) }
            limiter.pause(core: core) { [unowned self] in resume() }
            return
        }
        core.workCounter &+= 1
        handler(ready)
    }

    /// The window ended (or the limit was lifted): watch again. If libevent
    /// cannot take the descriptor back now (the kernel is out of memory for
    /// epoll), it tries again one window later rather than losing it.
    private func resume() {
        limiter.endPause()
        guard !isRemoved, let event else { return }
        if CLibevent_add(event) != 0 { limiter.pause(core: core, again: true) { [unowned self] in resume() } }
    }

    private func register() throws(MainLoopError) {
        guard !interest.isEmpty else { return }
        guard let base = core.base else { throw .shutDown }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let created = CLibevent_fd_event_new(
            base, fileDescriptor,
            interest.contains(.read) ? 1 : 0, interest.contains(.write) ? 1 : 0,
            interest.contains(.peerClosed) ? 1 : 0,
            fdTrampoline, context)
        else { throw systemError("event_new for fd \(fileDescriptor)") }
        // A paused source gets its event now and is watched when it resumes.
        guard event_priority_set(created, core.libeventPriority(priority, outside: true)) == 0, limiter.isPaused || CLibevent_add(created) == 0 else {
            event_free(created)
            throw systemError("event_add for fd \(fileDescriptor)")
        }
        event = created
    }

    private func unregister() {
        if let event { event_free(event) }
        event = nil
    }

    func releaseLoopResources() {
        isRemoved = true
        limiter.endPause()
        unregister()
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension FileDescriptorSource: Sendable {}

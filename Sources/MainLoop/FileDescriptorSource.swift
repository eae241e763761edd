import CLibevent

private let fdTrampoline: event_callback_fn = { _, what, context in
    let source = Unmanaged<FileDescriptorSource>.fromOpaque(context!).takeUnretainedValue()
    var ready: Readiness = []
    if CLibevent_is_readable(what) != 0 { ready.insert(.read) }
    if CLibevent_is_writable(what) != 0 { ready.insert(.write) }
    // The handler may remove the source, dropping the loop's reference.
    withExtendedLifetime(source) { source.deliver(ready) }
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
    /// What the source currently waits for.
    public private(set) var interest: Readiness
    /// Whether ``remove()`` was called (or the loop shut down).
    public private(set) var isRemoved = false

    private unowned let loop: MainRunLoop
    private let handler: (Readiness) -> Void
    private var event: OpaquePointer?

    init(loop: MainRunLoop, fileDescriptor: Int32, interest: Readiness, priority: LoopPriority,
         handler: @escaping (Readiness) -> Void) throws(MainLoopError) {
        self.loop = loop
        self.fileDescriptor = fileDescriptor
        self.interest = interest
        self.priority = priority
        self.handler = handler
        try register()
    }

    /// Changes what the source waits for; `[]` parks it.
    /// - Throws: ``MainLoopError/sourceRemoved`` once removed.
    public func update(interest newInterest: Readiness) throws(MainLoopError) {
        loop.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        guard newInterest != interest else { return }
        unregister()
        interest = newInterest
        try register()
    }

    /// Stops watching the descriptor. The descriptor stays open.
    /// - Throws: ``MainLoopError/sourceRemoved`` when already removed.
    public func remove() throws(MainLoopError) {
        loop.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        releaseLoopResources()
        loop.unregister(self)
    }

    func deliver(_ ready: Readiness) {
        guard !isRemoved else { return }
        loop.core.workCounter &+= 1
        handler(ready)
    }

    private func register() throws(MainLoopError) {
        guard !interest.isEmpty else { return }
        guard let base = loop.core.base else { throw .shutDown }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let created = CLibevent_fd_event_new(
            base, fileDescriptor,
            interest.contains(.read) ? 1 : 0, interest.contains(.write) ? 1 : 0,
            fdTrampoline, context)
        else { throw systemError("event_new for fd \(fileDescriptor)") }
        guard event_priority_set(created, Int32(priority.rawValue)) == 0, CLibevent_add(created) == 0 else {
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
        unregister()
    }
}

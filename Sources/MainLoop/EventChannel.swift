import CLibevent
import Glibc


/// The non-generic part of a channel, so one C trampoline can reach every
/// `EventChannel<Value>` through a vtable call instead of a dynamic cast.
public class ChannelBase: LoopRegistered {
    func drainLocal() {}
    func receiveRemote() {}
    func releaseLoopResources() {}
}

private let drainTrampoline: event_callback_fn = { _, _, context in
    Unmanaged<ChannelBase>.fromOpaque(context!).takeUnretainedValue().drainLocal()
}

private let remoteTrampoline: event_callback_fn = { _, _, context in
    Unmanaged<ChannelBase>.fromOpaque(context!).takeUnretainedValue().receiveRemote()
}

/// A typed, allocation-free queue of events that a handler consumes on the
/// loop thread, in post order, one at a time.
///
/// This is the loop's hot path (DESIGN "The hot path"):
/// - a post on the loop thread appends to a ring buffer and, only if no
///   drain is pending yet, activates one libevent event; one callback then
///   drains the batch. No libevent event, closure context or box per post.
/// - a post from another thread appends to a mutex-protected array and
///   writes the channel's eventfd only when no wakeup is pending, so a batch
///   of posts costs one wakeup. The loop swaps the array with a spare one,
///   so steady state allocates nothing on either side.
///
/// A drain runs at most the items that were queued when it started (posts
/// made while draining run in the next round, so fd and timer events are not
/// starved) and stops early when higher-priority work becomes ready.
///
/// Create channels with ``MainRunLoop/makeChannel(of:priority:handler:)``.
public final class EventChannel<Value>: ChannelBase, @unchecked Sendable {
    private struct Inbox {
        var items: [Value] = []
        var wakePending = false
        var closed = false
    }

    /// The priority at which this channel's events are handled.
    public let priority: LoopPriority

    private let core: LoopCore
    /// Runs each event; loop thread only.
    private let handler: (Value) -> Void
    /// Events posted on the loop thread (and remote ones, once received).
    /// Loop thread only.
    private var local = RingBuffer<Value>()
    /// Loop thread only.
    private var drainScheduled = false
    private var drainEvent: OpaquePointer?
    /// Events posted from other threads; protected by its own mutex.
    private let inbox = LockedValue(Inbox())
    /// The array swapped with the inbox's; loop thread only.
    private var spare: [Value] = []
    /// Written by remote posters (once per batch), read by the loop.
    private let wakeFD: Int32
    private var wakeEvent: OpaquePointer?

    init(core: LoopCore, priority: LoopPriority, handler: @escaping (Value) -> Void) throws(MainLoopError) {
        guard let base = core.base else { throw .shutDown }
        self.core = core
        self.priority = priority
        self.handler = handler
        let fd = CLibevent_eventfd_nonblocking()
        guard fd >= 0 else { throw systemError("eventfd") }
        self.wakeFD = fd
        super.init()
        let context = Unmanaged.passUnretained(self as ChannelBase).toOpaque()
        drainEvent = CLibevent_user_event_new(base, drainTrampoline, context)
        wakeEvent = CLibevent_fd_event_new(base, fd, 1, 0, remoteTrampoline, context)
        guard let drainEvent, let wakeEvent,
              event_priority_set(drainEvent, Int32(priority.rawValue)) == 0,
              event_priority_set(wakeEvent, Int32(priority.rawValue)) == 0,
              CLibevent_add(wakeEvent) == 0
        else {
            let error = systemError("creating the channel's libevent events")
            releaseLoopResources()
            throw error
        }
    }

    /// Queues `value` from the loop thread. The value need not be Sendable
    /// because it never leaves the loop thread.
    ///
    /// - Precondition: called on the loop thread.
    /// - Throws: ``MainLoopError/shutDown`` after the loop was shut down.
    @inline(__always)
    public func postInLoop(_ value: Value) throws(MainLoopError) {
        precondition(core.isLoopThread, "EventChannel.postInLoop called off the loop thread")
        guard !core.isShutDown else { throw .shutDown }
        local.append(value)
        if !drainScheduled { scheduleDrain() }
    }

    /// Queues `value` without the Sendable check; the executor uses this for
    /// jobs, which the runtime guarantees are safe to move between threads.
    @inline(__always)
    func postFromAnyThread(_ value: Value) throws(MainLoopError) {
        if core.isLoopThread {
            try postInLoop(value)
            return
        }
        try inbox.withLock { (inbox: inout Inbox) throws(MainLoopError) in
            guard !inbox.closed else { throw .shutDown }
            inbox.items.append(value)
            guard !inbox.wakePending else { return }
            inbox.wakePending = true
            // One eventfd write per batch. It happens under the lock so that
            // shutdown cannot close the fd between the check and the write.
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
    }

    private func scheduleDrain() {
        drainScheduled = true
        core.drainActivated(priority)
        event_active(drainEvent, 0, 0)
    }

    override func drainLocal() {
        core.drainStarted(priority)
        var budget = local.count
        while budget > 0, let value = local.popFirst() {
            budget -= 1
            handler(value)
            core.workCounter &+= 1
            if core.isShutDown { return }
            if core.hasPendingWork(above: priority) { break }
        }
        drainScheduled = false
        if !local.isEmpty { scheduleDrain() }
    }

    override func receiveRemote() {
        var counter: UInt64 = 0
        // Read (reset) the eventfd *before* taking the batch: a post that
        // lands after the swap then writes the fd again and is not lost.
        _ = read(wakeFD, &counter, 8)
        inbox.withLock { inbox in
            swap(&inbox.items, &spare)
            inbox.wakePending = false
        }
        guard !spare.isEmpty else { return }
        for value in spare { local.append(value) }
        spare.removeAll(keepingCapacity: true)
        core.workCounter &+= 1
        if !drainScheduled { scheduleDrain() }
    }

    override func releaseLoopResources() {
        let wasOpen = inbox.withLock { inbox in
            defer { inbox.closed = true; inbox.items.removeAll() }
            return !inbox.closed
        }
        guard wasOpen else { return }
        if let drainEvent { event_free(drainEvent) }
        if let wakeEvent { event_free(wakeEvent) }
        drainEvent = nil
        wakeEvent = nil
        local.removeAll()
        close(wakeFD)
    }
}

extension EventChannel where Value: Sendable {
    /// Queues `value` from any thread. On the loop thread this is the
    /// in-loop path; elsewhere it is the batched cross-thread path.
    ///
    /// - Throws: ``MainLoopError/shutDown`` after the loop was shut down.
    @inline(__always)
    public func post(_ value: Value) throws(MainLoopError) {
        try postFromAnyThread(value)
    }
}

import CLibevent
import CLinux
import Glibc
import Synchronization

/// The non-generic part of a channel, so one C trampoline can reach every
/// `EventChannel<Value>` through a vtable call instead of a dynamic cast.
public class ChannelBase: LoopRegistered {
    /// The priority at which this channel's events are handled.
    public let priority: LoopPriority
    @usableFromInline let core: LoopCore

    @usableFromInline
    init(core: LoopCore, priority: LoopPriority) {
        self.core = core
        self.priority = priority
    }

    func drainLocal() {}
    /// Runs the drain as the loop runs every callback: measured by the
    /// loop's monitor when it has one. The drain event's callback and a
    /// wake-up's batch (``drainReceivedNow()``) both come here.
    final func runDrain() {
        guard let monitor = core.monitor else { return drainLocal() }
        monitor.measure(.postedWork, priority) { drainLocal() }
    }
    /// Moves what other threads posted into the queue; true when the queue
    /// now holds events and no drain is scheduled (the caller runs one).
    func receiveRemote() -> Bool { false }
    /// Runs the drain now, as the drain event's callback would (the
    /// events received by a wake-up: see `remoteTrampoline`).
    func drainReceivedNow() {}
    /// Events queued and not handled yet (loop thread only).
    var queuedCount: Int { 0 }
    func releaseLoopResources() {}
}

// Borrowed, not retained: the registry holds the channel, and a channel
// closed by its own handler stays alive until the loop's janitor runs.
private let drainTrampoline: event_callback_fn = { _, _, context in
    Unmanaged<ChannelBase>.fromOpaque(context!)._withUnsafeGuaranteedRef { channel in
        channel.core.noteWake()
        channel.runDrain()
    }
}

// A wake-up from another thread runs the batch it received in the same
// callback, rather than activating the drain event for a later turn of
// libevent's queue: that activation (the base lock, the queue insert, one
// more dispatch) was about a fifth of a cross-thread wake's instructions.
// Both events have the channel's priority, so priorities hold as before;
// only events already queued behind the wake-up at that same priority now
// run after the batch instead of before it.
private let remoteTrampoline: event_callback_fn = { _, _, context in
    Unmanaged<ChannelBase>.fromOpaque(context!)._withUnsafeGuaranteedRef { channel in
        channel.core.noteWake()
        var received = false
        if let monitor = channel.core.monitor {
            monitor.measure(.crossThreadWakeup, channel.priority) { received = channel.receiveRemote() }
        } else {
            received = channel.receiveRemote()
        }
        if received { channel.drainReceivedNow() }
    }
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
/// The post path and the drain loops are `@inlinable`: a channel is created
/// by ``MainRunLoop/makeChannel(of:priority:handler:)`` in the caller's
/// module, which passes drain functions specialized for `Value`, so no
/// generic-metadata lookups happen per event.
public final class EventChannel<Value>: ChannelBase, @unchecked Sendable {
    @usableFromInline
    struct Inbox {
        /// Posted from other threads, not received yet. A ring the loop
        /// swaps with its `spare` and moves from bitwise (``RingBuffer/moveAll(from:)``).
        @usableFromInline var items = RingBuffer<Value>(initialCapacity: 1)
        @usableFromInline var wakePending = false
        @usableFromInline var closed = false
        @usableFromInline init() {}
    }

    /// Runs each event; loop thread only.
    @usableFromInline let handler: (Value) -> Void
    /// Events posted on the loop thread (and remote ones, once received).
    /// Loop thread only.
    @usableFromInline let ring = RingBuffer<Value>()
    /// Loop thread only (hence no dynamic exclusivity check on it and the
    /// fields below, read for every post: the typed post→run row of `compare`).
    @exclusivity(unchecked) @usableFromInline var drainScheduled = false
    /// Set by ``close()``; loop thread only.
    @exclusivity(unchecked) @usableFromInline var isClosed = false
    /// Events posted from other threads; protected by its own mutex.
    @usableFromInline let inbox = LockedValue(Inbox())
    /// Set (under the inbox lock) when a remote post leaves events that the
    /// loop has not received yet; read without the lock by the loop thread
    /// (``hasPendingEvents``), so checking costs one atomic load.
    @usableFromInline let remotePending = Atomic<Bool>(false)
    /// The batch swapped with the inbox's; loop thread only.
    @exclusivity(unchecked) @usableFromInline var spare = RingBuffer<Value>(initialCapacity: 1)
    /// Written by remote posters (once per batch), read by the loop.
    @usableFromInline let wakeFD: Int32
    private var drainEvent: OpaquePointer?
    private var wakeEvent: OpaquePointer?
    /// The specialized drain and receive loops (see the type's doc).
    private let drainer: (EventChannel<Value>) -> Void
    private let receiver: (EventChannel<Value>) -> Bool

    @usableFromInline
    init(core: LoopCore, priority: LoopPriority, handler: @escaping (Value) -> Void,
         drainer: @escaping (EventChannel<Value>) -> Void,
         receiver: @escaping (EventChannel<Value>) -> Bool) throws(MainLoopError) {
        guard let base = core.base else { throw .shutDown }
        self.handler = handler
        self.drainer = drainer
        self.receiver = receiver
        let fd = CLinux_eventfd_nonblocking()
        guard fd >= 0 else { throw systemError("eventfd") }
        self.wakeFD = fd
        super.init(core: core, priority: priority)
        let context = Unmanaged.passUnretained(self as ChannelBase).toOpaque()
        drainEvent = CLibevent_user_event_new(base, drainTrampoline, context)
        // Edge-triggered, so the loop need not read the eventfd to stop it
        // firing: a wake costs the poster's write and the loop's epoll_wait,
        // not a third system call (see `receive`).
        wakeEvent = CLibevent_edge_read_event_new(base, fd, remoteTrampoline, context)
        guard let drainEvent, let wakeEvent,
              event_priority_set(drainEvent, Int32(priority.rawValue)) == 0,
              event_priority_set(wakeEvent, core.libeventPriority(priority, outside: true)) == 0,
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
    /// - Throws: ``MainLoopError/shutDown`` after the loop was shut down,
    ///   ``MainLoopError/sourceRemoved`` after ``close()``.
    @inlinable
    public func postInLoop(_ value: Value) throws(MainLoopError) {
        precondition(core.isLoopThread, "EventChannel.postInLoop called off the loop thread")
        try enqueueOnLoopThread(value)
    }

    /// The in-loop post itself; callers have already checked the thread.
    @inlinable
    func enqueueOnLoopThread(_ value: Value) throws(MainLoopError) {
        guard !core.isShutDown else { throw .shutDown }
        guard !isClosed else { throw .sourceRemoved }
        ring.append(value)
        if !drainScheduled { scheduleDrain() }
    }

    /// Queues `value` without the Sendable check; the executor uses this for
    /// jobs, which the runtime guarantees are safe to move between threads.
    @inlinable
    func postFromAnyThread(_ value: Value) throws(MainLoopError) {
        if core.isLoopThread {
            try enqueueOnLoopThread(value)
            return
        }
        let mustWake = try inbox.withLock { (inbox: inout Inbox) throws(MainLoopError) -> Bool in
            guard !inbox.closed else { throw .shutDown }
            inbox.items.append(value)
            remotePending.store(true, ordering: .releasing)
            guard !inbox.wakePending else { return false }
            inbox.wakePending = true
            return true
        }
        // One eventfd write per batch, after the lock is released: a loop
        // thread woken on another CPU then does not find the lock still
        // held. The fd stays open until the channel is freed (`deinit`, not
        // `close()`), and the caller holds the channel while it posts, so
        // this write cannot reach a descriptor reused for something else.
        // A write that comes after the loop already took this batch only
        // wakes it once for nothing (the fd is edge-triggered: see `receive`).
        guard mustWake else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    @usableFromInline
    func scheduleDrain() {
        drainScheduled = true
        core.drainActivated(priority)
        event_active(drainEvent, 0, 0)
    }

    override func drainLocal() { drainer(self) }
    override func receiveRemote() -> Bool { receiver(self) }

    override func drainReceivedNow() {
        // What `scheduleDrain()` records, without the libevent activation:
        // the drain balances both and clears `drainScheduled` when it ends.
        drainScheduled = true
        core.drainActivated(priority)
        runDrain()
    }
    override var queuedCount: Int { ring.count + inbox.withLock { $0.items.count } }

    /// The drain loop, specialized per `Value` by the caller of `makeChannel`.
    @inlinable
    static func drain(_ channel: EventChannel<Value>) {
        let core = channel.core, ring = channel.ring, handler = channel.handler, priority = channel.priority
        core.drainStarted(priority)
        var budget = ring.count
        while budget > 0, let value = ring.popFirst() {
            budget &-= 1
            handler(value)
            core.workCounter &+= 1
            if core.isShutDown { return }
            if core.hasPendingWork(above: priority) { break }
        }
        channel.drainScheduled = false
        if !ring.isEmpty { channel.scheduleDrain() }
    }

    /// Moves a batch of remote posts into the ring, specialized per `Value`.
    /// Returns true when the ring received events and no drain is
    /// scheduled: the caller runs or schedules one.
    @inlinable
    static func receive(_ channel: EventChannel<Value>) -> Bool {
        // The eventfd is not read: its event is edge-triggered, and every
        // write epoll has not reported yet is reported on the next wait. A
        // post that lands after the swap below writes the fd (the swap
        // clears `wakePending`) and so wakes the loop again; one whose
        // write comes after its batch was taken wakes it once for nothing.
        channel.inbox.withLock { inbox in
            swap(&inbox.items, &channel.spare)
            inbox.wakePending = false
            channel.remotePending.store(false, ordering: .relaxed)
        }
        let batch = channel.spare
        guard !batch.isEmpty else { return false }
        channel.ring.moveAll(from: batch)
        channel.core.workCounter &+= 1
        return !channel.drainScheduled
    }

    /// Whether events wait to be handled: queued on the loop thread, or
    /// posted from another thread and not received yet. Loop thread only.
    @inlinable
    public var hasPendingEvents: Bool {
        !ring.isEmpty || remotePending.load(ordering: .acquiring)
    }

    /// Takes in the events other threads posted that have not been received
    /// yet, behind those queued, without handling them: an event queued on
    /// the loop thread after this goes behind every event that arrived
    /// before it, from any thread.
    /// - Precondition: called on the loop thread.
    public func receiveArrived() {
        precondition(core.isLoopThread, "EventChannel.receiveArrived called off the loop thread")
        if remotePending.load(ordering: .acquiring), receiveRemote() { scheduleDrain() }
    }

    /// Handles every waiting event now, in post order, on the calling (loop)
    /// thread: first those posted from other threads are received, then the
    /// queue is run until it is empty, including events the handler posts
    /// while it runs. A drain already scheduled with libevent then finds
    /// nothing to do. Used where an input must take effect only after every
    /// input that arrived before it (the application's ordered inbox).
    /// - Precondition: called on the loop thread, not from this channel's handler.
    public func drainNow() {
        precondition(core.isLoopThread, "EventChannel.drainNow called off the loop thread")
        receiveArrived()
        while !isClosed, !core.isShutDown, let value = ring.popFirst() {
            core.workCounter &+= 1
            handler(value)
        }
    }

    /// Stops the channel: queued events are dropped, nothing more is
    /// delivered, and later posts throw (``MainLoopError/sourceRemoved`` on
    /// the loop thread, ``MainLoopError/shutDown`` from others). Owners that
    /// capture themselves `unowned` in the handler close it when released.
    /// - Precondition: called on the loop thread.
    /// - Throws: ``MainLoopError/sourceRemoved`` when already closed.
    public func close() throws(MainLoopError) {
        precondition(core.isLoopThread, "EventChannel.close called off the loop thread")
        guard !isClosed else { throw .sourceRemoved }
        isClosed = true
        releaseLoopResources()
        core.unregister(self)
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
        ring.removeAll()
    }

    /// The eventfd is closed here, not in ``close()`` or at shutdown: a
    /// poster on another thread whose post was accepted just before may
    /// still write it after the lock (see `postFromAnyThread`), and it
    /// holds the channel while it does.
    deinit { Glibc.close(wakeFD) }
}

extension EventChannel where Value: Sendable {
    /// Queues `value` from any thread. On the loop thread this is the
    /// in-loop path; elsewhere it is the batched cross-thread path.
    ///
    /// - Throws: ``MainLoopError/shutDown`` after the loop was shut down.
    @inlinable
    public func post(_ value: Value) throws(MainLoopError) {
        try postFromAnyThread(value)
    }
}

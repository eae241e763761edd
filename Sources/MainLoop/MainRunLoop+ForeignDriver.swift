import CLibevent
import Glibc

/// Driving a loop from an event loop you do not give up: GLib's, sd-event's,
/// or your own `poll`. The loop shows its one descriptor and its next
/// deadline, and runs what is ready without waiting, as `sd_event_get_fd`
/// and `uv_backend_fd`/`uv_backend_timeout` do for sd-event and libuv.
///
/// The protocol, on the loop's thread:
/// 1. Watch ``backendFileDescriptor()`` for readability in your loop.
/// 2. Before your loop waits, read ``nextDeadline``: `nil` means nothing is
///    due before the descriptor becomes readable; an instant at or before
///    ``now`` means work is ready now (call ``dispatchReady()`` without
///    waiting); otherwise wake no later than it. The loop's timers arm a
///    timerfd behind the descriptor, so the descriptor alone also wakes you
///    for them: the deadline is for loops that would rather know.
/// 3. When the descriptor is readable or the deadline has come, call
///    ``dispatchReady()``.
///
/// `run()`, `runOnce()` and a foreign driver are alternatives: while one runs
/// the loop, the others are refused (``MainLoopError/reentrantDispatch``).
/// Exit handlers run when `run()` stops, so a loop driven from outside runs
/// them only if you end with `run()` after ``stop()``.
extension MainRunLoop {
    /// A descriptor that is readable whenever the loop has descriptor work:
    /// libevent's epoll instance, which watches every descriptor of the loop
    /// (its sources, its cross-thread wake-ups and the timerfd of its
    /// timers). Work made ready on the loop thread itself (a post from a
    /// callback) does not make it readable: ``nextDeadline`` reports it.
    ///
    /// libevent does not hand out its epoll descriptor, so the loop finds it
    /// in `/proc/self/fdinfo`, where Linux lists the descriptors each epoll
    /// instance watches: the one watching both the loop's own eventfd and its
    /// timerfd. The descriptor belongs to the loop: never close it or read
    /// from it; it is valid until ``shutdown()``.
    /// A manual-clock loop's timers never arm the timerfd: step such a loop
    /// with ``advance(by:)`` rather than driving it.
    /// - Throws: ``MainLoopError/shutDown``;
    ///   ``MainLoopError/system(operation:errno:)`` when `/proc` cannot be
    ///   read or no such epoll instance is found.
    public func backendFileDescriptor() throws(MainLoopError) -> Int32 {
        guard !isShutDown, core.base != nil else { throw .shutDown }
        if let found = backendDescriptor.withLock({ $0 }) { return found }
        let found = try EpollInstances.find(watching: [controlFD, timers.timerFD])
        backendDescriptor.withLock { $0 = found }
        return found
    }

    /// When the loop next has work without its descriptor becoming readable:
    /// ``now`` when work is ready already (posted from the loop thread,
    /// activated, an idle handler waiting), the earliest timer's deadline
    /// otherwise, `nil` when there is neither. Loop thread only.
    public var nextDeadline: LoopInstant? {
        preconditionInLoop()
        if core.hasActiveEvents || core.passHooks?.hasIdleWork == true { return now }
        return timers.nextDeadline
    }

    /// Runs what is ready now, once, without waiting: the due timers, the
    /// ready descriptors, the work posted before the call, each with its
    /// observers' points; then, if that left nothing ready, the idle
    /// handlers and the before-waiting observers (the driver is about to
    /// wait), and arms the timerfd for the earliest timer. Work that work
    /// posts (and descriptors that became ready at the lowest priority
    /// during the pass) wait for the next call, ``nextDeadline`` then being
    /// ``now``: app work that always posts more cannot hold the loop you
    /// run it from. (Work at a higher priority that keeps posting itself
    /// holds the pass, as under `run()` it holds all lower-priority work.)
    /// - Throws: ``MainLoopError/shutDown``, ``MainLoopError/reentrantDispatch``
    ///   from a callback or while `run()` runs,
    ///   ``MainLoopError/system(operation:errno:)`` when libevent fails.
    public func dispatchReady() throws(MainLoopError) {
        guard try beginForeignPass(), let base = core.base else { return }
        defer { endForeignPass() }
        core.noteWakeBetweenCallbacks()
        core.passHooks?.notify(.beforeTimers)
        timers.activateIfDue()
        core.passHooks?.notify(.beforeSources)
        // libevent's non-blocking loop goes on while callbacks are active,
        // and work posted by work keeps them so: an event at the lowest
        // priority, activated first, ends the pass once what was ready
        // before it has run.
        let passEnd = try foreignPassEndEvent(base)
        event_active(passEnd, 0, 0)
        let result = CLibevent_loop_nonblock(base)
        if let foreignPassEnd { event_del(foreignPassEnd) }
        if result < 0 { throw systemError("event_base_loop") }
        core.noteWakeBetweenCallbacks()
        if let hooks = core.passHooks, !core.isShutDown { announceWait(hooks) }
        if !core.isShutDown { timers.rearm() }
    }
}

extension MainRunLoop {
    /// The event that ends a foreign driver's pass, at the lowest priority.
    fileprivate func foreignPassEndEvent(_ base: OpaquePointer) throws(MainLoopError) -> OpaquePointer {
        if let foreignPassEnd { return foreignPassEnd }
        guard let made = CLibevent_user_event_new(base, foreignPassEndTrampoline, UnsafeMutableRawPointer(base)) else {
            throw systemError("creating the foreign driver's event")
        }
        // The lowest priority: on a per-callback loop, the outside events'
        // own. Activated first, it goes before the outside events this
        // pass's poll finds, which run in the next pass (after it there);
        // those found before it run in this pass, one a round.
        guard event_priority_set(made, core.outsidePriority ?? Int32(LoopPriority.app.rawValue)) == 0 else {
            event_free(made)
            throw systemError("setting the foreign driver's event's priority")
        }
        foreignPassEnd = made
        return made
    }
}

private let foreignPassEndTrampoline: event_callback_fn = { _, _, base in
    event_base_loopbreak(OpaquePointer(base))
}

/// Finding an epoll instance of this process by what it watches.
enum EpollInstances {
    /// The descriptor of the epoll instance whose watched descriptors
    /// include all of `watched`. Entries that vanish while the directory is
    /// read (another thread closed them) are passed over: they cannot be
    /// the loop's, whose descriptors stay open.
    static func find(watching watched: [Int32]) throws(MainLoopError) -> Int32 {
        guard let directory = opendir("/proc/self/fd") else { throw systemError("opendir /proc/self/fd") }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            // Read where it lies: `entry.pointee.d_name` would copy 256
            // bytes, past the end of a short record (and of glibc's buffer).
            let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let name = String(cString: UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self))
            guard let descriptor = Int32(name), link(of: name) == "anon_inode:[eventpoll]" else { continue }
            let targets = watchedDescriptors(of: name)
            if watched.allSatisfy(targets.contains) { return descriptor }
        }
        errno = ENOENT
        throw systemError("finding the loop's epoll instance in /proc/self/fdinfo")
    }

    /// What `/proc/self/fd/NAME` links to, or nil if it is gone.
    private static func link(of name: String) -> String? {
        var target = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The descriptors an epoll instance watches, from its fdinfo lines
    /// (`tfd:       5 events: ...`); empty if it is gone.
    private static func watchedDescriptors(of name: String) -> Set<Int32> {
        let file = open("/proc/self/fdinfo/\(name)", O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return [] }
        defer { close(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(file, &chunk, chunk.count)
            guard count > 0 else { break }
            bytes += chunk.prefix(count)
        }
        var found: Set<Int32> = []
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: "tfd:".utf8) {
            let fields = line.dropFirst(4).split(separator: UInt8(ascii: " "))
            if let first = fields.first, let value = Int32(String(decoding: first, as: UTF8.self)) { found.insert(value) }
        }
        return found
    }
}

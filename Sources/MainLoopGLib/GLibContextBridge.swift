@_exported import CGLib
import Glibc
import MainLoop

/// A GLib main context run by a ``/MainLoop/MainRunLoop``: the loop's thread
/// is the one thread that waits, for the loop's own work and for GLib's.
///
/// Made by ``MainLoop/MainRunLoop/runGLibContext(_:priority:)``. The bridge
/// acquires the context as its owner and follows GLib's custom-iteration
/// protocol (GLib's "Customizing the main loop iteration"): before the loop
/// waits it calls `g_main_context_prepare` and `g_main_context_query`,
/// watches the descriptors GLib asks for with the loop's own descriptor
/// sources and schedules a loop timer for GLib's timeout; when one of them
/// fires (or, at the latest, before the loop next waits) it calls
/// `g_main_context_check` and `g_main_context_dispatch`, then prepares again.
/// So GLib's callbacks run on the loop's thread, between the loop's own
/// callbacks, and with nothing due in either the thread sleeps.
///
/// Priorities: GLib's own order GLib's sources among themselves, as in GLib
/// (an iteration dispatches the most urgent ready priority, so idle
/// sources wait for the rest). Against the loop's work the whole context
/// runs at the ``/MainLoop/LoopPriority`` given when it was attached:
/// `.app` by default, beside posted closures and the app's executor.
///
/// Loop thread only: every method must be called on the loop's thread, and
/// a bridge dropped without ``release()`` releases the context in its
/// deinit, which then must run on the loop's thread too (GLib lets only the
/// owner release a context).
public final class GLibContextBridge {
    /// The context run (`GMainContext *`), referenced until ``release()``.
    public let context: OpaquePointer
    /// The loop priority GLib's work runs at.
    public let priority: LoopPriority
    /// Whether ``release()`` has run (or the loop shut down under it).
    public private(set) var isReleased = false
    /// How many descriptors GLib has the loop watch now (its wake-up
    /// eventfd, and those of its sources): diagnostics.
    public var watchedDescriptorCount: Int { watches.count }

    private let loop: MainRunLoop
    /// The context is acquired and referenced (until ``release()``).
    private var holdsContext = false
    private var observer: LoopObserver?
    private var timeout: LoopTimer?
    /// Where an iteration is posted when GLib has work ready now.
    private var iterations: EventChannel<Void>?
    /// The descriptors GLib asked for, by descriptor, with the interest each
    /// is watched for and its source.
    private var watches: [Int32: (interest: Readiness, source: FileDescriptorSource)] = [:]
    /// `g_main_context_query`'s descriptors (grown as GLib asks for more).
    private var pollDescriptors = [GPollFD](repeating: GPollFD(), count: 8)
    private var queriedCount = 0
    /// The descriptors and conditions the loop's sources were last set up for.
    private var watchedQuery: [GPollFD] = []
    /// The priority `g_main_context_prepare` reported, passed to query and check.
    private var maxPriority: Int32 = 0
    /// Between prepare/query and check.
    private var isPrepared = false
    /// A watched descriptor fired since the query: its readiness is read
    /// with a `poll` of timeout zero before the check.
    private var descriptorFired = false
    /// A watched descriptor fired since the watches were last brought in
    /// line: the next query's unchanged watches are registered again (see
    /// ``watchQueriedDescriptors()``).
    private var watchesMayBeStale = false
    /// An iteration is posted to the loop (GLib had work ready at prepare).
    private var iterationPosted = false
    /// A descriptor GLib asked for could not be watched (epoll refuses
    /// regular files): it is polled on every pass instead, as GLib's own
    /// `poll` would find it ready at once.
    private var pollsEveryPass = false
    /// Inside ``iterate()``: a nested call (a GLib callback that runs the
    /// loop's observers) returns at once.
    private var iterating = false

    init(loop: MainRunLoop, context: OpaquePointer, priority: LoopPriority) throws(GLibBridgeError) {
        self.loop = loop
        self.context = context
        self.priority = priority
        // A throwing init of a class runs deinit once every property is
        // set: `holdsContext` keeps a refused bridge's deinit from
        // releasing a context it never acquired.
        guard g_main_context_acquire(context) != 0 else { throw .contextOwnedElsewhere }
        g_main_context_ref(context)
        holdsContext = true
        do throws(MainLoopError) {
            // Loop timers fire at system priority; GLib's work runs at the
            // bridge's, so its timeout posts the iteration.
            timeout = loop.makeTimer { [unowned self] in postIteration() }
            // A channel, not a closure per post: a post then allocates
            // nothing (the `GLib timeout` rows of `compare`).
            iterations = try loop.makeChannel(of: Void.self, priority: priority) { [unowned self] in
                iterationPosted = false
                iterate()
            }
            observer = try loop.addObserver(activities: [.beforeWaiting]) { [unowned self] _ in iterate() }
        } catch {
            releaseContext()
            throw .loop(error)
        }
        iterate()
    }

    deinit {
        if !isReleased { releaseContext() }
    }

    /// Stops running the context: removes the bridge's sources from the
    /// loop and releases the context's ownership. GLib's sources stay
    /// attached to the context, for whoever runs it next.
    public func release() {
        loop.preconditionInLoop()
        guard !isReleased else { return }
        releaseContext()
    }

    private func releaseContext() {
        isReleased = true
        // The loop may already be shut down: its sources then read as removed.
        try? observer?.remove()
        _ = timeout?.cancel()
        try? iterations?.close()
        iterations = nil
        for watch in watches.values { try? watch.source.remove() }
        watches.removeAll()
        watchedQuery.removeAll()
        observer = nil
        timeout = nil
        if holdsContext {
            holdsContext = false
            g_main_context_release(context)
            g_main_context_unref(context)
        }
    }

    /// One GLib iteration: the check and dispatch of the last query (if
    /// any), then prepare and query for the next wait.
    private func iterate() {
        guard !isReleased, !iterating else { return }
        iterating = true
        defer { iterating = false }
        if isPrepared { checkAndDispatch() }
        guard !isReleased else { return }
        prepareAndQuery()
    }

    private func checkAndDispatch() {
        isPrepared = false
        let count = queriedCount
        pollDescriptors.withUnsafeMutableBufferPointer { descriptors in
            if descriptorFired, count > 0 {
                descriptors.baseAddress!.withMemoryRebound(to: pollfd.self, capacity: count) { _ = poll($0, nfds_t(count), 0) }
            } else {
                for index in 0..<count { descriptors[index].revents = 0 }
            }
        }
        descriptorFired = false
        if g_main_context_check(context, maxPriority, &pollDescriptors, Int32(count)) != 0 {
            g_main_context_dispatch(context)
        }
    }

    private func prepareAndQuery() {
        var readyPriority: Int32 = 0
        let ready = g_main_context_prepare(context, &readyPriority) != 0
        maxPriority = readyPriority
        var milliseconds: Int32 = -1
        while true {
            let needed = Int(g_main_context_query(context, maxPriority, &milliseconds, &pollDescriptors,
                                                  Int32(pollDescriptors.count)))
            if needed <= pollDescriptors.count {
                queriedCount = needed
                break
            }
            pollDescriptors = [GPollFD](repeating: GPollFD(), count: needed)
        }
        isPrepared = true
        watchQueriedDescriptors()
        if ready || milliseconds == 0 || pollsEveryPass {
            _ = timeout?.cancel()
            postIteration()
        } else if milliseconds > 0 {
            timeout?.schedule(after: .milliseconds(milliseconds))
        } else {
            _ = timeout?.cancel()
        }
    }

    /// Work is ready in GLib now: an iteration runs as the loop's work at
    /// the bridge's priority, so the loop does not wait meanwhile.
    private func postIteration() {
        guard !iterationPosted, let iterations else { return }
        iterationPosted = true
        do {
            try iterations.postInLoop(())
        } catch {
            // Only a loop that is shut down (or a closed channel) refuses
            // work: nothing runs GLib now.
            iterationPosted = false
            releaseContext()
        }
    }

    /// Brings the loop's descriptor sources in line with the last query.
    /// GLib's descriptors rarely change between iterations: when the query
    /// asked for what the last one did, nothing is rebuilt (the `GLib
    /// timeout` rows of `compare`).
    ///
    /// But a query names descriptors by number only, and a number can come
    /// back as another file (a callback removes its watch, closes its
    /// socket and accepts a new one, which gets the number just closed):
    /// the kernel dropped the loop's registration with the old file, so the
    /// new one would never wake the loop. GLib adds and removes a watch
    /// only through its poll records, and every such change signals its
    /// wake-up descriptor, which the loop watches. So after a watched
    /// descriptor fired, every watch kept is registered again
    /// (``FileDescriptorSource/reregister()``); an iteration that no
    /// descriptor started follows no change the wake-up has not reported.
    private func watchQueriedDescriptors() {
        let reregistering = watchesMayBeStale
        watchesMayBeStale = false
        if queriedCount == watchedQuery.count, !pollsEveryPass,
           zip(pollDescriptors, watchedQuery).allSatisfy({ $0.fd == $1.fd && $0.events == $1.events }) {
            if reregistering {
                for descriptor in watches.keys { reregister(descriptor) }
            }
            return
        }
        watchedQuery = Array(pollDescriptors.prefix(queriedCount))
        pollsEveryPass = false
        var wanted: [Int32: Readiness] = [:]
        for index in 0..<queriedCount {
            let descriptor = pollDescriptors[index]
            wanted[descriptor.fd, default: []].formUnion(Self.interest(of: descriptor.events))
        }
        for (descriptor, watch) in watches where wanted[descriptor] == nil {
            try? watch.source.remove()
            watches[descriptor] = nil
        }
        for (descriptor, interest) in wanted {
            if let watch = watches[descriptor] {
                if watch.interest != interest {
                    do {
                        try watch.source.update(interest: interest)
                        watches[descriptor]?.interest = interest
                    } catch {
                        unwatch(descriptor)
                    }
                } else if reregistering {
                    reregister(descriptor)
                }
                continue
            }
            do {
                let source = try loop.addFileDescriptor(descriptor, interest: interest, priority: priority, owner: self) {
                    bridge, _ in
                    bridge.descriptorFired = true
                    bridge.watchesMayBeStale = true
                    bridge.iterate()
                }
                watches[descriptor] = (interest, source)
            } catch {
                pollEveryPassInstead()
            }
        }
    }

    /// Registers a kept watch again; one the kernel refuses (its number is
    /// closed now) is dropped, and polled instead.
    private func reregister(_ descriptor: Int32) {
        guard let watch = watches[descriptor] else { return }
        do {
            try watch.source.reregister()
        } catch {
            unwatch(descriptor)
            pollEveryPassInstead()
        }
    }

    /// For a descriptor the loop cannot watch (epoll refuses a regular
    /// file, and one already closed): GLib's check sees it through the
    /// `poll` before every check instead, where GLib's own loop would find
    /// it ready at once.
    private func pollEveryPassInstead() {
        descriptorFired = true
        pollsEveryPass = true
    }

    private func unwatch(_ descriptor: Int32) {
        if let watch = watches.removeValue(forKey: descriptor) { try? watch.source.remove() }
    }

    /// The loop readiness that covers a GLib condition. Hang-ups and errors
    /// come with readability (epoll reports them to any watcher).
    private static func interest(of events: UInt16) -> Readiness {
        var interest: Readiness = []
        let readable = UInt16(G_IO_IN.rawValue | G_IO_PRI.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue)
        if events & readable != 0 { interest.insert(.read) }
        if events & UInt16(G_IO_OUT.rawValue) != 0 { interest.insert(.write) }
        return interest.isEmpty ? .read : interest
    }
}

/// Why a GLib context cannot be run by the loop.
public enum GLibBridgeError: Error, Equatable, CustomStringConvertible {
    /// Another thread owns the context (it runs a `GMainLoop` on it, or
    /// acquired it): a context has one owner at a time.
    case contextOwnedElsewhere
    /// The loop refused (it is shut down, or the call was not on its thread).
    case loop(MainLoopError)

    public var description: String {
        switch self {
        case .contextOwnedElsewhere: "the GLib main context is owned by another thread"
        case .loop(let error): "the loop refused: \(error)"
        }
    }
}

extension MainRunLoop {
    /// Runs a GLib main context on this loop: from now on the loop's thread
    /// waits for GLib's sources too, and dispatches them (see
    /// ``GLibContextBridge``). Call on the loop's thread, before or while
    /// the loop runs; keep the bridge, and ``GLibContextBridge/release()``
    /// it to stop.
    /// - Parameters:
    ///   - context: a `GMainContext *`; nil for GLib's default context
    ///     (the one `g_idle_add`, `g_timeout_add` and GDBus use when none is
    ///     pushed as the thread's default).
    ///   - priority: the loop priority GLib's work runs at.
    /// - Throws: ``GLibBridgeError/contextOwnedElsewhere`` when another
    ///   thread owns the context; ``GLibBridgeError/loop(_:)`` when the loop
    ///   is shut down.
    public func runGLibContext(_ context: OpaquePointer? = nil,
                               priority: LoopPriority = .app) throws(GLibBridgeError) -> GLibContextBridge {
        preconditionInLoop()
        guard !isShutDown else { throw .loop(.shutDown) }
        return try GLibContextBridge(loop: self, context: context ?? g_main_context_default(), priority: priority)
    }
}

import Dispatch
import Synchronization

/// The kind of source a loop callback came from, for hang reports and
/// metrics.
public enum LoopSourceKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// A file descriptor's readiness (sockets, pipes, inotify, ...).
    case fileDescriptor
    /// A timer (``LoopTimer``, `scheduleTimer`, a `loop.clock` sleep).
    case timer
    /// A POSIX signal.
    case signal
    /// Work and events posted to a channel (`execute`, `post`, jobs).
    case postedWork
    /// Posts from other threads being received into a channel.
    case crossThreadWakeup
    /// A child process ended (``ChildProcessSource``).
    case childProcess
    /// An idle handler (``IdleSource``).
    case idle
    /// A loop observer (``LoopObserver``).
    case observer
    /// An exit handler (``ExitHandler``).
    case exitHandler

    /// The name used in logs and metric labels.
    public var description: String {
        switch self {
        case .fileDescriptor: "fileDescriptor"
        case .timer: "timer"
        case .signal: "signal"
        case .postedWork: "postedWork"
        case .crossThreadWakeup: "crossThreadWakeup"
        case .childProcess: "childProcess"
        case .idle: "idle"
        case .observer: "observer"
        case .exitHandler: "exitHandler"
        }
    }
}

/// One callback the loop ran, as reported to a ``LoopMonitor``'s
/// `onDispatch` handler.
public struct LoopDispatch: Sendable {
    /// Where it came from.
    public var kind: LoopSourceKind
    /// The priority it ran at.
    public var priority: LoopPriority
    /// How long it ran.
    public var duration: Duration
    /// For a timer: how long after its deadline it started; else zero.
    public var lateness: Duration
}

/// A callback that ran (or is running) longer than the hang threshold.
public struct LoopHang: Sendable, CustomStringConvertible {
    /// Where the callback came from.
    public var kind: LoopSourceKind
    /// How long it had run when reported.
    public var elapsed: Duration
    /// False while the callback is still running (reported from the
    /// detector's thread); true once it returned (reported on the loop thread).
    public var finished: Bool

    /// "a timer callback has been running for 2.5 s" and the like.
    public var description: String {
        let rounded = (elapsed.secondsDouble * 1000).rounded() / 1000
        return finished ? "a \(kind) callback ran for \(rounded) s"
                        : "a \(kind) callback has been running for \(rounded) s (the loop is blocked)"
    }
}

/// Watches every callback a loop runs: counts them per priority, measures
/// each one (for metrics), and reports callbacks that run longer than a
/// threshold, both while they still run (from a detector thread, since the
/// loop thread is busy) and when they return.
///
/// Created with ``MainRunLoop/startMonitoring(hangThreshold:onHang:onDispatch:)``.
/// Off by default: an unmonitored loop pays one nil check per callback.
/// Monitoring reads the monotonic clock twice per callback (about 70 ns on
/// the benchmark machine).
public final class LoopMonitor: @unchecked Sendable {
    /// Callbacks run so far, by priority (index = `LoopPriority.rawValue`).
    /// Read from any thread.
    private let systemCount = Atomic<UInt64>(0)
    private let inputCount = Atomic<UInt64>(0)
    private let appCount = Atomic<UInt64>(0)
    /// Callbacks that ran longer than the threshold. Read from any thread.
    private let hangCount = Atomic<UInt64>(0)
    /// When the running callback started (monotonic nanoseconds + 1), 0 when
    /// the loop is not in a callback; written by the loop thread, read by
    /// the detector.
    private let runningSince = Atomic<Int64>(0)
    private let runningKind = Atomic<UInt8>(0)
    /// Bumped at each callback start, so the detector reports a callback once.
    private let callbackSequence = Atomic<UInt64>(0)
    private let reportedSequence = Atomic<UInt64>(UInt64.max)

    /// The threshold above which a callback is a hang; nil: no detection.
    public let hangThreshold: Duration?
    private let onHang: @Sendable (LoopHang) -> Void
    /// Loop thread only.
    private let onDispatch: ((LoopDispatch) -> Void)?
    private var detector: DispatchSourceTimer?
    /// Nesting depth: a callback that runs the loop (`runUntilIdle` inside a
    /// handler) is measured once, as the outer callback.
    private var depth = 0

    init(hangThreshold: Duration?, onHang: @escaping @Sendable (LoopHang) -> Void,
         onDispatch: ((LoopDispatch) -> Void)?) {
        self.hangThreshold = hangThreshold
        self.onHang = onHang
        self.onDispatch = onDispatch
        guard let hangThreshold, hangThreshold > .zero else { return }
        // The detector looks four times per threshold, so a hang is
        // reported at most a quarter threshold late.
        let period = max(Int64(10_000_000), hangThreshold.nanosecondsClamped / 4)
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "MainLoop.hangDetector"))
        timer.schedule(deadline: .now() + .nanoseconds(Int(period)), repeating: .nanoseconds(Int(period)))
        let limit = hangThreshold.nanosecondsClamped
        timer.setEventHandler { [weak self] in self?.checkForHang(limit: limit) }
        timer.resume()
        detector = timer
    }

    deinit { detector?.cancel() }

    /// Stops the detector thread's checks (the counters stay readable).
    func stop() {
        detector?.cancel()
        detector = nil
    }

    /// How many callbacks ran at `priority`.
    public func dispatched(at priority: LoopPriority) -> UInt64 {
        switch priority {
        case .system: systemCount.load(ordering: .relaxed)
        case .input: inputCount.load(ordering: .relaxed)
        case .app: appCount.load(ordering: .relaxed)
        }
    }

    /// How many callbacks ran longer than the threshold.
    public var hangs: UInt64 { hangCount.load(ordering: .relaxed) }

    /// Runs one callback, measured. `deadline` (monotonic nanoseconds, real
    /// clock only) gives a timer's lateness, from the same clock reading as
    /// the start. Loop thread only.
    func measure(_ kind: LoopSourceKind, _ priority: LoopPriority, deadline: Int64? = nil, _ body: () -> Void) {
        if depth > 0 {
            body()
            return
        }
        depth = 1
        defer { depth = 0 }
        let start = LoopInstant.monotonicNow().nanoseconds
        runningKind.store(kind.rawValue, ordering: .relaxed)
        callbackSequence.add(1, ordering: .relaxed)
        runningSince.store(start &+ 1, ordering: .releasing)
        body()
        runningSince.store(0, ordering: .releasing)
        let elapsed = Duration.nanoseconds(LoopInstant.monotonicNow().nanoseconds &- start)
        switch priority {
        case .system: systemCount.add(1, ordering: .relaxed)
        case .input: inputCount.add(1, ordering: .relaxed)
        case .app: appCount.add(1, ordering: .relaxed)
        }
        if let hangThreshold, elapsed >= hangThreshold {
            hangCount.add(1, ordering: .relaxed)
            onHang(LoopHang(kind: kind, elapsed: elapsed, finished: true))
        }
        let lateness = deadline.map { Duration.nanoseconds(start &- $0) } ?? .zero
        onDispatch?(LoopDispatch(kind: kind, priority: priority, duration: elapsed, lateness: lateness))
    }

    /// The detector's check, on its own thread: reports a callback still
    /// running past the limit, once per callback.
    private func checkForHang(limit: Int64) {
        let since = runningSince.load(ordering: .acquiring)
        guard since != 0 else { return }
        let sequence = callbackSequence.load(ordering: .relaxed)
        let elapsed = LoopInstant.monotonicNow().nanoseconds &- (since &- 1)
        guard elapsed >= limit, reportedSequence.load(ordering: .relaxed) != sequence,
              runningSince.load(ordering: .acquiring) == since else { return }
        reportedSequence.store(sequence, ordering: .relaxed)
        let kind = LoopSourceKind(rawValue: runningKind.load(ordering: .relaxed)) ?? .fileDescriptor
        onHang(LoopHang(kind: kind, elapsed: .nanoseconds(elapsed), finished: false))
    }
}

extension MainRunLoop {
    /// Starts watching every callback this loop runs (see ``LoopMonitor``).
    ///
    /// - Parameters:
    ///   - hangThreshold: a callback running at least this long is reported
    ///     to `onHang` twice: once while it still runs (from a detector
    ///     thread) and once when it returns (on the loop thread). Nil: no
    ///     hang detection.
    ///   - onHang: called from the detector thread or the loop thread.
    ///   - onDispatch: called on the loop thread after every callback, e.g.
    ///     to record metrics.
    /// - Returns: the monitor; a second call replaces the first monitor.
    @discardableResult
    public func startMonitoring(hangThreshold: Duration?, onHang: @escaping @Sendable (LoopHang) -> Void = { _ in },
                                onDispatch: ((LoopDispatch) -> Void)? = nil) -> LoopMonitor {
        preconditionInLoop()
        core.monitor?.stop()
        let monitor = LoopMonitor(hangThreshold: hangThreshold, onHang: onHang, onDispatch: onDispatch)
        core.monitor = monitor
        return monitor
    }

    /// Stops monitoring; callbacks are no longer measured.
    public func stopMonitoring() {
        preconditionInLoop()
        core.monitor?.stop()
        core.monitor = nil
    }

    /// Work and events queued on this loop's channels and not handled yet
    /// (posted work, jobs, inputs): the loop's queue depth. Counts every
    /// channel, so it is for sampling now and then, not per event.
    public var queuedWorkCount: Int {
        preconditionInLoop()
        var total = 0
        for case let channel as ChannelBase in core.registered.values { total += channel.queuedCount }
        return total
    }

    /// The current monitor, if monitoring was started.
    public var monitor: LoopMonitor? { core.monitor }
}

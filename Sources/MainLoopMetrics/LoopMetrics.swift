import CoreMetrics
import MainLoop

/// The loop's numbers through swift-metrics, for any backend the process
/// bootstraps (`MetricsSystem.bootstrap`):
///
/// | metric | type | labels |
/// |---|---|---|
/// | `mainloop_loop_dispatched_total` | counter | `priority` |
/// | `mainloop_loop_callback_duration_seconds` | timer | `kind` (``/MainLoop/LoopSourceKind``) |
/// | `mainloop_loop_timer_lateness_seconds` | timer | |
/// | `mainloop_loop_lag_seconds` | timer | |
/// | `mainloop_loop_queue_depth` | gauge | |
/// | `mainloop_loop_hangs_total` | counter | |
/// | `mainloop_loop_rate_limit_pauses_total` | counter | |
///
/// Every callback is measured (``/MainLoop/MainRunLoop/startMonitoring(hangThreshold:onHang:onDispatch:)``)
/// and recorded into the backend on the loop thread, so the backend's cost
/// is paid per callback. Loop lag is how late a probe posted at app priority
/// runs, once per `probeInterval`; the queue depth and the rate limits'
/// pauses (``/MainLoop/MainRunLoop/rateLimitPauses``) are sampled then too.
/// Loop thread only.
public final class LoopMetrics {
    /// The loop's monitor (hang detection and counts).
    public let monitor: LoopMonitor
    private let loop: MainRunLoop
    private var probe: LoopTimer?

    /// Starts monitoring `loop` and recording its metrics.
    /// - Parameters:
    ///   - loop: the loop to measure (this is its thread).
    ///   - hangThreshold: callbacks at least this long are hangs
    ///     (``/MainLoop/LoopHang``), reported to `onHang` and counted; nil: none.
    ///   - probeInterval: how often loop lag and queue depth are sampled.
    ///   - onHang: told about each hang (from the detector's thread while
    ///     it lasts, then from the loop thread).
    public init(loop: MainRunLoop, hangThreshold: Duration?, probeInterval: Duration = .seconds(1),
                onHang: @escaping @Sendable (LoopHang) -> Void = { _ in }) {
        self.loop = loop
        let dispatched = LoopPriority.allCases.map {
            Counter(label: "mainloop_loop_dispatched_total", dimensions: [("priority", $0.description)])
        }
        let durations = LoopSourceKind.allCases.map {
            CoreMetrics.Timer(label: "mainloop_loop_callback_duration_seconds", dimensions: [("kind", $0.description)])
        }
        let lateness = CoreMetrics.Timer(label: "mainloop_loop_timer_lateness_seconds")
        let hangs = Counter(label: "mainloop_loop_hangs_total")
        monitor = loop.startMonitoring(hangThreshold: hangThreshold, onHang: { hang in
            if hang.finished { hangs.increment() }
            onHang(hang)
        }, onDispatch: { dispatch in
            dispatched[dispatch.priority.rawValue].increment()
            durations[Int(dispatch.kind.rawValue)].recordNanoseconds(dispatch.duration.nanosecondsClamped)
            if dispatch.kind == .timer { lateness.recordNanoseconds(max(0, dispatch.lateness.nanosecondsClamped)) }
        })
        let lag = CoreMetrics.Timer(label: "mainloop_loop_lag_seconds")
        let depth = Gauge(label: "mainloop_loop_queue_depth")
        let pauses = Counter(label: "mainloop_loop_rate_limit_pauses_total")
        pauses.increment(by: 0)
        var pausesReported = 0
        probe = loop.scheduleTimer(after: probeInterval, repeating: probeInterval) { [weak loop] in
            guard let loop else { return }
            depth.record(loop.queuedWorkCount)
            pauses.increment(by: loop.rateLimitPauses - pausesReported)
            pausesReported = loop.rateLimitPauses
            let posted = loop.now
            do {
                try loop.executeInLoop(priority: .app) { [weak loop] in
                    guard let loop else { return }
                    lag.recordNanoseconds((loop.now - posted).nanosecondsClamped)
                }
            } catch {
                // Only after shutdown, when there is no lag to measure.
            }
        }
    }

    /// Stops measuring and probing.
    public func stop() {
        probe?.cancel()
        probe = nil
        loop.stopMonitoring()
    }
}

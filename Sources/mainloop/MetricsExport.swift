import CoreMetrics
import MainLoopKit
import MainLoopMetrics
import Prometheus

/// `mainloop run`'s metrics: swift-metrics bootstrapped with a Prometheus
/// registry, the loop's and the service's metrics, the `metrics` query,
/// and (with `--metrics-file`) the text written atomically every interval,
/// as node_exporter's textfile collector expects (a whole file, renamed
/// into place, never a half-written one).
///
/// Set up in the loop's first turn, after `READY=1`, or by the first
/// `metrics` query if one comes sooner: the registry, the loop monitor and
/// its hang detector cost about 0.3–0.45 ms that a supervisor waiting for
/// READY need not wait for. Nothing is lost by it: the service's numbers
/// are counters the application keeps from its start (sampled when asked),
/// and the loop's are per callback, of which none runs before the loop does.
final class MetricsExport {
    private static let registry = PrometheusCollectorRegistry()
    private static let bootstrap: Void = MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

    /// What exists once set up.
    private struct Running {
        let loopMetrics: LoopMetrics
        let serviceMetrics: ServiceMetrics
        let writer: LoopTimer?
    }

    private unowned let host: ServiceHost
    private let hangThreshold: Duration?
    private let file: String?
    private let interval: Duration
    private let logger: Logger
    private let failureLog: RateLimitedLog
    private var running: Running?
    private var isStopped = false

    init(host: ServiceHost, hangThreshold: Duration?, file: String?, interval: Duration, logger: Logger) {
        self.host = host
        self.hangThreshold = hangThreshold
        self.file = file
        self.interval = interval
        self.logger = logger
        failureLog = RateLimitedLog(logger: logger, loop: host.loop)
        host.metricsText = { [unowned self] in
            let running = self.startIfNeeded()
            running.serviceMetrics.server = self.host.control
            running.serviceMetrics.sample()
            return Self.registry.emitToString()
        }
        // Queued now, run in the loop's first turn: after READY=1, before
        // any request is read (system priority comes first).
        do {
            try host.loop.executeInLoop(priority: .system) { [weak self] in
                guard let self, !self.isStopped else { return }
                _ = self.startIfNeeded()
            }
        } catch {
            // Only a loop already shut down refuses work: set up now.
            _ = startIfNeeded()
        }
    }

    private func startIfNeeded() -> Running {
        if let running { return running }
        _ = Self.bootstrap
        let logger = self.logger
        let loopMetrics = LoopMetrics(loop: host.loop, hangThreshold: hangThreshold) { hang in
            logger.warning("loop hang: \(hang)")
        }
        var writer: LoopTimer?
        if let file {
            // A run killed mid-write (SIGKILL) left its temporary behind.
            AtomicFile.removeTemporariesOfDeadWriters(of: file)
            writer = host.loop.scheduleTimer(after: .zero, repeating: interval) { [weak self] in
                self?.write(to: file)
            }
        }
        let started = Running(loopMetrics: loopMetrics, serviceMetrics: ServiceMetrics(application: host.application),
                              writer: writer)
        running = started
        return started
    }

    /// Writes the text now (also at exit, so the last numbers are kept).
    func write(to file: String) {
        let running = startIfNeeded()
        running.serviceMetrics.server = host.control
        running.serviceMetrics.sample()
        do {
            try AtomicFile.write(Self.registry.emitToString(), to: file, mode: 0o644)
        } catch {
            failureLog.log(.error, "metrics file \(file): \(error)")
        }
    }

    func stop() {
        isStopped = true
        running?.writer?.cancel()
        running?.loopMetrics.stop()
    }
}

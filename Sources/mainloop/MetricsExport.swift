import CoreMetrics
import MainLoopKit
import MainLoopMetrics
import Prometheus

/// `mainloop run`'s metrics: swift-metrics bootstrapped with a Prometheus
/// registry, the loop's and the service's metrics, the `metrics` query,
/// and (with `--metrics-file`) the text written atomically every interval,
/// as node_exporter's textfile collector expects (a whole file, renamed
/// into place, never a half-written one).
final class MetricsExport {
    private static let registry = PrometheusCollectorRegistry()
    private static let bootstrap: Void = MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

    let loopMetrics: LoopMetrics
    private let serviceMetrics: ServiceMetrics
    private unowned let host: ServiceHost
    private var writer: LoopTimer?
    private let failureLog: RateLimitedLog

    init(host: ServiceHost, hangThreshold: Duration?, file: String?, interval: Duration, logger: Logger) {
        _ = Self.bootstrap
        loopMetrics = LoopMetrics(loop: host.loop, hangThreshold: hangThreshold) { hang in
            logger.warning("loop hang: \(hang)")
        }
        // The socket opens in host.start(), after this: sampled once open.
        let serviceMetrics = ServiceMetrics(application: host.application)
        self.serviceMetrics = serviceMetrics
        failureLog = RateLimitedLog(logger: logger, loop: host.loop)
        host.metricsText = { [unowned host] in
            serviceMetrics.server = host.control
            serviceMetrics.sample()
            return Self.registry.emitToString()
        }
        self.host = host
        guard let file else { return }
        // A run killed mid-write (SIGKILL) left its temporary behind.
        AtomicFile.removeTemporariesOfDeadWriters(of: file)
        writer = host.loop.scheduleTimer(after: .zero, repeating: interval) { [weak self] in
            self?.write(to: file)
        }
    }

    /// Writes the text now (also at exit, so the last numbers are kept).
    func write(to file: String) {
        serviceMetrics.server = host.control
        serviceMetrics.sample()
        do {
            try AtomicFile.write(Self.registry.emitToString(), to: file, mode: 0o644)
        } catch {
            failureLog.log(.error, "metrics file \(file): \(error)")
        }
    }

    func stop() {
        writer?.cancel()
        writer = nil
        loopMetrics.stop()
    }
}

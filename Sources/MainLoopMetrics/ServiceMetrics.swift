import CoreMetrics
import MainLoopKit

/// The notification center's and the control socket's numbers through
/// swift-metrics, sampled from their counters by ``sample()``:
///
/// | metric | type | labels |
/// |---|---|---|
/// | `mainloop_notifications_total` | counter | `kind`, `outcome` (received, deliveredLive, held, deliveredMerged, folded, cancelled, discarded, refused) |
/// | `mainloop_notifications_pending` | gauge | `kind` (held, not yet resolved) |
/// | `mainloop_app_state` | gauge | `state` (1 for the current state, 0 for the others) |
/// | `mainloop_socket_connections` | gauge | |
/// | `mainloop_socket_refused_total` | counter | `reason` (peer, idle, evicted) |
/// | `mainloop_socket_errors_total` | counter | `type` (malformed, accept) |
///
/// Counters advance by what changed since the previous sample, so a
/// backend sees monotonic counters. Loop thread only.
public final class ServiceMetrics {
    private let application: Application
    /// The control socket whose counters are sampled (nil: none yet).
    public weak var server: ControlServer?
    /// Counters by label set, and the value each was last advanced to.
    private var counters: [String: (counter: Counter, last: Int)] = [:]
    private var gauges: [String: Gauge] = [:]

    /// Metrics for `application`'s center and state and, when given,
    /// `server`'s socket; nothing is recorded until ``sample()``.
    public init(application: Application, server: ControlServer? = nil) {
        self.application = application
        self.server = server
    }

    /// Brings every metric up to date with the counters.
    public func sample() {
        for (kind, stats) in application.notifications.statistics {
            let outcomes: [(String, Int)] = [
                ("received", stats.received), ("deliveredLive", stats.deliveredLive), ("held", stats.held),
                ("deliveredMerged", stats.deliveredMerged), ("folded", stats.folded), ("cancelled", stats.cancelled),
                ("discarded", stats.discarded), ("refused", stats.refused),
            ]
            for (outcome, value) in outcomes {
                advance("mainloop_notifications_total", [("kind", kind.name), ("outcome", outcome)], to: value)
            }
            gauge("mainloop_notifications_pending", [("kind", kind.name)]).record(stats.pending)
        }
        for state in AppState.allCases {
            gauge("mainloop_app_state", [("state", state.rawValue)]).record(state == application.state ? 1 : 0)
        }
        guard let control = server else { return }  // not serving (yet)
        gauge("mainloop_socket_connections", []).record(control.connectionCount)
        advance("mainloop_socket_refused_total", [("reason", "peer")], to: control.refusedPeers)
        advance("mainloop_socket_refused_total", [("reason", "idle")], to: control.idleClosed)
        advance("mainloop_socket_refused_total", [("reason", "evicted")], to: control.evicted)
        advance("mainloop_socket_errors_total", [("type", "malformed")], to: control.malformedRequests)
        advance("mainloop_socket_errors_total", [("type", "accept")], to: control.acceptFailures)
    }

    private static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: "\u{1}")
    }

    private func advance(_ label: String, _ dimensions: [(String, String)], to value: Int) {
        let key = Self.key(label, dimensions)
        var entry = counters[key] ?? (Counter(label: label, dimensions: dimensions), 0)
        if value > entry.last { entry.counter.increment(by: value - entry.last) }
        entry.last = max(entry.last, value)
        counters[key] = entry
    }

    private func gauge(_ label: String, _ dimensions: [(String, String)]) -> Gauge {
        let key = Self.key(label, dimensions)
        if let existing = gauges[key] { return existing }
        let made = Gauge(label: label, dimensions: dimensions)
        gauges[key] = made
        return made
    }
}

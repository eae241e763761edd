import AppLifecycle
import MainLoopJSON
import SystemNotifications

/// The replies to ``EngineQuery``, as the control socket sends them.
public enum EngineQueries {
    /// `{"ok": true, ...}` for `query`; `extraStats` are added to a stats reply.
    public static func reply(_ query: EngineQuery, application: Application, extraStats: JSONObject = JSONObject()) -> JSONObject {
        let center = application.notifications
        switch query {
        case .state:
            return EngineStateSnapshot(application: application).reply
        case .stats:
            var kinds = JSONObject()
            for (kind, counters) in center.statistics { kinds[kind.name] = .object(json(counters)) }
            var reply: JSONObject = ["ok": true, "kinds": .object(kinds),
                                     "discardedInput": .number(Double(application.discardedInputCount)),
                                     "droppedAppWork": .number(Double(application.droppedAppWorkCount))]
            for (key, value) in extraStats { reply[key] = value }
            return reply
        case .values:
            var values = JSONObject()
            for kind in center.kinds {
                // A registered kind always has a current value.
                values[kind.name] = (try? center.currentValue(of: kind)) ?? .null
            }
            return ["ok": true, "values": .object(values)]
        case .metrics:
            // The engine has no metrics text of its own; a host that
            // collects metrics answers this query itself.
            return error("this service does not collect metrics")
        }
    }

    /// One kind's counters as JSON.
    public static func json(_ counters: NotificationCounters) -> JSONObject {
        ["received": .number(Double(counters.received)),
         "ignoredUnchanged": .number(Double(counters.ignoredUnchanged)),
         "changedWhileNotRunning": .number(Double(counters.changedWhileNotRunning)),
         "deliveredLive": .number(Double(counters.deliveredLive)),
         "held": .number(Double(counters.held)),
         "deliveredMerged": .number(Double(counters.deliveredMerged)),
         "folded": .number(Double(counters.folded)),
         "cancelled": .number(Double(counters.cancelled)),
         "discarded": .number(Double(counters.discarded)),
         "pending": .number(Double(counters.pending)),
         "refused": .number(Double(counters.refused))]
    }

    /// `{"ok": false, "error": message}`.
    public static func error(_ message: String) -> JSONObject {
        JSONObject(distinctKeys: [.init("ok", false), .init("error", .string(message))])
    }
}

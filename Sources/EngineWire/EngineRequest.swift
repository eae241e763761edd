import AppLifecycle
import MainLoopJSON

/// One request of the BEHAVIOUR.md §7 vocabulary, from a scenario step, a control
/// socket line or `mainloop ctl`.
public enum EngineRequest: Equatable, Sendable {
    /// A lifecycle command.
    case lifecycle(LifecycleCommand)
    /// A system event, `{"orientation": "faceUp"}`: checked against the
    /// engine's rules (which may include user kinds) where it is applied.
    case system(JSONValue)
    /// User input (a touch id).
    case input(String)
    /// The system is short of memory (`{"memoryWarning": true}`): the
    /// iOS memory warning (``/AppLifecycle/Application/receiveMemoryWarning()``).
    case memoryWarning
    /// An app action: the replay app's, or a recorded live app's
    /// (``RequestInterpreter`` with a recorder).
    case app(AppAction)
    /// A query (the control socket only).
    case query(EngineQuery)
}

/// What a supervisor can ask a running service.
public enum EngineQuery: String, Sendable, CaseIterable {
    /// The app's state, holding, held slots, background time, open tasks.
    case state
    /// Counters per kind and of the socket.
    case stats
    /// The system's current value of every kind.
    case values
    /// The service's metrics as Prometheus text (`{"ok": true, "text": ...}`),
    /// when the service collects metrics.
    case metrics
}

/// Where a request comes from; each place allows some forms.
public enum RequestContext: Sendable {
    /// A scenario step (BEHAVIOUR.md §7): lifecycle, system, input, memoryWarning, app.
    case scenarioStep
    /// The control socket: lifecycle, system, input, memoryWarning, app, query. The app
    /// actions that block the main thread are scenario steps only: a
    /// running service's main thread is busy with its own work.
    case controlSocket

    /// Whether this context accepts the request key `key` (one of
    /// ``forms``). The commonest keys are compared first: comparing two
    /// equal short strings is a compare of their bits, and every unequal
    /// one before the match costs a call into the string comparison.
    public func accepts(_ key: String) -> Bool {
        switch self {
        case .scenarioStep:
            switch key {
            case "system", "app", "lifecycle", "input", "memoryWarning": return true
            default: return false
            }
        case .controlSocket:
            switch key {
            case "system", "query", "input", "lifecycle", "app", "memoryWarning": return true
            default: return false
            }
        }
    }

    /// The request keys this context accepts, in the order messages list them.
    public var forms: [String] {
        switch self {
        case .scenarioStep: return ["lifecycle", "system", "input", "memoryWarning", "app"]
        case .controlSocket: return ["lifecycle", "system", "input", "memoryWarning", "app", "query"]
        }
    }
}

/// A malformed request; the message says what is wrong (the caller adds
/// where: a file and step, or nothing for a socket reply).
public struct RequestError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let problem: String
    public init(_ problem: String) { self.problem = problem }
    public var description: String { problem }
}

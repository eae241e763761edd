import AppLifecycle
import MainLoopJSON
import SystemNotifications

/// A replay scenario (SPEC §6), parsed and checked for shape. System event
/// payloads are checked against their kinds' rules when the replay is set
/// up, before any step runs.
public struct Scenario: Sendable {
    /// One step: a virtual time and what happens then.
    public struct Step: Sendable {
        /// Virtual seconds.
        public var at: Double
        public var action: Action
    }

    /// What a step does.
    public enum Action: Sendable {
        case lifecycle(LifecycleCommand)
        /// `{"kind": payload}`, decoded by the center's rules at setup.
        case system(JSONValue)
        case input(String)
        case app(AppAction)
    }

    /// A user kind declared in `config.customKinds` (an extension of SPEC §6).
    public struct CustomKind: Sendable {
        public var rule: CoalescingRule
    }

    public var name: String
    public var configuration = LifecycleConfiguration()
    /// Whether the replay app ends a task from its expiration handler.
    public var expirationHandlerEndsTask = true
    public var customKinds: [CustomKind] = []
    /// The `initial` object, applied as silent initial values.
    public var initial = JSONObject()
    public var steps: [Step] = []
    /// The expected observations, if the file has `expect`.
    public var expect: [JSONObject]?
}

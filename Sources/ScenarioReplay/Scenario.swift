import AppLifecycle
import EngineWire
import MainLoopJSON
import SystemNotifications

/// A replay scenario (BEHAVIOUR.md §7), parsed and checked. System event payloads
/// are checked against their kinds' rules when the replay is set up,
/// before any step runs.
public struct Scenario: Sendable {
    /// One step: a virtual time and the request made then.
    public struct Step: Sendable {
        /// Virtual time since the start, exact to the nanosecond.
        public var at: Duration
        /// What happens.
        public var request: EngineRequest
    }

    public var name: String
    public var configuration = LifecycleConfiguration()
    /// Whether the replay app ends a task from its expiration handler.
    public var expirationHandlerEndsTask = true
    /// The scenario's own kinds (`config.customKinds`), in declaration order.
    public var customKinds: [CoalescingRule] = []
    /// The `initial` object, applied as silent initial values.
    public var initial = JSONObject()
    public var steps: [Step] = []
    /// The expected observations, if the file has `expect`.
    public var expect: [JSONObject]?
}

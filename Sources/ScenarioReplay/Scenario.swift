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
        /// The step follows the previous one in the same turn of the loop
        /// (`"sameTurn": true`): what the previous step made ready runs
        /// after this one, not before (a recording's inputs that one
        /// callback applied, such as pipelined socket lines).
        public var sameTurn = false

        public init(at: Duration, request: EngineRequest, sameTurn: Bool = false) {
            self.at = at
            self.request = request
            self.sameTurn = sameTurn
        }
    }

    public var name: String
    public var configuration = LifecycleConfiguration()

    /// A scenario named `name` with the default configuration and no steps.
    public init(name: String) { self.name = name }
    /// Whether the replay app ends a task from its expiration handler.
    public var expirationHandlerEndsTask = true
    /// The scenario's own kinds (`config.customKinds`), in declaration order.
    public var customKinds: [CoalescingRule] = []
    /// The `initial` object, applied as silent initial values.
    public var initial = JSONObject()
    public var steps: [Step] = []
    /// The expected observations, if the file has `expect`.
    public var expect: [JSONObject]?
    /// For a recording, the line (from 1) of its first step: errors in a
    /// step name its line rather than its index.
    public var firstStepLine: Int?
}

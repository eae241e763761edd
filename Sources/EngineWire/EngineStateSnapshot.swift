import AppLifecycle
import MainLoop
import MainLoopJSON

/// What a `state` query reports, read from an application at one moment:
/// equal snapshots make the same reply. A responder that keeps the last
/// snapshot and its reply can answer a query that finds nothing changed
/// with the very same `JSONObject`, whose line the control server then
/// copies from the text it printed for it (a `ControlServer` keeps its last
/// short reply's line); ServiceKit's `ControlResponder` does so.
///
/// ```swift
/// let snapshot = EngineStateSnapshot(application: application)
/// let reply = snapshot.reply  // {"ok":true,"state":"active",...}
/// ```
public struct EngineStateSnapshot: Equatable, Sendable {
    /// The lifecycle state.
    public var state: AppState
    /// Whether the notification center holds (the app is suspended).
    public var isHolding: Bool
    /// How many slots the center holds.
    public var heldSlotCount: Int
    /// The background time left; nil unless the app is in the background.
    public var remainingBackgroundTime: Duration?
    /// The names of the open background tasks, in the order they began.
    public var openBackgroundTaskNames: [String]

    /// The application's state now. Loop thread only.
    public init(application: Application) {
        let center = application.notifications
        state = application.state
        isHolding = center.isHolding
        heldSlotCount = center.heldSlotCount
        remainingBackgroundTime = application.remainingBackgroundTime
        openBackgroundTaskNames = application.openBackgroundTaskNames
    }

    /// The `state` query's reply: `{"ok":true,"state":…,"holding":…,
    /// "heldSlots":…,"remainingBackgroundTime":…,"openBackgroundTasks":[…]}`.
    public var reply: JSONObject {
        JSONObject(distinctKeys: [
            .init("ok", true), .init("state", .string(state.rawValue)), .init("holding", .bool(isHolding)),
            .init("heldSlots", .number(Double(heldSlotCount))),
            .init("remainingBackgroundTime", remainingBackgroundTime.map { .number($0.secondsDouble) } ?? .null),
            .init("openBackgroundTasks", .array(openBackgroundTaskNames.map(JSONValue.string))),
        ])
    }
}

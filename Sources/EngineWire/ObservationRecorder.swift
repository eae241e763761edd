import AppLifecycle
import MainLoop
import MainLoopJSON
import SystemNotifications

/// The SPEC §7 observation lines of an application: it observes
/// everything and reports each thing as one JSON object (`{"at": ...,
/// "state": "background"}` and so on), in the order it happened.
///
/// The scenario replay records these lines with the manual clock; the
/// `mainloop run` service prints them with the wall clock. ``attach(to:)``
/// makes it the application's delegate (the application holds it), an
/// engine observer and an observer of every kind.
public final class ObservationRecorder: ApplicationDelegate {
    private let timestamp: () -> JSONObject
    private let sink: (JSONObject) -> Void
    /// Called after the didEnterBackground line, inside the callback (the
    /// replay blocks the main thread there when the app asked for it).
    public var didEnterBackground: ((Application) -> Void)?

    /// - Parameters:
    ///   - timestamp: the leading fields of each line (e.g. `at`).
    ///   - sink: receives each line, in order, on the loop thread.
    public init(timestamp: @escaping () -> JSONObject, sink: @escaping (JSONObject) -> Void) {
        self.timestamp = timestamp
        self.sink = sink
    }

    /// Makes this the application's delegate and observes the engine and
    /// every notification kind.
    public func attach(to application: Application) throws(NotificationCenterError) {
        application.delegate = self
        // Weak: the application may outlive the recorder (it keeps its observers).
        application.addEngineObserver { [weak self] in self?.engine($0) }
        try application.notifications.addObserver { [weak self] in self?.record($0) }
    }

    /// The line of a delivered notification: the timestamp, then
    /// ``fields(of:)``, built in one object (the same line as
    /// `record(Self.fields(of:))`, without a second object to copy from).
    private func record(_ notification: SystemNotification) {
        var line = timestamp()
        Self.append(notification, to: &line)
        sink(line)
    }

    /// The SPEC §7 fields of a delivered notification: name, payload, merged.
    public static func fields(of notification: SystemNotification) -> JSONObject {
        var object = JSONObject()
        append(notification, to: &object)
        return object
    }

    /// Adds ``fields(of:)`` to `object`, after what it holds.
    private static func append(_ notification: SystemNotification, to object: inout JSONObject) {
        let payload = notification.payload
        object.reserveCapacity(object.count + payload.count + 2)
        object["notification"] = .string(notification.name)
        for (key, value) in payload { object[key] = value }
        object["merged"] = .number(Double(notification.merged))
    }

    /// Reports one line made of `key: value`.
    public func record(_ key: String, _ value: JSONValue) {
        record(JSONObject([(key, value)]))
    }

    /// Reports one line with these fields after the timestamp.
    public func record(_ fields: JSONObject) {
        var line = timestamp()
        line.reserveCapacity(line.count + fields.count)
        for (key, value) in fields { line[key] = value }
        sink(line)
    }

    private func callback(_ callback: LifecycleCallback) { record("callback", .string(callback.rawValue)) }

    public func applicationWillFinishLaunching(_ application: Application) { callback(.willFinishLaunching) }
    public func applicationDidFinishLaunching(_ application: Application) { callback(.didFinishLaunching) }
    public func applicationDidBecomeActive(_ application: Application) { callback(.didBecomeActive) }
    public func applicationWillResignActive(_ application: Application) { callback(.willResignActive) }
    public func applicationDidEnterBackground(_ application: Application) {
        callback(.didEnterBackground)
        didEnterBackground?(application)
    }
    public func applicationWillEnterForeground(_ application: Application) { callback(.willEnterForeground) }
    public func applicationWillTerminate(_ application: Application) { callback(.willTerminate) }
    public func application(_ application: Application, didReceiveInput input: String) { record("input", .string(input)) }
    public func application(_ application: Application, didReceiveLocalNotification label: String) {
        record(["localNotification": .string(label), "delivery": "app"])
    }

    /// The engine's side: states, kills, discarded input, presented
    /// notifications, and inputs refused when the loop applied them.
    private func engine(_ event: EngineEvent) {
        switch event {
        case .stateChanged(let state): record("state", .string(state.rawValue))
        case .killed(let reason): record("killed", .string(reason.rawValue))
        case .inputDiscarded(let input): record("discarded", ["input": .string(input)])
        case .localNotificationPresented(let label): record(["localNotification": .string(label), "delivery": "presented"])
        case .commandRejected(let command, _): record("rejected", .string(command.rawValue))
        case .systemEventRefused(let error): record("refused", ["system": .string(error.description)])
        case .memoryWarning(let delivered): record("memoryWarning", ["deliveredToApp": .bool(delivered)])
        case .appSourceFailed(let descriptor, let error):
            record("appSourceFailed", ["fileDescriptor": .number(Double(descriptor)), "error": .string(error.description)])
        }
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension ObservationRecorder: Sendable {}

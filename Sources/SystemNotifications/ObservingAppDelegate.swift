import AppLifecycle
import MainLoop
import MainLoopJSON

/// An app that observes everything and reports each thing as a SPEC §7
/// observation line (`{"at": ..., "state": "background"}` and so on).
///
/// The scenario replay records these lines with the manual clock; the
/// `mainloop run` service prints them with the wall clock. Wire it with
/// ``attach(to:center:)``: it becomes the application's delegate, an
/// engine observer and an observer of every notification kind.
public final class ObservingAppDelegate: ApplicationDelegate {
    private let timestamp: () -> JSONObject
    private let sink: (JSONObject) -> Void
    /// How long didEnterBackground blocks the main thread (replay's
    /// `onDidEnterBackground`).
    public var didEnterBackgroundBlock: Duration?

    /// - Parameters:
    ///   - timestamp: the leading fields of each line (e.g. `at`).
    ///   - sink: receives each line, in order, on the loop thread.
    public init(timestamp: @escaping () -> JSONObject, sink: @escaping (JSONObject) -> Void) {
        self.timestamp = timestamp
        self.sink = sink
    }

    /// Makes this the application's delegate and observes the engine and
    /// every notification kind.
    public func attach(to application: Application, center: SystemNotificationCenter) throws(NotificationCenterError) {
        application.delegate = self
        application.addEngineObserver { [unowned self] in self.engine($0) }
        try center.addObserver { [unowned self] in self.record($0.observation) }
    }

    /// Reports one line made of `key: value`.
    public func record(_ key: String, _ value: JSONValue) {
        record(JSONObject([(key, value)]))
    }

    /// Reports one line with these fields after the timestamp.
    public func record(_ fields: JSONObject) {
        var line = timestamp()
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
        if let didEnterBackgroundBlock { application.loop.blockMainThread(for: didEnterBackgroundBlock) }
    }
    public func applicationWillEnterForeground(_ application: Application) { callback(.willEnterForeground) }
    public func applicationWillTerminate(_ application: Application) { callback(.willTerminate) }
    public func application(_ application: Application, didReceiveInput input: String) { record("input", .string(input)) }
    public func application(_ application: Application, didReceiveLocalNotification label: String) {
        record(["localNotification": .string(label), "delivery": "app"])
    }

    /// The engine's side: states, kills, discarded input, presented notifications.
    private func engine(_ event: EngineEvent) {
        switch event {
        case .stateChanged(let state): record("state", .string(state.rawValue))
        case .killed(let reason): record("killed", .string(reason.rawValue))
        case .inputDiscarded(let input): record("discarded", ["input": .string(input)])
        case .localNotificationPresented(let label): record(["localNotification": .string(label), "delivery": "presented"])
        }
    }
}

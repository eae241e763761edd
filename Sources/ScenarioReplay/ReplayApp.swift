import AppLifecycle
import MainLoop
import MainLoopJSON
import SystemNotifications

/// The replay app of SPEC §6: observes every notification kind, ends a task
/// from its expiration handler when configured to, and otherwise does only
/// what the steps say. It records SPEC §7 observation lines with the
/// loop's clock.
final class ReplayApp: ApplicationDelegate {
    private let loop: MainRunLoop
    private(set) var observations: [JSONObject] = []
    /// How long didEnterBackground blocks the main thread.
    var didEnterBackgroundBlock: Duration?

    init(loop: MainRunLoop) { self.loop = loop }

    func record(_ key: String, _ value: JSONValue) {
        record(JSONObject([(key, value)]))
    }

    func record(_ fields: JSONObject) {
        var line = JSONObject()
        line["at"] = .number(loop.now.seconds)
        for (key, value) in fields { line[key] = value }
        observations.append(line)
    }

    private func callback(_ callback: LifecycleCallback) { record("callback", .string(callback.rawValue)) }

    func applicationWillFinishLaunching(_ application: Application) { callback(.willFinishLaunching) }
    func applicationDidFinishLaunching(_ application: Application) { callback(.didFinishLaunching) }
    func applicationDidBecomeActive(_ application: Application) { callback(.didBecomeActive) }
    func applicationWillResignActive(_ application: Application) { callback(.willResignActive) }
    func applicationDidEnterBackground(_ application: Application) {
        callback(.didEnterBackground)
        if let didEnterBackgroundBlock { loop.blockMainThread(for: didEnterBackgroundBlock) }
    }
    func applicationWillEnterForeground(_ application: Application) { callback(.willEnterForeground) }
    func applicationWillTerminate(_ application: Application) { callback(.willTerminate) }
    func application(_ application: Application, didReceiveInput input: String) { record("input", .string(input)) }
    func application(_ application: Application, didReceiveLocalNotification label: String) {
        record(["localNotification": .string(label), "delivery": "app"])
    }

    /// The engine's side: states, kills, discarded input, presented notifications.
    func engine(_ event: EngineEvent) {
        switch event {
        case .stateChanged(let state): record("state", .string(state.rawValue))
        case .killed(let reason): record("killed", .string(reason.rawValue))
        case .inputDiscarded(let input): record("discarded", ["input": .string(input)])
        case .localNotificationPresented(let label): record(["localNotification": .string(label), "delivery": "presented"])
        }
    }

    func notification(_ notification: SystemNotification) { record(notification.observation) }
}

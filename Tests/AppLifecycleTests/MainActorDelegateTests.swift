import AppLifecycle
import MainLoop
import SystemNotifications
import Testing

/// A `@MainActor` delegate, as an app writes it.
@MainActor final class RecordingDelegate: MainActorApplicationDelegate {
    var calls: [String] = []
    func applicationDidBecomeActive(_ application: Application) { calls.append("didBecomeActive") }
    func applicationDidEnterBackground(_ application: Application) { calls.append("didEnterBackground") }
    func applicationWillEnterForeground(_ application: Application) { calls.append("willEnterForeground") }
}

/// Testing `@MainActor` code in process: the test's own main-actor code
/// drives a deterministic application and its delegate is called there.
@Suite(.timeLimit(.minutes(1))) struct MainActorDelegateTests {
    @MainActor @Test func aMainActorDelegateIsTestedInProcess() throws {
        let delegate = RecordingDelegate()
        let application = try Application.testingMainActorDelegate(delegate)
        var orientations: [String] = []
        try application.notifications.addObserver(for: .orientation) { orientations.append("\($0.value)") }
        try application.perform(.launch)
        try application.perform(.home)
        try application.notifications.post(.orientation(.landscapeLeft))
        try application.loop.advance(by: .seconds(30))
        try application.perform(.foreground)
        #expect(delegate.calls == ["didBecomeActive", "didEnterBackground", "willEnterForeground", "didBecomeActive"])
        #expect(orientations.count == 1, "held while suspended, delivered once at the resume")
        #expect(application.mainActorDelegate === delegate)
    }
}

import AppLifecycle
import MainLoop
import SystemNotifications

/// An app delegate that is a `@MainActor` class (no isolated conformance:
/// `MainActorApplicationDelegate`).
@MainActor final class MainActorDelegate: MainActorApplicationDelegate {
    /// Main-actor state the callbacks mutate (the compiler checks it).
    var callbacks = 0

    func applicationDidFinishLaunching(_ application: Application) { note("didFinishLaunching") }
    func applicationDidBecomeActive(_ application: Application) { note("didBecomeActive") }
    func applicationWillResignActive(_ application: Application) { note("willResignActive") }
    func applicationDidEnterBackground(_ application: Application) { note("didEnterBackground") }
    func applicationWillEnterForeground(_ application: Application) { note("willEnterForeground") }
    func applicationWillTerminate(_ application: Application) { note("willTerminate") }
    func application(_ application: Application, didReceiveInput input: String) { note("input \(input)") }

    private func note(_ callback: String) {
        callbacks += 1
        say("delegate \(callback) #\(callbacks) main=\(onMainThread())")
    }
}

/// A `@MainActor` observer of the center.
@MainActor final class OrientationWatcher {
    var seen = 0

    func attach(to center: SystemNotificationCenter) throws {
        try center.addObserver(for: .orientation) { notification in
            self.seen += 1
            say("observer \(notification.name) x\(notification.merged) seen=\(self.seen)")
        }
    }
}

/// A `@MainActor` delegate passed inline (the application keeps it), a
/// `@MainActor` observer, and monitoring that sees suspension as it happens
/// (a synchronous engine observer) while the app's code stays gated.
@MainActor func mainActorApp() throws {
    let loop = try MainRunLoop.makeMain(deterministic: true)
    let application = try Application(mainActorDelegate: MainActorDelegate())
    let watcher = OrientationWatcher()
    try watcher.attach(to: application.notifications)
    application.addEngineObserver { event in
        if case .stateChanged(let state) = event { say("monitor \(state.rawValue)") }
    }
    try application.perform(.launch)
    try application.notifications.post(.orientation(.landscapeLeft))
    try application.perform(.home)
    try application.notifications.post(.orientation(.portrait))
    try application.notifications.post(.orientation(.faceUp))
    try loop.runUntilIdle()
    try application.perform(.foreground)
    try application.deliverInput("tap")
    try application.perform(.terminate)
    say("delegate kept: \(application.mainActorDelegate != nil)")
}

/// `MainRunLoop.runMain`: async code on the main actor, on the main loop;
/// the loop stops when it returns, and its error is rethrown.
@MainActor func runMainScenario() throws {
    let loop = MainRunLoop.main
    try MainRunLoop.runMain {
        try await loop.clock.sleep(for: .milliseconds(5))
        say("async body main=\(onMainThread()) inLoop=\(loop.inLoop)")
    }
    say("runMain returned")
    struct Failure: Error {}
    do {
        try MainRunLoop.runMain { throw Failure() }
    } catch is Failure {
        say("runMain rethrew")
    }
}

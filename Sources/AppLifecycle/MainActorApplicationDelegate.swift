import MainLoop
import SystemNotifications

/// ``ApplicationDelegate`` for a `@MainActor` class: the same callbacks,
/// isolated to the main actor, for an application on
/// ``/MainLoop/MainRunLoop/main`` (whose loop thread is the main thread,
/// where the main actor runs). Every method has an empty default.
///
/// ```swift
/// @MainActor final class AppDelegate: MainActorApplicationDelegate {
///     func applicationDidBecomeActive(_ application: Application) { print("active") }
/// }
///
/// let application = try Application(mainActorDelegate: AppDelegate())
/// ```
///
/// A plain `@MainActor` class cannot conform to ``ApplicationDelegate``
/// before Swift 6.2's isolated conformances; this protocol needs nothing
/// newer than Swift 6.1, and the compiler checks the isolation of your
/// delegate's code. The application calls these methods on the main
/// thread only (it checks).
@MainActor
public protocol MainActorApplicationDelegate: AnyObject {
    func applicationWillFinishLaunching(_ application: Application)
    func applicationDidFinishLaunching(_ application: Application)
    func applicationDidBecomeActive(_ application: Application)
    func applicationWillResignActive(_ application: Application)
    /// Save state here: a suspended app can be purged without notice.
    /// Must return within `didEnterBackgroundLimit`.
    func applicationDidEnterBackground(_ application: Application)
    func applicationWillEnterForeground(_ application: Application)
    func applicationWillTerminate(_ application: Application)
    /// User input; only delivered while active.
    func application(_ application: Application, didReceiveInput input: String)
    /// A local notification that fired while the app was active.
    func application(_ application: Application, didReceiveLocalNotification label: String)
    /// The system is short of memory: free caches.
    func applicationDidReceiveMemoryWarning(_ application: Application)
}

extension MainActorApplicationDelegate {
    public func applicationWillFinishLaunching(_ application: Application) {}
    public func applicationDidFinishLaunching(_ application: Application) {}
    public func applicationDidBecomeActive(_ application: Application) {}
    public func applicationWillResignActive(_ application: Application) {}
    public func applicationDidEnterBackground(_ application: Application) {}
    public func applicationWillEnterForeground(_ application: Application) {}
    public func applicationWillTerminate(_ application: Application) {}
    public func application(_ application: Application, didReceiveInput input: String) {}
    public func application(_ application: Application, didReceiveLocalNotification label: String) {}
    public func applicationDidReceiveMemoryWarning(_ application: Application) {}
}

extension Application {
    /// An application on ``/MainLoop/MainRunLoop/main`` whose delegate is a
    /// `@MainActor` class (held strongly, like ``delegate``).
    /// - Precondition: called on the main thread (the main actor is).
    /// - Throws: ``/MainLoop/MainLoopError`` when the application's inbox cannot be made.
    @MainActor
    public convenience init(mainActorDelegate: any MainActorApplicationDelegate,
                            configuration: LifecycleConfiguration = LifecycleConfiguration(),
                            limits: CoalescingLimits = CoalescingLimits()) throws(MainLoopError) {
        try self.init(loop: .main, configuration: configuration, limits: limits)
        self.mainActorDelegate = mainActorDelegate
    }

    /// An application for a test of a `@MainActor` delegate, in process:
    /// on a deterministic loop made on the calling thread, inside the
    /// caller's main-actor code.
    ///
    /// `swift test` runs `@MainActor` tests on a thread of its own, not on
    /// the process's main thread (so ``/MainLoop/MainRunLoop/main`` is not
    /// theirs to make). This application calls its delegate inside the
    /// test's own main-actor code instead: drive it (`perform`, `advance`,
    /// `runUntilIdle`, posts) from the test function without an `await` in
    /// between, and every delegate call runs synchronously there, checked by
    /// `MainActor.assumeIsolated`. After an `await` the test may resume on
    /// another thread, where the loop refuses to run (its precondition
    /// says why).
    /// - Throws: ``/MainLoop/MainLoopError`` when the loop or the
    ///   application's inbox cannot be made.
    @MainActor
    public static func testingMainActorDelegate(_ mainActorDelegate: any MainActorApplicationDelegate,
                                                configuration: LifecycleConfiguration = LifecycleConfiguration(),
                                                limits: CoalescingLimits = CoalescingLimits()) throws(MainLoopError) -> Application {
        let application = try Application(loop: MainRunLoop(deterministic: true), configuration: configuration,
                                          limits: limits)
        application.delegate = MainActorDelegateAdapter(mainActorDelegate)
        return application
    }

    /// The app's `@MainActor` delegate (it is ``delegate``, seen through
    /// the main actor); nil when there is none or the delegate is a plain
    /// ``ApplicationDelegate``.
    /// - Precondition: the application runs on ``/MainLoop/MainRunLoop/main``
    ///   (or was made by ``testingMainActorDelegate(_:configuration:limits:)``).
    @MainActor
    public var mainActorDelegate: (any MainActorApplicationDelegate)? {
        get { (delegate as? MainActorDelegateAdapter)?.target }
        set {
            precondition(loop.runsMainQueue || (loop.isDeterministic && delegate is MainActorDelegateAdapter),
                         "a @MainActor delegate needs an application on MainRunLoop.main (the main thread), or one made by "
                         + "Application.testingMainActorDelegate(_:) in a test")
            delegate = newValue.map(MainActorDelegateAdapter.init)
        }
    }
}

/// Calls a main-actor delegate from the engine, which runs on the main
/// loop's thread: the main thread, where the main actor runs, so the call
/// is synchronous (`MainActor.assumeIsolated`, which checks it).
final class MainActorDelegateAdapter: ApplicationDelegate {
    let target: any MainActorApplicationDelegate

    init(_ target: any MainActorApplicationDelegate) { self.target = target }

    /// Calls `body` on the main actor, synchronously: `assumeIsolated`
    /// runs the closure at once, on this thread (the main loop's, checked),
    /// and the values travel in a ``/MainLoop/LoopBound`` because the
    /// compiler cannot see that a synchronous closure stays on the thread.
    private func call(_ application: Application,
                      _ body: @MainActor (any MainActorApplicationDelegate, Application) -> Void) {
        let carried = LoopBound((target, application), loop: application.loop)
        MainActor.assumeIsolated { body(carried.value.0, carried.value.1) }
    }

    func applicationWillFinishLaunching(_ application: Application) {
        call(application) { $0.applicationWillFinishLaunching($1) }
    }
    func applicationDidFinishLaunching(_ application: Application) {
        call(application) { $0.applicationDidFinishLaunching($1) }
    }
    func applicationDidBecomeActive(_ application: Application) {
        call(application) { $0.applicationDidBecomeActive($1) }
    }
    func applicationWillResignActive(_ application: Application) {
        call(application) { $0.applicationWillResignActive($1) }
    }
    func applicationDidEnterBackground(_ application: Application) {
        call(application) { $0.applicationDidEnterBackground($1) }
    }
    func applicationWillEnterForeground(_ application: Application) {
        call(application) { $0.applicationWillEnterForeground($1) }
    }
    func applicationWillTerminate(_ application: Application) {
        call(application) { $0.applicationWillTerminate($1) }
    }
    func application(_ application: Application, didReceiveInput input: String) {
        call(application) { $0.application($1, didReceiveInput: input) }
    }
    func application(_ application: Application, didReceiveLocalNotification label: String) {
        call(application) { $0.application($1, didReceiveLocalNotification: label) }
    }
    func applicationDidReceiveMemoryWarning(_ application: Application) {
        call(application) { $0.applicationDidReceiveMemoryWarning($1) }
    }
}

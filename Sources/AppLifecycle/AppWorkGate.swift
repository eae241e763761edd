import MainLoop

/// Runs work as app code of one ``Application``, by the rules of posted app
/// work (``Application/post(_:)``): at once while the app runs code,
/// deferred to the resume while it is suspended (after the timers that
/// missed, in order), and dropped, counted in
/// ``Application/droppedAppWorkCount``, when no run of the app can take it
/// (not launched yet, or terminated).
///
/// A Sendable handle for integrations that run other code on the loop as
/// the app's (MainLoopNIO's gated `EventLoop`): made on the loop thread,
/// passed anywhere, used on the loop thread. It holds the application
/// weakly; once the application is gone, work is dropped.
public struct AppWorkGate: Sendable {
    private let application: LoopBound<WeakApplication>

    /// The application's loop.
    public var loop: MainRunLoop { application.loop }

    /// A gate for `application`.
    /// - Precondition: called on the application's loop thread.
    public init(_ application: Application) {
        self.application = LoopBound(WeakApplication(application), loop: application.loop)
    }

    /// Runs `work` now, defers it or drops it, as described above.
    /// - Precondition: called on the loop thread.
    public func run(_ work: @escaping () -> Void) {
        guard let application = application.value.application else { return }
        guard let run = application.currentRun else {
            application.droppedAppWorkCount += 1
            return
        }
        if application.state.runsAppCode { work() } else { run.deferWork(work) }
    }

    /// Whether this gate runs work for `application`.
    /// - Precondition: called on the loop thread.
    public func belongs(to application: Application) -> Bool {
        self.application.value.application === application
    }
}

/// A global actor whose code runs on a process-wide main loop.
///
/// The loop is created on first use on its own thread and
/// runs for the life of the process; reach it with ``loop`` to add timers or
/// sources from isolated code.
///
/// ```swift
/// @MainLoopActor func refresh() { /* runs on the loop thread */ }
/// ```
@globalActor
public actor MainLoopActor {
    /// The shared actor instance.
    public static let shared = MainLoopActor()

    private static let thread: LoopThread = {
        do { return try LoopThread.start() } catch {
            fatalError("MainLoopActor could not start its loop: \(error)")
        }
    }()

    /// The loop that runs `@MainLoopActor` code.
    public static var loop: MainRunLoop { thread.loop }

    /// Runs the actor's jobs on the shared loop.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        Self.loop.executor.asUnownedSerialExecutor()
    }

    /// Runs `body` isolated to the main loop and returns its result.
    public static func run<T: Sendable>(_ body: @MainLoopActor @Sendable () throws -> T) async rethrows -> T {
        try await body()
    }
}

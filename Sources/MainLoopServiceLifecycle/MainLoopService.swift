import Glibc
import MainLoopKit
import ServiceLifecycle

/// A MainLoop application as a swift-service-lifecycle `Service`: run it
/// in a `ServiceGroup` beside your other services.
///
/// `run()` starts a loop on its own thread (``/MainLoop/LoopThread``), builds the
/// application there with your `setUp` closure, launches it, and waits.
/// Graceful shutdown (the group's `gracefulShutdownSignals`, or another
/// service ending) maps onto the lifecycle: `terminate` (willTerminate, once,
/// if the app runs code), then the loop stops and its thread ends, then
/// `run()` returns. Cancellation does the same.
///
/// **Signals.** A `ServiceGroup` owns the signals it is configured with;
/// the service reserves SIGTERM, SIGINT and SIGHUP for it
/// (``/MainLoop/MainRunLoop/reserveSignals(_:for:)``), so no loop in the process takes
/// them (an `addSignal` for one fails with
/// ``/MainLoop/MainLoopError/signalReserved(signal:owner:)`` rather than stealing it,
/// which made the group fail with `ServiceGroupError`).
public final class MainLoopService: Service, Sendable {
    /// The signals a `ServiceGroup` is expected to own.
    public static let groupSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    private let setUp: @Sendable (MainRunLoop) throws -> Application
    private let launch: LifecycleCommand
    private let logger: Logger

    /// - Parameters:
    ///   - launch: `.launch` or `.launchInBackground`.
    ///   - logger: where starting and stopping are logged.
    ///   - setUp: runs on the loop thread; builds the application (its
    ///     delegate, sources, observers) without launching it.
    public init(launch: LifecycleCommand = .launch, logger: Logger,
                setUp: @escaping @Sendable (MainRunLoop) throws -> Application) {
        precondition(launch == .launch || launch == .launchInBackground, "launch must be .launch or .launchInBackground")
        self.launch = launch
        self.logger = logger
        self.setUp = setUp
        MainRunLoop.reserveSignals(Self.groupSignals, for: "the ServiceGroup (swift-service-lifecycle)")
    }

    /// Runs the application until graceful shutdown or cancellation.
    /// - Throws: what `setUp` or the launch threw (the loop is stopped then).
    public func run() async throws {
        let thread = try LoopThread.start()
        let application: ApplicationHandle
        do {
            application = try await onLoop(thread) { [setUp, launch] loop in
                let application = try setUp(loop)
                try application.perform(launch)
                return ApplicationHandle(application)
            }
        } catch {
            // The setUp error is the one to throw; a failure to stop is logged.
            do { try thread.stopAndJoin() } catch let stopError { logger.error("stopping the loop after a failed setUp: \(stopError)") }
            throw error
        }
        logger.info("MainLoop application running", metadata: ["state": "\(launch)"])
        // Returns on graceful shutdown; throws CancellationError on cancellation.
        // Either way the app is terminated and the loop stopped.
        let reason: String
        do {
            try await gracefulShutdown()
            reason = "graceful shutdown"
        } catch {
            reason = "cancellation"
        }
        let logger = self.logger
        let state = try await onLoop(thread) { _ in
            let app = application.application
            if app.state != .notRunning {
                do { try app.perform(.terminate) } catch { logger.error("terminate: \(error)") }
            }
            return app.state
        }
        try thread.stopAndJoin()
        logger.info("MainLoop application stopped", metadata: ["reason": "\(reason)", "state": "\(state)"])
    }

    /// Runs `body` on the loop thread and waits for it without blocking a
    /// cooperative thread.
    private func onLoop<Value: Sendable>(_ thread: LoopThread,
                                         _ body: @escaping @Sendable (MainRunLoop) throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try thread.loop.execute {
                    continuation.resume(with: Result { try body(thread.loop) })
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

/// Carries the loop-bound application between the loop thread's closures
/// (it is only touched there).
private struct ApplicationHandle: @unchecked Sendable {
    let application: Application
    init(_ application: Application) { self.application = application }
}

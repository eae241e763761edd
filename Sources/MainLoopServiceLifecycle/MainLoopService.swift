import Glibc
import MainLoopKit
import ServiceLifecycle

/// A MainLoop application as a swift-service-lifecycle `Service`: run it
/// in a `ServiceGroup` beside your other services.
///
/// `run()` builds the application on its loop with your `setUp` closure,
/// launches it, and waits. The loop is either a loop thread of its own
/// (``Placement/ownThread``) or the main thread's loop
/// (``Placement/mainLoop``), where `@MainActor` code runs: run the group
/// inside ``/MainLoop/MainRunLoop/runMain(_:)`` then. Graceful shutdown
/// (the group's `gracefulShutdownSignals`, or another service ending) maps
/// onto the lifecycle: `terminate` (willTerminate, once, if the app runs
/// code), then what `setUp` built is released on the loop thread, then an
/// own loop stops and its thread ends, and `run()` returns. Cancellation
/// does the same.
///
/// **A home for loop-bound objects.** `setUp` returns the application and
/// every part that must live as long as it runs (a control server, the
/// Linux sources, a supervisor): ``Running/init(_:keeping:)``. The service
/// keeps them until shutdown and releases them on the loop thread.
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

    /// Where the application's loop runs.
    public enum Placement: Sendable {
        /// A loop thread started by ``run()`` and ended at shutdown.
        case ownThread
        /// ``/MainLoop/MainRunLoop/main``, on the main thread, which you
        /// run (``/MainLoop/MainRunLoop/runMain(_:)`` around the group);
        /// `@MainActor` code runs on it. The service does not stop it.
        case mainLoop
    }

    /// What `setUp` built: the application and the parts kept with it.
    public struct Running {
        /// The application launched by the service.
        public let application: Application
        /// Kept until shutdown, then released on the loop thread.
        public let parts: [AnyObject]

        /// The application, keeping `parts` alive as long as it runs.
        public init(_ application: Application, keeping parts: [AnyObject] = []) {
            self.application = application
            self.parts = parts
        }
    }

    /// How the application is built: on any loop, or by main-actor code.
    private enum SetUp: Sendable {
        case onLoop(@Sendable (MainRunLoop) throws -> Running)
        case onMainActor(@MainActor @Sendable () throws -> Running)
    }

    private let setUp: SetUp
    private let launch: LifecycleCommand
    private let placement: Placement
    private let logger: Logger

    /// - Parameters:
    ///   - launch: `.launch` or `.launchInBackground`.
    ///   - placement: where the loop runs (default: a thread of its own).
    ///   - logger: where starting and stopping are logged.
    ///   - setUp: runs on the loop thread; builds the application (its
    ///     delegate, sources, observers) without launching it, and the parts to keep.
    public init(launch: LifecycleCommand = .launch, placement: Placement = .ownThread, logger: Logger,
                setUp: @escaping @Sendable (MainRunLoop) throws -> Running) {
        precondition(launch == .launch || launch == .launchInBackground, "launch must be .launch or .launchInBackground")
        self.launch = launch
        self.placement = placement
        self.logger = logger
        self.setUp = .onLoop(setUp)
        MainRunLoop.reserveSignals(Self.groupSignals, for: "the ServiceGroup (swift-service-lifecycle)")
    }

    /// A service on the main thread's loop (``Placement/mainLoop``) whose
    /// application is built by main-actor code, e.g. with
    /// ``/AppLifecycle/Application/init(mainActorDelegate:configuration:limits:)``.
    /// Run the group inside ``/MainLoop/MainRunLoop/runMain(_:)``.
    public init(launch: LifecycleCommand = .launch, logger: Logger,
                mainActorSetUp: @escaping @MainActor @Sendable () throws -> Running) {
        precondition(launch == .launch || launch == .launchInBackground, "launch must be .launch or .launchInBackground")
        self.launch = launch
        placement = .mainLoop
        self.logger = logger
        setUp = .onMainActor(mainActorSetUp)
        MainRunLoop.reserveSignals(Self.groupSignals, for: "the ServiceGroup (swift-service-lifecycle)")
    }

    /// Like ``init(launch:placement:logger:setUp:)`` for a `setUp` that
    /// builds only the application (nothing else to keep).
    public convenience init(launch: LifecycleCommand = .launch, placement: Placement = .ownThread, logger: Logger,
                            setUp: @escaping @Sendable (MainRunLoop) throws -> Application) {
        self.init(launch: launch, placement: placement, logger: logger) { loop in Running(try setUp(loop)) }
    }

    /// Runs the application until graceful shutdown or cancellation.
    /// - Throws: what `setUp` or the launch threw (an own loop is stopped then).
    public func run() async throws {
        let thread: LoopThread? = placement == .ownThread ? try LoopThread.start() : nil
        let loop = thread?.loop ?? MainRunLoop.main
        // Where the app and its parts live between the loop's closures.
        let home = LoopBoundBox<Running?>.makeEmpty(loop: loop)
        do {
            try await Self.onLoop(loop) { [setUp, launch] loop in
                switch setUp {
                case .onLoop(let build):
                    home.value = try build(loop)
                case .onMainActor(let build):
                    // On the main loop, whose thread is the main actor's (checked).
                    try MainActor.assumeIsolated { home.value = try build() }
                }
                try home.value?.application.perform(launch)
            }
        } catch {
            // The setUp error is the one to throw; a failure to clean up is logged.
            do {
                try await Self.onLoop(loop) { _ in home.value = nil }
            } catch let releaseError {
                logger.error("releasing what setUp built after it failed: \(releaseError)")
            }
            if let thread {
                do { try thread.stopAndJoin() } catch let stopError { logger.error("stopping the loop after a failed setUp: \(stopError)") }
            }
            throw error
        }
        logger.info("MainLoop application running", metadata: ["state": "\(launch)"])
        // Returns on graceful shutdown; throws CancellationError on cancellation.
        // Either way the app is terminated and its parts released.
        let reason: String
        do {
            try await gracefulShutdown()
            reason = "graceful shutdown"
        } catch {
            reason = "cancellation"
        }
        let logger = self.logger
        let state = try await Self.onLoop(loop) { _ in
            guard let app = home.value?.application else { return AppState.notRunning }
            if app.state != .notRunning {
                do { try app.perform(.terminate) } catch { logger.error("terminate: \(error)") }
            }
            home.value = nil  // the parts go here, on the loop thread
            return app.state
        }
        try thread?.stopAndJoin()
        logger.info("MainLoop application stopped", metadata: ["reason": "\(reason)", "state": "\(state)"])
    }

    /// Runs `body` on the loop thread and waits for it without blocking a
    /// cooperative thread.
    private static func onLoop<Value: Sendable>(_ loop: MainRunLoop,
                                                _ body: @escaping @Sendable (MainRunLoop) throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try loop.execute {
                    continuation.resume(with: Result { try body(loop) })
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

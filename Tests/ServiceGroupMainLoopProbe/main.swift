// A ServiceGroup whose MainLoopService runs the app on the main thread's
// loop (placement .mainLoop), inside MainRunLoop.runMain: a @MainActor
// delegate, a part kept by the service (released on the main thread at
// shutdown), a real SIGTERM owned by the group.
import Glibc
import MainLoopKit
import MainLoopServiceLifecycle
import ServiceLifecycle

/// One line to stdout at once (unbuffered: nothing is lost if the process dies).
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

@MainActor final class AppDelegate: MainActorApplicationDelegate {
    var becameActive = 0

    func applicationDidBecomeActive(_ application: Application) {
        becameActive += 1
        say("didBecomeActive main=\(MainRunLoop.isMainThread)")
        // A real SIGTERM a moment later, from a timer on the loop.
        application.loop.scheduleTimer(after: .milliseconds(200)) { kill(getpid(), SIGTERM) }
    }

    func applicationWillTerminate(_ application: Application) { say("willTerminate main=\(MainRunLoop.isMainThread)") }
}

/// A loop-bound part the service keeps until shutdown.
final class Part {
    deinit { say("part released main=\(MainRunLoop.isMainThread)") }
}

@main
struct ServiceGroupMainLoopProbe {
    static func main() throws {
        var logger = Logger(label: "probe")
        logger.logLevel = .warning
        let service = MainLoopService(logger: logger) { @MainActor in
            .init(try Application(mainActorDelegate: AppDelegate()), keeping: [Part()])
        }
        let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm], cancellationSignals: [],
                                 logger: logger)
        try MainRunLoop.runMain {
            try await group.run()
            say("group finished")
        }
        say("main loop stopped")
    }
}

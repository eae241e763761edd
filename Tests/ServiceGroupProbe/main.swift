// A ServiceGroup that owns SIGTERM, running a MainLoopService; the probe
// sends itself a real SIGTERM once the app is active. Prints one line per
// lifecycle callback and what the loop said about taking SIGTERM itself.
import MainLoopKit
import Glibc
import MainLoopServiceLifecycle
import ServiceLifecycle

/// One line to stdout at once (unbuffered: nothing is lost if the process dies).
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

final class PrintingDelegate: ApplicationDelegate {
    func applicationDidBecomeActive(_ application: Application) {
        say("didBecomeActive")
        // A real SIGTERM, from outside the loop thread, a moment later.
        Thread.detach { usleep(200_000); kill(getpid(), SIGTERM) }
    }
    func applicationWillTerminate(_ application: Application) { say("willTerminate") }
}

enum Thread {
    static func detach(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        pthread_create(&thread, nil, { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, box)
        pthread_detach(thread)
    }
}

/// The delegates made (the application holds its own; this list only counts them).
nonisolated(unsafe) var delegates: [PrintingDelegate] = []

var logger = Logger(label: "probe")
logger.logLevel = .warning
/// `setup-fails`: the application cannot be built; the group must fail with that error.
struct SetupFailure: Error, CustomStringConvertible { var description: String { "the app could not be built" } }
let setupFails = CommandLine.arguments.dropFirst().first == "setup-fails"

let service = MainLoopService(logger: logger) { loop in
    if setupFails { throw SetupFailure() }
    do {
        _ = try loop.addSignal(SIGTERM) { say("the loop took SIGTERM") }
        say("the loop took SIGTERM")
    } catch {
        say("addSignal(SIGTERM): \(error)")
    }
    let application = try Application(loop: loop)
    let delegate = PrintingDelegate()
    delegates.append(delegate)
    application.delegate = delegate
    return application
}
let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm], cancellationSignals: [], logger: logger)
do {
    try await group.run()
    say("group finished")
} catch {
    say("group failed: \(error)")
    exit(1)
}

// A complete service on MainLoop: the process's main thread runs
// `MainRunLoop.main`, and the rest is ordinary Swift concurrency.
//
// - `main()` is synchronous and `@MainActor`: an `async` main would park the
//   main thread in `dispatch_main()`, and no loop would run there.
// - `@MainActor` tasks run on the main loop (libdispatch's main queue is
//   drained by it) and sleep on the loop's clock, `loop.clock`.
// - The application lifecycle gates them: while the app is suspended its
//   main-queue work waits, and system notifications are held; on resume the
//   held notifications arrive first, one merged notification per kind, then
//   the work that waited.
// - Notifications and state changes are read as async sequences.
// - An actor runs on a second loop (a worker thread) through that loop's
//   executor.
// - SIGTERM and SIGINT end it cleanly; `--seconds N` ends it after N seconds.
import MainLoopKit
import Dispatch
import Glibc

/// Counts beats off the main thread: an actor whose executor is a worker
/// loop, so its code runs on that loop's thread, serially.
actor BeatLedger {
    let loop: MainRunLoop
    private(set) var beats = 0

    init(loop: MainRunLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    /// Records one beat; returns the total and whether it ran on the worker loop.
    func record() -> (total: Int, onWorkerLoop: Bool) {
        beats += 1
        return (beats, loop.inLoop)
    }
}

/// The service's options: `--seconds N` (default: run until a signal).
struct Options {
    var seconds: Double?

    init(arguments: [String]) throws {
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            guard argument == "--seconds", let text = rest.popFirst(), let value = Double(text), value > 0, value.isFinite
            else { throw UsageError(message: "Usage: heartbeat-service [--seconds N]   (N > 0)") }
            seconds = value
        }
    }
}

/// A wrong command line.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Writes one line at once (unbuffered: a kill still shows what ran).
func emit(_ line: String, to descriptor: Int32 = STDOUT_FILENO) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}

/// Lines stamped with the milliseconds since the start, on the main loop's clock.
struct Timeline: Sendable {
    let loop: MainRunLoop
    let start: LoopInstant

    func log(_ message: String) {
        let elapsed = (loop.now - start).components
        emit("\(elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000) ms  \(message)")
    }
}

@main
struct HeartbeatService {
    @MainActor
    static func main() throws {
        let options: Options
        do {
            options = try Options(arguments: CommandLine.arguments)
        } catch {
            emit("\(error)", to: STDERR_FILENO)
            exit(2)
        }
        let loop = MainRunLoop.main
        let timeline = Timeline(loop: loop, start: loop.now)
        let worker = try LoopThread.start()
        let ledger = BeatLedger(loop: worker.loop)
        let app = try Application(loop: loop)

        // Async sequences: every orientation notification, every state change.
        // The engine feeds the streams in its own order (held notifications
        // before the resumed app's work); each loop below is a task of its
        // own, so its lines interleave with the others' in the order those
        // tasks get the main actor.
        let orientations = try app.notifications.notifications(of: .orientation)
        let states = app.stateChanges()
        Task { @MainActor in
            do {
                for try await note in orientations {
                    timeline.log("notification \(note.name) \(note.value.jsonText) (merged from \(note.merged))")
                }
            } catch {
                timeline.log("orientation stream ended: \(error)")
            }
        }
        Task { @MainActor in
            do {
                for try await state in states { timeline.log("state \(state)") }
            } catch {
                timeline.log("state stream ended: \(error)")
            }
        }

        // The heartbeat: main-actor code sleeping on the loop's clock. While
        // the app is suspended it does not run; it catches up on resume.
        let heartbeat = Task { @MainActor in
            while !Task.isCancelled {
                do {
                    try await loop.clock.sleep(for: .milliseconds(250))
                } catch {
                    break  // cancelled, or the loop shut down
                }
                let (total, onWorker) = await ledger.record()
                timeline.log("beat \(total) in \(app.state) (ledger on its worker loop: \(onWorker))")
            }
        }

        // A supervisor on another thread drives the lifecycle and changes
        // the device's orientation while the app is suspended.
        let poster = app.poster
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(600)) {
            do {
                try poster.post(.lifecycle(.home))
                try poster.post(.orientation(.landscapeLeft))
                try poster.post(.orientation(.faceUp))
                try poster.post(.orientation(.landscapeRight))
            } catch {
                emit("error: the supervisor could not post: \(error)", to: STDERR_FILENO)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1600)) {
            do {
                try poster.post(.lifecycle(.foreground))
            } catch {
                emit("error: the supervisor could not post: \(error)", to: STDERR_FILENO)
            }
        }

        // Ending: a signal, or the time limit.
        let finish = {
            heartbeat.cancel()
            do {
                if app.state != .notRunning { try app.perform(.terminate) }
            } catch {
                emit("error: terminate failed: \(error)", to: STDERR_FILENO)
            }
            loop.stop()
        }
        let signals = try [SIGTERM, SIGINT].map { number in
            try loop.addSignal(number) {
                timeline.log("signal \(number): terminating")
                finish()
            }
        }
        var limit: LoopTimer?
        if let seconds = options.seconds {
            limit = loop.scheduleTimer(after: .milliseconds(Int64(seconds * 1000))) {
                timeline.log("time limit reached: terminating")
                finish()
            }
        }

        try app.perform(.launch)
        try loop.run()
        limit?.cancel()
        for source in signals { try source.remove() }
        try worker.stopAndJoin()
        timeline.log("stopped cleanly")
    }
}

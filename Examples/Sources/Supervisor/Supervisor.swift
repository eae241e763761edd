// A supervisor on the main loop: two helper processes watched through
// pidfds, the one that crashes restarted (at most three restarts a second:
// a rate-limited restart timer), a log batched and written just before the
// loop sleeps, and on SIGTERM its children stopped by exit handlers.
//
//   swift run --package-path Examples supervisor
import Glibc
import MainLoopKit

/// The supervisor's state: one object, used on the loop thread.
final class Supervisor {
    let loop: MainRunLoop
    private var lines: [String] = []
    private var steady: ChildProcessSource?
    private var flaky: ChildProcessSource?
    private var flakyGeneration = 0
    private var crashedAt: LoopInstant?
    /// Restarts go through one timer whose rate limit allows three a
    /// second: past that, the restart waits for the window to end.
    private var restartTimer: LoopTimer!
    private let quiet = open("/dev/null", O_WRONLY | O_CLOEXEC)

    init(loop: MainRunLoop) throws {
        self.loop = loop
        // The log is written once per pass, when the loop is about to sleep.
        try loop.addObserver(activities: .beforeWaiting) { [unowned self] _ in flush() }
        restartTimer = loop.makeTimer { [unowned self] in startFlaky() }
        restartTimer.setRateLimit(try RateLimit(interval: .seconds(1), burst: 3))
        steady = try spawn("/bin/sleep", "3600") { [unowned self] end in log("steady \(end)") }
        startFlaky()
        // Stopping: the exit work runs when the loop is asked to stop,
        // before run() returns.
        try loop.addExitHandler(priority: .system) { [unowned self] in
            for child in [steady, flaky].compactMap({ $0 }) where !child.isRemoved { kill(child.pid, SIGTERM) }
            log("exit handler: SIGTERM sent to the children still running")
        }
        try loop.executeWhenIdle { [unowned self] in log("supervisor: started steady and flaky #1") }
    }

    /// Whether every child has ended (and been reaped).
    var childrenEnded: Bool { [steady, flaky].allSatisfy { $0?.isRemoved ?? true } }

    func log(_ line: String) { lines.append(line) }

    func flush() {
        guard !lines.isEmpty else { return }
        print(lines.joined(separator: "\n"))
        lines.removeAll()
    }

    private func spawn(_ executable: String, _ arguments: String...,
                       handler: @escaping (ChildProcessTermination) -> Void) throws -> ChildProcessSource {
        try loop.spawnChildProcess(executable: executable, arguments: arguments,
                                   standardOutput: quiet, standardError: quiet, handler: handler)
    }

    private func startFlaky() {
        flakyGeneration += 1
        let generation = flakyGeneration
        if let crashedAt {
            let waited = loop.now - crashedAt > .milliseconds(500)
            log("flaky #\(generation) started (restart \(generation - 1), "
                + (waited ? "held by the rate limit until its window ended)" : "at once)"))
        }
        do {
            // It crashes 50 ms after it starts.
            flaky = try spawn("/bin/sh", "-c", "sleep 0.05; kill -KILL $$") { [unowned self] end in
                log("flaky #\(generation) \(end)")
                crashedAt = loop.now
                if generation < 5 {
                    restartTimer.schedule(after: .zero)
                } else {
                    // Enough: play the service manager and ask to stop.
                    kill(getpid(), SIGTERM)
                }
            }
        } catch {
            log("cannot start flaky: \(error)")
            loop.stop()
        }
    }
}

let loop = MainRunLoop.main
let supervisor = try Supervisor(loop: loop)
let term = try loop.addSignal(SIGTERM) {
    supervisor.log("SIGTERM: stopping")
    loop.stop()
}
try loop.run()
// The children were asked to stop; wait for them to end and be reaped.
while !supervisor.childrenEnded { try loop.runOnce() }
supervisor.flush()
try term.remove()
print("stopped cleanly")

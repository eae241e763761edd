// A test helper, run as a child process by MainQueueTests: code that needs
// the process's main thread (MainRunLoop.main, DispatchQueue.main,
// @MainActor) cannot run inside the test runner, whose main thread is its
// own. Each scenario prints lines; the tests compare them.
import AppLifecycle
import Dispatch
import Glibc
import MainLoop
import SystemNotifications

/// Prints a line at once (unbuffered: a crash still shows what ran).
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
}

/// Whether the caller is on the process's main thread.
func onMainThread() -> Bool { MainRunLoop.isMainThread }

/// Lets main-thread closures read the application: every closure here runs
/// on the main thread (that is what the scenarios check), which is the
/// application's loop thread.
struct MainThreadBound<Value>: @unchecked Sendable {
    let value: Value
}

/// The scenario named on the command line.
let scenario = CommandLine.arguments.dropFirst().first ?? ""

do {
    switch scenario {
    case "fifo": try fifo()
    case "foreground", "wake": try gating(resume: scenario == "foreground" ? .foreground : .wake)
    case "killed": try killedWhileSuspended()
    case "sleep": try realClockSleep()
    case "mainActorApp": try mainActorApp()
    case "runMain": try runMainScenario()
    default:
        say("unknown scenario '\(scenario)'")
        exit(2)
    }
} catch {
    say("error: \(error)")
    exit(1)
}

/// DispatchQueue.main and @MainActor on the real-clock main loop: on the
/// main thread, FIFO among themselves, with the loop's own work.
func fifo() throws {
    let loop = MainRunLoop.main
    DispatchQueue.main.async { say("block 1 main=\(onMainThread()) inLoop=\(loop.inLoop)") }
    Task { @MainActor in say("main actor 1 main=\(onMainThread())") }
    DispatchQueue.main.async { say("block 2") }
    Task { @MainActor in say("main actor 2") }
    try loop.execute { say("loop work main=\(onMainThread())") }
    DispatchQueue.global().async {
        DispatchQueue.main.async { say("block from another thread main=\(onMainThread())") }
        Task { @MainActor in
            say("main actor from another thread main=\(onMainThread())")
            loop.stop()
        }
    }
    try loop.run()
    say("run returned")
}

/// A suspended app on the deterministic main loop: main-queue work waits
/// for the resume and runs after the held notifications, the missed timers
/// and the work posted before it.
func gating(resume: LifecycleCommand) throws {
    let loop = try MainRunLoop.makeMain(deterministic: true)
    let app = try Application(loop: loop)
    let bound = MainThreadBound(value: app)
    try app.notifications.addObserver { say("notification \($0.name) x\($0.merged)") }
    try app.perform(.launch)
    Task { @MainActor in
        do {
            try await loop.clock.sleep(for: .seconds(1))
            say("main actor woke, runs at \(loop.now) in \(bound.value.state)")
        } catch {
            say("sleep failed: \(error)")
        }
    }
    try loop.runUntilIdle()  // the task starts and sleeps
    try app.scheduleTimer(after: .milliseconds(500)) { say("app timer runs at \(loop.now)") }
    try app.post { say("posted work runs at \(loop.now) in \(app.state)") }
    try app.perform(.home)
    say("state \(app.state)")
    DispatchQueue.main.async { say("main block runs at \(loop.now) in \(bound.value.state)") }
    try app.notifications.post(.orientation(.faceUp))
    try loop.advance(by: .seconds(2))
    say("advanced to \(loop.now), nothing ran")
    try app.perform(resume)
    say("resumed")
    try loop.runUntilIdle()
    DispatchQueue.main.async { say("later block runs in \(bound.value.state)") }
    try loop.runUntilIdle()
    say("state \(app.state), main queue held: \(loop.isMainQueueHeld)")
}

/// A killed app's main-queue work waits for the next launch.
func killedWhileSuspended() throws {
    let loop = try MainRunLoop.makeMain(deterministic: true)
    let app = try Application(loop: loop)
    let bound = MainThreadBound(value: app)
    try app.perform(.launch)
    try app.perform(.home)
    DispatchQueue.main.async { say("block runs in \(bound.value.state)") }
    try loop.runUntilIdle()
    try app.perform(.purge)
    try loop.advance(by: .seconds(1))
    say("purged: \(app.state), held: \(loop.isMainQueueHeld)")
    try app.perform(.launch)
    say("launched: \(app.state)")
    try loop.runUntilIdle()
    say("held: \(loop.isMainQueueHeld)")
}

/// @MainActor code sleeping on the real-clock main loop resumes on the main thread, never early.
func realClockSleep() throws {
    let loop = MainRunLoop.main
    Task { @MainActor in
        let start = loop.now
        try await loop.clock.sleep(for: .milliseconds(30))
        let slept = loop.now - start
        say("slept enough: \(slept >= .milliseconds(30)) main=\(onMainThread())")
        loop.stop()
    }
    try loop.run()
}


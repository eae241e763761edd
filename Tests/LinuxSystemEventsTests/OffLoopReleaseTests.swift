import AppLifecycle
import Foundation
import Glibc
import MainLoopKit
import Logging
import MainLoop
import SystemNotifications
import Testing
import TestSupport
@testable import mainloop

/// Hands a loop-bound object from its loop thread to the test thread, where
/// the test drops the last reference.
final class Handoff<Value>: @unchecked Sendable {
    var value: Value?
}

/// Every loop-bound type released on a thread other than its loop's: its
/// cleanup runs on the loop (sources removed, descriptors closed, watches
/// and timers gone), and an event arriving meanwhile finds nobody instead
/// of a dangling reference.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(2))) struct OffLoopReleaseTests {
    /// Runs `body` on the loop thread and waits for its result.
    @discardableResult
    static func onLoop<Value>(_ thread: LoopThread, _ body: @escaping @Sendable () throws -> Value) throws -> Value {
        let result = Handoff<Result<Value, any Error>>()
        let done = DispatchSemaphore(value: 0)
        try thread.loop.execute {
            result.value = Result { try body() }
            done.signal()
        }
        done.wait()
        return try result.value!.get()
    }

    /// The descriptors this process has open.
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// How many descriptors `round` leaves open over `rounds` runs, after
    /// one run to warm up. Exact counts are not reliable even in a child
    /// process: libdispatch opens its timerfds lazily, whenever a timer of
    /// the runtime first needs one. A leak of one descriptor per round shows
    /// as at least `rounds`; the lazy ones are a handful at most.
    static func descriptorsLeaked(rounds: Int, _ round: () throws -> Void) rethrows -> Int {
        try round()
        let before = openDescriptors()
        for _ in 0..<rounds { try round() }
        return openDescriptors() - before
    }

    /// The most descriptors a child may gain over a test's rounds without a leak.
    static let lazilyOpened = 5

    /// Waits until the loop has run everything posted so far (the cleanup hops).
    static func settle(_ thread: LoopThread) throws {
        for _ in 0..<3 { _ = try Self.onLoop(thread) {} }
    }

    /// In a child process, so counting open descriptors is not disturbed by
    /// other tests running meanwhile; with an alarm, so a hang fails the
    /// test instead of the run.
    @Test func fileWatcherReleasedOffTheLoopClosesItsDescriptor() async {
        await #expect(processExitsWith: .success) {
            alarm(20)
            let directory = TemporaryDirectory()
            let thread = try LoopThread.start()
            let fired = Handoff<Int>()
            let handoff = Handoff<FileWatcher>()
            let watched = directory.file("watched")
            let leaked = try OffLoopReleaseTests.descriptorsLeaked(rounds: 40) {
                try OffLoopReleaseTests.onLoop(thread) {
                    let watcher = try FileWatcher(loop: thread.loop)
                    try watcher.watch(watched) { fired.value = (fired.value ?? 0) + 1 }
                    handoff.value = watcher
                }
                handoff.value = nil  // released here, off the loop
                precondition(FileManager.default.createFile(atPath: watched, contents: Data("x".utf8)))
                try OffLoopReleaseTests.settle(thread)
            }
            precondition(leaked <= OffLoopReleaseTests.lazilyOpened, "\(leaked) descriptors left open in 40 rounds")
            precondition(fired.value == nil, "no handler ran after its watcher was released")
            try thread.stopAndJoin()
        }
    }

    @Test func unwatchStopsOneHandlerAndDropsTheWatchWhenUnused() throws {
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop()
        let watcher = try FileWatcher(loop: loop)
        var calls: [String] = []
        let first = try watcher.watch(directory.file("a")) { calls.append("first") }
        try watcher.watch(directory.file("a")) { calls.append("second") }
        #expect(watcher.watchedPaths == [directory.file("a")])
        watcher.unwatch(first)
        #expect(FileManager.default.createFile(atPath: directory.file("a"), contents: Data("x".utf8)))
        for _ in 0..<20 where calls.isEmpty {
            try loop.runUntilIdle()
            usleep(5_000)
        }
        #expect(calls == ["second"])
        #expect(watcher.unwatch(directory.file("a")))
        #expect(watcher.watchedPaths.isEmpty)
        #expect(!watcher.unwatch(directory.file("a")))
    }

    @Test func sourcesReleasedOffTheLoopStopWatching() async {
        await #expect(processExitsWith: .success) {
            alarm(20)
            let directory = TemporaryDirectory()
            let thread = try LoopThread.start()
            let watcherBox = Handoff<FileWatcher>()
            let locale = Handoff<LocaleSource>(), monitor = Handoff<UserDefaultsMonitor>()
            let time = Handoff<SignificantTimeChangeSource>()
            let posted = Handoff<Int>()
            let path = directory.path
            try OffLoopReleaseTests.onLoop(thread) { watcherBox.value = try FileWatcher(loop: thread.loop) }
            let baselineTimers = try OffLoopReleaseTests.onLoop(thread) { thread.loop.scheduledTimerCount }
            let leaked = try OffLoopReleaseTests.descriptorsLeaked(rounds: 40) {
                try OffLoopReleaseTests.onLoop(thread) {
                    let watcher = watcherBox.value!
                    let post: (SystemEvent) -> Void = { _ in posted.value = (posted.value ?? 0) + 1 }
                    locale.value = try LocaleSource(path: path + "/locale", watcher: watcher, post: post)
                    monitor.value = try UserDefaultsMonitor(store: UserDefaultsStore(path: path + "/defaults.json"),
                                                            watcher: watcher, post: post) { _ in }
                    time.value = try SignificantTimeChangeSource(loop: thread.loop, clock: SystemWallClock(), watcher: watcher,
                                                                 zoneFiles: [path + "/localtime"], post: post)
                }
                let watchedCount = try OffLoopReleaseTests.onLoop(thread) { watcherBox.value!.watchedPaths.count }
                precondition(watchedCount == 3)
                locale.value = nil
                monitor.value = nil
                time.value = nil
                try "LANG=fr_FR.UTF-8\n".write(toFile: directory.file("locale"), atomically: true, encoding: .utf8)
                try OffLoopReleaseTests.settle(thread)
                let remaining = try OffLoopReleaseTests.onLoop(thread) { watcherBox.value!.watchedPaths }
                precondition(remaining.isEmpty, "every watch is removed")
                let timers = try OffLoopReleaseTests.onLoop(thread) { thread.loop.scheduledTimerCount }
                precondition(timers == baselineTimers, "the midnight and DST timers are gone")
            }
            precondition(leaked <= OffLoopReleaseTests.lazilyOpened, "\(leaked) descriptors left open in 40 rounds (the clock-set timerfd)")
            try OffLoopReleaseTests.onLoop(thread) { watcherBox.value = nil }
            try thread.stopAndJoin()
        }
    }

    @Test func controlServerReleasedOffTheLoopStopsListening() async {
        await #expect(processExitsWith: .success) {
            alarm(20)
            let directory = TemporaryDirectory()
            let socket = directory.file("control.sock")
            let thread = try LoopThread.start()
            let server = Handoff<ControlServer>()
            let leaked = try OffLoopReleaseTests.descriptorsLeaked(rounds: 40) {
                try OffLoopReleaseTests.onLoop(thread) {
                    server.value = try ControlServer(loop: thread.loop, path: socket, logger: Logger(label: "test")) { _ in ["ok": true] }
                }
                let reply = try ControlClient.send(["query": "state"], to: socket)
                precondition(reply["ok"] == .bool(true))
                server.value = nil
                try OffLoopReleaseTests.settle(thread)
                precondition(!FileManager.default.fileExists(atPath: socket), "the socket file is removed")
                precondition((try? ControlClient.send(["query": "state"], to: socket)) == nil, "nobody answers")
            }
            precondition(leaked <= OffLoopReleaseTests.lazilyOpened, "\(leaked) descriptors left open in 40 rounds")
            try thread.stopAndJoin()
        }
    }

    @Test func serviceHostReleasedOffTheLoopShutsItsSocket() throws {
        let directory = TemporaryDirectory()
        var options = ServiceOptions(socketPath: directory.file("service.sock"))
        options.defaultsFile = directory.file("defaults.json")
        options.localeFile = directory.file("locale")
        options.zoneFiles = [directory.file("localtime")]
        options.detectClockSet = false
        let thread = try LoopThread.start()
        let host = Handoff<ServiceHost>()
        let settings = options
        try Self.onLoop(thread) {
            let service = try ServiceHost(options: settings, loop: thread.loop, logger: Logger(label: "test")) { _ in }
            try service.start()
            host.value = service
        }
        #expect(try ControlClient.send(["query": "state"], to: options.socketPath)["state"] == "active")
        host.value = nil
        try Self.settle(thread)
        #expect(!FileManager.default.fileExists(atPath: options.socketPath))
        try thread.stopAndJoin()
    }

    /// An application dropped on another thread with an app timer pending:
    /// the timer is cancelled on the loop; nothing fires into a freed object.
    @Test func applicationReleasedOffTheLoopWithAPendingAppTimer() throws {
        let thread = try LoopThread.start()
        let fired = Handoff<Bool>()
        let app = Handoff<Application>()
        let baseline = try Self.onLoop(thread) { thread.loop.scheduledTimerCount }
        try Self.onLoop(thread) {
            let application = try Application(loop: thread.loop)
            try application.perform(.launch)
            try application.scheduleTimer(after: .milliseconds(30)) { fired.value = true }
            app.value = application
        }
        app.value = nil
        usleep(80_000)
        try Self.settle(thread)
        #expect(fired.value == nil)
        #expect(try Self.onLoop(thread) { thread.loop.scheduledTimerCount } == baseline)
        try thread.stopAndJoin()
    }
}

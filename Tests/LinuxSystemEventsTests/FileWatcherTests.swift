import Glibc
import MainLoop
import MainLoopKit
import Testing
import TestSupport

/// The inotify watcher under everything that watches files (zone, locale,
/// defaults).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct FileWatcherTests {
    /// Runs the loop until `done` or 10 s.
    private func run(_ loop: MainRunLoop, until done: @escaping () -> Bool) throws {
        let check = loop.scheduleTimer(after: .milliseconds(5), repeating: .milliseconds(5)) { if done() { loop.stop() } }
        let limit = loop.scheduleTimer(after: .seconds(10)) { loop.stop() }
        try loop.run()
        check.cancel()
        limit.cancel()
    }

    private func touch(_ path: String) {
        let descriptor = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        #expect(descriptor >= 0)
        close(descriptor)
    }

    /// Each file's handlers, in registration order, once for one read
    /// batch, and only for that file (unwatching is in OffLoopReleaseTests).
    @Test func handlersRunForTheirOwnFileOnly() throws {
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop()
        let watcher = try FileWatcher(loop: loop)
        var calls: [String] = []
        try watcher.watch(directory.file("a")) { calls.append("a1") }
        try watcher.watch(directory.file("a")) { calls.append("a2") }
        try watcher.watch(directory.file("b")) { calls.append("b") }
        #expect(watcher.watchedPaths == [directory.file("a"), directory.file("b")])
        touch(directory.file("a"))
        touch(directory.file("unwatched"))
        try run(loop) { !calls.isEmpty }
        #expect(calls == ["a1", "a2"], "one call each for one read batch, none for b")
        #expect(watcher.unwatch(directory.file("a")))
        #expect(watcher.watchedPaths == [directory.file("b")], "b's watch on the same directory stays")
    }

    /// Regression: when the kernel's event queue overflowed (a burst of
    /// changes to other files in a watched directory: a package install in
    /// /etc), the events after the overflow were gone, the watched file's
    /// among them, and nobody was told. Now an overflow calls every handler
    /// once (each then reads its file again, which is what they do anyway).
    @Test func anOverflowedQueueCallsEveryHandler() throws {
        let queueLimit = try #require(Int(try FileContents.text("/proc/sys/fs/inotify/max_queued_events")
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        // Two events (IN_CREATE, IN_CLOSE_WRITE) per file made below.
        try #require(queueLimit <= 1 << 17, "a queue this long takes too many files to overflow in a test")
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop()
        let watcher = try FileWatcher(loop: loop)
        var calls: [String] = []
        try watcher.watch(directory.file("watched")) { calls.append("watched") }
        try watcher.watch(directory.file("other")) { calls.append("other") }
        for index in 0..<(queueLimit / 2 + 64) { touch(directory.file("burst-\(index)")) }
        touch(directory.file("watched"))  // its event is lost in the overflow
        try run(loop) { !calls.isEmpty }
        #expect(calls == ["watched", "other"])
    }
}

import Glibc
import MainLoop
import Testing
import TestSupport

/// Path watches on real directories: writes, replacements, directories
/// that appear later, FIFOs, overflows, rate limits and misuse.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct PathSourceTests {
    /// A fresh directory under /tmp, removed with everything in it.
    final class Scratch {
        let path: String
        init() {
            var template = Array("/tmp/mainloop-paths-XXXXXX".utf8CString)
            path = String(cString: mkdtemp(&template)!)
        }
        deinit { runCommand("/bin/rm", "-rf", path) }
        func callAsFunction(_ name: String) -> String { path + "/" + name }
    }

    /// Writes `text` to `path` (created or truncated).
    static func write(_ text: String, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(fd >= 0, "open \(path)")
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        close(fd)
    }

    /// Runs `loop` until `condition` holds (each runOnce waits for an event).
    private func run(_ loop: MainRunLoop, until condition: () -> Bool) throws {
        // A timer bounds each wait, so a missing event fails the condition
        // instead of hanging the test.
        let deadline = loop.now + .seconds(20)
        let tick = loop.scheduleTimer(after: .milliseconds(50), repeating: .milliseconds(50)) {}
        defer { tick.cancel() }
        while !condition(), loop.now < deadline { try loop.runOnce() }
    }

    @Test func aFileIsFollowedThroughWritesReplacementsAndRemoval() throws {
        let scratch = Scratch()
        let loop = try MainRunLoop()
        let file = scratch("settings.json")
        PathSourceTests.write("1", to: file)
        var seen: [PathEvent] = []
        let source = try loop.addPath(file, events: [.created, .deleted, .modified]) { seen.append($0) }
        #expect(!source.watchesDirectoryEntries)
        PathSourceTests.write("2", to: file)
        PathSourceTests.write("noise", to: scratch("other"))
        try run(loop) { seen.contains(PathEvent(.modified, name: "settings.json")) }
        // Replaced by rename, as atomic writers do: the new file is followed.
        PathSourceTests.write("3", to: scratch("settings.json.tmp"))
        #expect(rename(scratch("settings.json.tmp"), file) == 0)
        try run(loop) { seen.contains(PathEvent(.created, name: "settings.json")) }
        PathSourceTests.write("4", to: file)
        seen.removeAll()
        try run(loop) { seen.contains(PathEvent(.modified, name: "settings.json")) }
        #expect(unlink(file) == 0)
        try run(loop) { seen.contains(PathEvent(.deleted, name: "settings.json")) }
        #expect(!seen.contains { $0.name != "settings.json" }, "other files are not reported")
        try source.remove()
        #expect(throws: MainLoopError.sourceRemoved) { try source.remove() }
    }

    @Test func aDirectoryReportsItsEntries() throws {
        let scratch = Scratch()
        let loop = try MainRunLoop()
        var seen: [PathEvent] = []
        let source = try loop.addPath(scratch.path, events: [.created, .deleted]) { seen.append($0) }
        #expect(source.watchesDirectoryEntries)
        PathSourceTests.write("x", to: scratch("a"))
        #expect(mkdir(scratch("b"), 0o755) == 0)
        #expect(unlink(scratch("a")) == 0)
        try run(loop) { seen.count >= 3 }
        #expect(seen == [PathEvent(.created, name: "a"), PathEvent(.created, name: "b"), PathEvent(.deleted, name: "a")])
        // The directory itself goes and comes back.
        runCommand("/bin/rm", "-rf", scratch.path)
        try run(loop) { seen.contains(PathEvent(.deleted, name: "")) }
        #expect(mkdir(scratch.path, 0o700) == 0)
        try run(loop) { seen.contains(PathEvent(.created, name: "")) }
        try source.remove()
    }

    /// Watching a file in directories that do not exist yet: the source
    /// waits on the nearest ancestor and follows them as they appear.
    @Test func directoriesThatAppearLaterAreFollowed() throws {
        let scratch = Scratch()
        let loop = try MainRunLoop()
        let file = scratch("a/b/c/state")
        var seen: [PathEvent] = []
        let source = try loop.addPath(file) { seen.append($0) }
        #expect(mkdir(scratch("a"), 0o755) == 0)
        try loop.runUntilIdle()
        #expect(mkdir(scratch("a/b"), 0o755) == 0 && mkdir(scratch("a/b/c"), 0o755) == 0)
        PathSourceTests.write("ready", to: file)
        try run(loop) { seen.contains(PathEvent(.created, name: "state")) }
        seen.removeAll()
        PathSourceTests.write("again", to: file)
        try run(loop) { seen.contains(PathEvent(.modified, name: "state")) }
        // Its directory removed: the file is reported gone, and the source
        // waits for the directory again.
        runCommand("/bin/rm", "-rf", scratch("a/b"))
        try run(loop) { seen.contains(PathEvent(.deleted, name: "state")) }
        #expect(mkdir(scratch("a/b"), 0o755) == 0 && mkdir(scratch("a/b/c"), 0o755) == 0)
        PathSourceTests.write("back", to: file)
        seen.removeAll()
        try run(loop) { seen.contains(PathEvent(.created, name: "state")) }
        try source.remove()
    }

    /// A FIFO put in place of the watched file is reported like any file:
    /// the source never opens it, so nothing blocks.
    @Test func aFIFOInPlaceOfTheFileDoesNotBlock() throws {
        let scratch = Scratch()
        let loop = try MainRunLoop()
        var seen: [PathEvent] = []
        let source = try loop.addPath(scratch("pipe")) { seen.append($0) }
        #expect(mkfifo(scratch("pipe"), 0o644) == 0)
        try run(loop) { seen.contains(PathEvent(.created, name: "pipe")) }
        #expect(chmod(scratch("pipe"), 0o600) == 0)
        try run(loop) { seen.contains(PathEvent(.attributes, name: "pipe")) }
        try source.remove()
    }

    /// More events than the kernel's queue holds (fs.inotify.max_queued_events)
    /// before the loop reads: one overflow to every source, then events again.
    @Test(.enabled(if: PathSourceTests.queueLimit.map { $0 <= 65_536 } ?? false))
    func anOverflowedQueueIsReported() throws {
        let scratch = Scratch()
        let loop = try MainRunLoop()
        var seen: [PathEvent] = []
        var other: [PathEvent] = []
        let source = try loop.addPath(scratch.path, events: [.created]) { seen.append($0) }
        let second = try loop.addPath(scratch("quiet"), events: [.created]) { other.append($0) }
        for index in 0...(PathSourceTests.queueLimit! / 2 + 16) {
            let name = scratch("f\(index)")
            close(open(name, O_WRONLY | O_CREAT, 0o644))
            unlink(name)
        }
        try run(loop) { seen.contains(PathEvent(.overflow, name: "")) && other.contains(PathEvent(.overflow, name: "")) }
        try loop.runUntilIdle()
        seen.removeAll()
        PathSourceTests.write("x", to: scratch("after"))
        try run(loop) { seen.contains(PathEvent(.created, name: "after")) }
        try source.remove()
        try second.remove()
    }

    static let queueLimit: Int? = {
        let fd = open("/proc/sys/fs/inotify/max_queued_events", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = read(fd, &buffer, buffer.count)
        return count > 0 ? Int(String(decoding: buffer.prefix(count).filter { $0 >= 48 && $0 <= 57 }, as: UTF8.self)) : nil
    }()

    /// On the manual clock: two events per second; the rest wait, merged.
    @Test func aRateLimitHoldsEventsUntilTheWindowEnds() throws {
        let scratch = Scratch()
        let loop = try MainRunLoop(deterministic: true)
        var seen: [String] = []
        let source = try loop.addPath(scratch.path, events: [.created]) { seen.append($0.name) }
        try source.setRateLimit(RateLimit(interval: .seconds(1), burst: 2))
        for name in ["a", "b", "c", "d", "e"] { PathSourceTests.write(name, to: scratch(name)) }
        try loop.runUntilIdle()
        #expect(seen == ["a", "b"] && source.isPaused)
        try loop.advance(by: .seconds(1))
        #expect(seen == ["a", "b", "c", "d"])
        try loop.advance(by: .seconds(1))
        #expect(seen == ["a", "b", "c", "d", "e"])
        try source.remove()
    }

    /// Held events merge per entry and kind, in the order they last came:
    /// an entry's last event is its state.
    @Test func mergedEventsEndWithTheEntrysState() throws {
        let scratch = Scratch()
        let loop = try MainRunLoop()
        var seen: [PathEvent] = []
        let source = try loop.addPath(scratch.path, events: [.created, .deleted]) { seen.append($0) }
        // A source not held shows when the kernel's events have been read.
        var witnessed: [PathEvent] = []
        let witness = try loop.addPath(scratch.path, events: [.created, .deleted]) { witnessed.append($0) }
        source.setHolding(true)
        PathSourceTests.write("1", to: scratch("note"))
        #expect(unlink(scratch("note")) == 0)
        PathSourceTests.write("2", to: scratch("note"))
        try run(loop) { witnessed.last == PathEvent(.created, name: "note") && witnessed.contains(PathEvent(.deleted, name: "note")) }
        #expect(seen.isEmpty && source.isHolding)
        source.setHolding(false)
        #expect(seen == [PathEvent(.deleted, name: "note"), PathEvent(.created, name: "note")])
        try source.remove()
        try witness.remove()
    }

    @Test func whatCannotBeWatchedIsRefused() throws {
        let scratch = Scratch()
        let loop = try MainRunLoop()
        #expect(throws: MainLoopError.invalidArgument("a path to watch must be a non-empty string without NUL")) {
            try loop.addPath("") { _ in }
        }
        // A symbolic link loop on the way: not a missing directory to wait for.
        #expect(symlink("loop", scratch("loop")) == 0)
        #expect(throws: MainLoopError.system(operation: "inotify_add_watch(\(scratch("loop"))) for \(scratch("loop/file"))",
                                             errno: ELOOP)) {
            try loop.addPath(scratch("loop/file")) { _ in }
        }
        // Relative paths are made absolute and clean.
        let source = try loop.addPath("/tmp/./x/../\(scratch.path.split(separator: "/").last!)//y") { _ in }
        #expect(source.path == scratch("y"))
        try source.remove()
    }

    /// Handlers that remove their own source and add others while a batch
    /// is being delivered.
    @Test func handlersAddAndRemoveSourcesWhileDelivering() throws {
        let scratch = Scratch()
        let loop = try MainRunLoop()
        var log: [String] = []
        var first: PathSource!
        first = try loop.addPath(scratch.path, events: [.created]) { event in
            log.append("first \(event.name)")
            try? first.remove()
            _ = try? loop.addPath(scratch.path, events: [.created]) { log.append("added \($0.name)") }
        }
        PathSourceTests.write("1", to: scratch("one"))
        PathSourceTests.write("2", to: scratch("two"))
        try run(loop) { !log.isEmpty }
        PathSourceTests.write("3", to: scratch("three"))
        try run(loop) { log.contains("added three") }
        #expect(log == ["first one", "added three"])
    }
}

/// Runs a command to completion (test setup and cleanup).
func runCommand(_ arguments: String...) {
    var pid: pid_t = 0
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    guard posix_spawn(&pid, arguments[0], nil, nil, argv, environ) == 0 else { return }
    waitpid(pid, nil, 0)
}

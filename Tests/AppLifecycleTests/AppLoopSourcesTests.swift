import AppLifecycle
import Glibc
import MainLoop
import Testing
import TestSupport

/// Idle work, child processes and path watches used through the
/// application are app code: nothing of theirs runs while it is suspended.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct AppLoopSourcesTests {
    /// Runs the harness's loop until `condition` holds (a child's end or
    /// an inotify event arrives from outside the manual clock).
    private func runUntil(_ h: Harness, _ condition: () -> Bool) throws {
        for _ in 0..<20_000 where !condition() {
            try h.loop.runUntilIdle()
            if !condition() { usleep(500) }
        }
    }

    @Test func appIdleWorkWaitsForTheResume() throws {
        let h = try Harness()
        try h.perform(.launch)
        try h.app.addIdle { [unowned h] in h.appCode("idle") }
        try h.app.executeWhenIdle { [unowned h] in h.appCode("once") }
        try h.loop.runUntilIdle()
        #expect(h.take().suffix(2) == ["idle", "once"])
        try h.perform(.home)
        try h.loop.runUntilIdle()
        #expect(!h.take().contains("idle"))
        try h.perform(.foreground)
        try h.loop.runUntilIdle()
        #expect(h.take().last == "idle")
        #expect(h.appCodeWhileNotRunning.isEmpty)
    }

    @Test func aChildThatEndsWhileSuspendedIsReportedAtTheResume() throws {
        let h = try Harness()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        try h.perform(.launch)
        // The child ends when its standard input closes.
        let child = try h.app.spawnChildProcess(executable: "/bin/sh", arguments: ["-c", "read line; exit 5"],
                                                standardInput: fds[0]) { [unowned h] end in h.appCode("child \(end)") }
        try h.perform(.home)
        close(fds[1])
        try runUntil(h) { child.isRemoved }
        #expect(!h.take().contains { $0.hasPrefix("child") }, "reaped, not reported while suspended")
        try h.perform(.foreground)
        try h.loop.runUntilIdle()
        #expect(h.take().contains("child exited with code 5"))
        #expect(h.appCodeWhileNotRunning.isEmpty)
    }

    @Test func pathChangesWhileSuspendedAreHeldMergedAndDeliveredAtTheResume() throws {
        var template = Array("/tmp/mainloop-app-paths-XXXXXX".utf8CString)
        let directory = String(cString: mkdtemp(&template)!)
        defer { _ = rmdir(directory) }
        let h = try Harness()
        try h.perform(.launch)
        let source = try h.app.addPath(directory, events: [.created, .deleted]) { [unowned h] in h.appCode("path \($0)") }
        // A loop source on the same directory (not app code, so not held)
        // shows when the kernel's events have been read.
        var seenByLoop = 0
        let witness = try h.loop.addPath(directory, events: [.deleted]) { _ in seenByLoop += 1 }
        try h.perform(.home)
        let file = directory + "/note"
        for _ in 0..<3 {
            close(open(file, O_WRONLY | O_CREAT, 0o644))
            unlink(file)
        }
        try runUntil(h) { seenByLoop >= 1 }
        #expect(!h.take().contains { $0.hasPrefix("path") })
        try h.perform(.foreground)
        try h.loop.runUntilIdle()
        #expect(h.take().filter { $0.hasPrefix("path") } == ["path created note", "path deleted note"])
        #expect(h.appCodeWhileNotRunning.isEmpty)
        // The run's end removes the app's path sources.
        try h.perform(.terminate)
        #expect(source.isRemoved)
        try witness.remove()
    }
}

import Foundation
import Glibc

// Waits for child processes with a deadline. A test never blocks forever
// on a child: a hung child is killed and its test fails, named, where a
// bare `waitpid` would hang the whole run (two such hangs hold both of
// Swift Testing's threads on this machine, and then no test finishes at
// all). `TestProcess.waitForExit(within:diagnose:)` does the same for a
// `TestProcess`.

/// Reaps child `pid` (one started with `posix_spawn`, not a `TestProcess`),
/// waiting at most `seconds`; a child still running then is described
/// (`printStacks`, unless `diagnose` is false), killed (SIGKILL) and reaped.
/// - Returns: its exit code, or 128 + the signal that ended it (as a shell
///   reports it), and whether it ended by itself within `seconds`.
public func reap(_ pid: pid_t, within seconds: Double = 60, diagnose: Bool = true) -> (status: Int32, inTime: Bool) {
    let deadline = Date().addingTimeInterval(seconds)
    var status: Int32 = 0
    var inTime = true
    while true {
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { break }
        if result < 0 && errno != EINTR { return (-1, inTime) }
        if inTime && Date() >= deadline {
            inTime = false
            if diagnose { printStacks(of: pid, after: seconds) }
            kill(pid, SIGKILL)
        }
        usleep(5_000)
    }
    let signal = status & 0x7f
    return (signal == 0 ? (status >> 8) & 0xff : 128 + signal, inTime)
}

/// Prints what a child that did not exit was doing (its state and, where
/// gdb is installed, every thread's stack) to stderr, before it is
/// killed: a hang that happens once in a hundred runs is then explained
/// by the run it happened in. `system()` reaps gdb itself.
public func printStacks(of pid: pid_t, after seconds: Double) {
    let state = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?
        .split(separator: "\n").first { $0.hasPrefix("State:") } ?? "State: unknown"
    FileHandle.standardError.write(Data("== pid \(pid) did not exit within \(seconds) s (\(state)); killing it\n".utf8))
    guard access("/usr/bin/gdb", X_OK) == 0 else { return }
    _ = system("timeout 30 /usr/bin/gdb -batch -p \(pid) -ex 'thread apply all bt' 1>&2 2>/dev/null")
}

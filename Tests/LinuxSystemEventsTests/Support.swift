import Foundation
import Glibc
import TestSupport

/// A fresh temporary directory, removed on deinit.
final class TemporaryDirectory {
    let path: String
    init() {
        var template = Array("/tmp/mainloop-test-XXXXXX".utf8CString)
        path = String(cString: mkdtemp(&template)!)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
}

/// The `mainloop` executable built beside this test bundle, or the one
/// `$MAINLOOP_TOOL` names (CI runs the tool's tests against the static
/// binary to deploy too: scripts/build-static.sh).
enum BuiltTool {
    static var path: String {
        if let chosen = ProcessInfo.processInfo.environment["MAINLOOP_TOOL"], !chosen.isEmpty { return chosen }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        // The xctest bundle may be a directory (…/MainLoopPackageTests.xctest/…) or a file.
        while !directory.path.hasSuffix("/debug") && !directory.path.hasSuffix("/release") && directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("mainloop").path
    }

    /// Runs `mainloop ARGS...` to completion.
    @discardableResult
    static func run(_ arguments: [String], environment: [String: String] = [:], prefix: [String] = []) throws
        -> (status: Int32, output: String, error: String) {
        let process = TestProcess()
        if prefix.isEmpty {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: prefix[0])
            process.arguments = Array(prefix.dropFirst()) + [path] + arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        return try runToCompletion(process)
    }
}

/// Runs `executable ARGS...` to completion: its status, stdout and stderr.
@discardableResult
func runToCompletion(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws
    -> (status: Int32, output: String, error: String) {
    let process = TestProcess()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    return try runToCompletion(process)
}

/// Runs a configured process to completion: its status, stdout and stderr
/// (stderr is drained on a thread of its own, so neither pipe can fill and
/// stall the child). A child still running after `timeout` seconds is
/// killed (SIGKILL, status 9), and its stderr says so: a hung child fails
/// its test instead of hanging the run.
func runToCompletion(_ process: TestProcess, timeout: Double = 60) throws -> (status: Int32, output: String, error: String) {
    let output = Pipe(), error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let timedOut = Locked(false)
    let watchdog = DispatchWorkItem {
        guard process.isRunning else { return }
        timedOut.mutate { $0 = true }
        kill(process.processIdentifier, SIGKILL)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
    defer { watchdog.cancel() }
    let errorText = Locked(Data())
    let drain = TestThread { errorText.mutate { $0 = error.fileHandleForReading.readDataToEndOfFile() } }
    let out = output.fileHandleForReading.readDataToEndOfFile()
    drain.join()
    process.waitForExit(within: 10)
    var errors = String(decoding: errorText.value, as: UTF8.self)
    if timedOut.value { errors += "\n(killed by the test: still running after \(timeout) s)" }
    guard let status = process.statusIfEnded else { return (-1, String(decoding: out, as: UTF8.self), errors + "\n(no exit seen)") }
    return (status, String(decoding: out, as: UTF8.self), errors)
}

/// Polls `condition` up to `timeout` seconds.
func eventually(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// Writes a file atomically enough for tests (write + rename).
func writeFile(_ path: String, _ text: String) {
    try! text.write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
    rename(path + ".tmp", path)
}

func copyFile(_ source: String, _ destination: String) {
    let data = FileManager.default.contents(atPath: source)!
    _ = FileManager.default.createFile(atPath: destination + ".tmp", contents: data)
    rename(destination + ".tmp", destination)
}

/// Calls `body` with a `sockaddr_un` for `path`, for `bind` or `connect`.
func withUnixAddress<Result>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

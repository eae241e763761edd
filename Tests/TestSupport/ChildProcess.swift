import Foundation

/// An executable built beside the test bundle (in the same `debug` or
/// `release` products folder), run as a child process.
public enum BuiltExecutable {
    /// The path of the executable `name` beside the running test bundle.
    public static func path(_ name: String) -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        // The test bundle may be a directory (…/MainLoopPackageTests.xctest/…) or a file.
        while !directory.path.hasSuffix("/debug") && !directory.path.hasSuffix("/release") && directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent(name).path
    }

    /// Runs `name ARGS...` to completion (killed after `timeout` seconds).
    /// - Returns: the exit status (or the signal, negated) and standard output and error.
    public static func run(_ name: String, _ arguments: [String], timeout: Double = 30) throws
        -> (status: Int32, output: String, error: String) {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: path(name))
        process.arguments = arguments
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // SIGKILL, not SIGTERM: a hung child may not answer SIGTERM.
        let watchdog = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        // stderr drained on a thread of its own, so neither pipe can fill and stall the child.
        nonisolated(unsafe) var err = Data()
        let drain = TestThread { err = error.fileHandleForReading.readDataToEndOfFile() }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        drain.join()
        process.waitForExit(within: 10)
        watchdog.cancel()
        guard !process.isRunning else { return (-SIGKILL, String(decoding: out, as: UTF8.self), "still running after SIGKILL") }
        let status = process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
        return (status, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

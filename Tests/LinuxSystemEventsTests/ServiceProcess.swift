import Foundation
import Glibc
import TestSupport
import MainLoopKit
import MainLoopJSON

/// `mainloop run` as a real process on a socket in a private directory,
/// started and ready (its socket exists) when `init` returns.
final class ServiceProcess {
    let directory: TemporaryDirectory
    let socket: String
    let process = TestProcess()

    /// - Parameters:
    ///   - directory: where the socket, defaults, locale and zone files go
    ///     (a caller that prepares files there passes its own).
    ///   - extraArguments: more `mainloop run` options.
    ///   - prefix: a launcher and its arguments run before the tool, as in
    ///     ``BuiltTool/run(_:environment:prefix:)`` (e.g. a shell that sets a ulimit).
    ///   - standardOutput, standardError: a `FileHandle` or `Pipe`.
    init(directory: TemporaryDirectory = TemporaryDirectory(), extraArguments: [String] = [], prefix: [String] = [],
         standardOutput: Any = FileHandle.nullDevice, standardError: Any = FileHandle.nullDevice,
         environment: [String: String] = [:], waitForSocket: Bool = true) throws {
        self.directory = directory
        socket = directory.file("s.sock")
        let arguments = Self.runArguments(in: directory) + extraArguments
        process.executableURL = URL(fileURLWithPath: prefix.first ?? BuiltTool.path)
        process.arguments = prefix.isEmpty ? arguments : Array(prefix.dropFirst()) + [BuiltTool.path] + arguments
        process.standardOutput = standardOutput
        process.standardError = standardError
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        try process.run()
        guard !waitForSocket || eventually({ FileManager.default.fileExists(atPath: socket) }) else {
            process.terminate()
            throw TestFailure( "the service did not create its socket")
        }
    }

    /// `run` with the socket, defaults, locale and zone files in `directory`
    /// (the socket is `s.sock` there).
    static func runArguments(in directory: TemporaryDirectory) -> [String] {
        ["run", "--socket", directory.file("s.sock"), "--defaults-file", directory.file("d.json"),
         "--locale-file", directory.file("locale"), "--zone-file", directory.file("localtime")]
    }

    /// SIGTERM, then the exit status (or a signal's number). A service
    /// that has not exited 60 s later is killed and reported as -1.
    func terminate() -> Int32 {
        if process.isRunning { process.terminate() }
        guard process.waitForExit(), let status = process.statusIfEnded else { return -1 }
        return status
    }

    /// The first `ok` reply to `{"query":"state"}` within `seconds`, asked
    /// every 100 ms (nil if none came).
    func firstOKReply(within seconds: Double) -> JSONObject? {
        let start = Date()
        while Date().timeIntervalSince(start) < seconds {
            if let reply = try? ControlClient.send(["query": "state"], to: socket), reply["ok"] == .bool(true) { return reply }
            usleep(100_000)
        }
        return nil
    }

    /// SIGTERM, and SIGKILL for a service that did not stop within 2 s (a
    /// blocked one, on a failing build): a test never leaves one behind.
    deinit {
        guard process.isRunning else { return }
        process.terminate()
        if !eventually(timeout: 2, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
    }
}


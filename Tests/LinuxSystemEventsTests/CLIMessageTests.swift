import Foundation
import Glibc
import MainLoopKit
import MainLoopJSON
import Testing

/// Issue 12, item 14: what the `mainloop` tool says when something is wrong.
@Suite(.timeLimit(.minutes(2))) struct CLIMessageTests {
    /// System errors carry the system's words, not only a number.
    @Test func systemErrorsSayWhatTheSystemSaid() throws {
        let result = try BuiltTool.run(["run", "--socket", "/proc/no-such-dir/s.sock"])
        #expect(result.status != 0)
        #expect(result.error.contains("No such file or directory"), "\(result.error)")
        #expect(!result.error.contains("failed (errno"), "\(result.error)")
    }

    /// One prefix, `error:`, for every error the tool prints, its own and
    /// the argument parser's; a shorthand mistake is not followed by the
    /// top-level usage line.
    @Test(arguments: [
        ["ctl", "orientation"],
        ["ctl", "query", "nope"],
        ["ctl", "--socket", "/tmp/mainloop-no-such.sock", "state"],
        ["replay"],
        ["demo", "--pace"],
    ])
    func errorsHaveOnePrefixAndNoStrayUsage(arguments: [String]) throws {
        let result = try BuiltTool.run(arguments)
        #expect(result.status != 0)
        #expect(result.error.hasPrefix("error: "), "\(result.error)")
        #expect(!result.error.contains("Error:"), "\(result.error)")
        if arguments.first == "ctl" {
            #expect(!result.error.contains("Usage: mainloop <subcommand>"), "\(result.error)")
        }
    }

    /// `--pace -5` is a negative number, not a missing value.
    @Test func aNegativePaceIsRefusedAsNegative() throws {
        let result = try BuiltTool.run(["demo", "--pace", "-5"])
        #expect(result.status != 0)
        #expect(result.error.contains("--pace must be 0 or more, not -5"), "\(result.error)")
    }

    /// Input to a suspended app is discarded: the reply says so.
    @Test func inputWhileSuspendedIsReportedAsDiscardedInTheReply() throws {
        let service = try ServiceProcess()
        _ = try ControlClient.send(["lifecycle": "home"], to: service.socket)
        let reply = try BuiltTool.run(["ctl", "--socket", service.socket, "input", "tap-1"])
        let object = try JSONValue.parse(reply.output.trimmingCharacters(in: .whitespacesAndNewlines)).objectValue
        #expect(object?["ok"] == .bool(true))
        #expect(object?["discarded"] == .bool(true), "\(reply.output)")
        #expect(object?["reason"]?.stringValue?.contains("suspended") == true, "\(reply.output)")
        #expect(service.terminate() == 0)
    }
}

import Foundation
import Glibc
import MainLoopKit
import MainLoopJSON
import Testing
import TestSupport

/// What the `mainloop` tool says when something is wrong.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct CLIMessageTests {
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

/// The tool parses its command line itself (no
/// reflection at start-up). What a user types keeps working, and every
/// mistake is named.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct CommandLineTests {
    /// Each subcommand's help lists its options and their defaults on stdout.
    @Test func helpListsEveryOptionWithItsDefault() throws {
        let result = try BuiltTool.run(["run", "--help"])
        #expect(result.status == 0, "\(result.error)")
        for option in ["--socket", "--domain", "--defaults-file", "--locale-file", "--zone-file", "--background",
                       "--no-system-bus", "--no-devices", "--output-buffer-bytes", "--max-subjects",
                       "--max-subject-bytes", "--max-value-bytes", "--max-reply-bytes", "--hang-threshold",
                       "--memory-pressure-purge-after", "--metrics-file", "--metrics-interval"] {
            #expect(result.output.contains(option), "\(option) missing from:\n\(result.output)")
        }
        #expect(result.output.contains("default: 8388608"), "\(result.output)")
        let top = try BuiltTool.run(["--help"])
        #expect(top.status == 0)
        for subcommand in ["demo", "run", "ctl", "defaults", "replay"] {
            #expect(top.output.contains("  \(subcommand) "), "\(subcommand) missing from:\n\(top.output)")
        }
        #expect(try BuiltTool.run(["help", "ctl"]).output.contains("shorthand"))
    }

    /// `--name=value` is the same as `--name value`.
    @Test func anOptionTakesItsValueAfterAnEqualsSign() throws {
        let result = try BuiltTool.run(["ctl", "--socket=/tmp/mainloop-no-such-dir/x.sock", "state"])
        #expect(result.status == 2)
        #expect(result.error.contains("/tmp/mainloop-no-such-dir/x.sock"), "\(result.error)")
    }

    /// Usage mistakes exit 64 (EX_USAGE) with one `error:` line that names
    /// the mistake and where help is.
    @Test(arguments: [
        (["run", "--nope"], "unknown option '--nope'"),
        (["demo", "--pace", "fast"], "--pace expects an integer, not 'fast'"),
        (["run", "--hang-threshold", "soon"], "--hang-threshold expects a number, not 'soon'"),
        (["run", "--background=yes"], "--background takes no value"),
        (["run", "--record-limit", "268435457"], "--record-limit must be between 4096 and 268435456 bytes"),
        (["run", "extra"], "unexpected argument 'extra'"),
        (["launch"], "unknown subcommand 'launch'"),
        ([], "missing subcommand"),
        (["defaults", "--domain", "a", "--file", "b", "read"], "use either --domain or --file, not both"),
    ])
    func usageMistakesAreNamed(arguments: [String], message: String) throws {
        let result = try BuiltTool.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.status) \(result.error)")
        #expect(result.error.hasPrefix("error: "), "\(result.error)")
        #expect(result.error.contains(message), "\(result.error)")
    }
}

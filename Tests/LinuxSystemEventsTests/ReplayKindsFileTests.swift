import Foundation
import Glibc
import MainLoopKit
import Testing
import TestSupport

/// `mainloop replay --kinds FILE`: a service's own rules, written from Swift
/// by `customKindJSON()`, are the rules its scenarios check.
@Suite(.ownThread) struct ReplayKindsFileTests {
    /// The service's rule, declared once in Swift.
    static let printerStatus = CoalescingRule(
        kind: "printerStatus", shape: .lastValue, defaultValue: "idle",
        eventFormat: .value(.oneOf(["idle", "printing", "jammed"])),
        naming: .fixed("printerStatusDidChange"), payload: .value(key: "status"))

    static func scenario(customKinds: String = "") -> String {
        let config = customKinds.isEmpty ? "" : #""config": {"customKinds": [\#(customKinds)]},"#
        return #"""
            {"name": "the printer's status merges to its net change", \#(config)
             "steps": [{"at": 0, "lifecycle": "launch"}, {"at": 1, "lifecycle": "home"},
                       {"at": 2, "system": {"printerStatus": "jammed"}}, {"at": 3, "system": {"printerStatus": "printing"}},
                       {"at": 4, "lifecycle": "foreground"}],
             "expect": [
               {"at":0,"state":"inactive"}, {"at":0,"callback":"willFinishLaunching"},
               {"at":0,"callback":"didFinishLaunching"}, {"at":0,"state":"active"}, {"at":0,"callback":"didBecomeActive"},
               {"at":1,"callback":"willResignActive"}, {"at":1,"state":"inactive"}, {"at":1,"state":"background"},
               {"at":1,"callback":"didEnterBackground"}, {"at":1,"state":"suspended"},
               {"at":4,"state":"background"}, {"at":4,"callback":"willEnterForeground"}, {"at":4,"state":"inactive"},
               {"at":4,"notification":"printerStatusDidChange","status":"printing","merged":2},
               {"at":4,"state":"active"}, {"at":4,"callback":"didBecomeActive"}]}
            """#
    }

    /// Writes the Swift rules as a kinds file, as a service's test would.
    static func writeKinds(_ rules: [CoalescingRule], to path: String) throws {
        let file = JSONValue.array(try rules.map { try $0.customKindJSON() })
        try file.jsonText.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func aScenarioChecksTheRuleDeclaredInSwift() throws {
        let directory = TemporaryDirectory()
        try Self.writeKinds([Self.printerStatus], to: directory.file("kinds.json"))
        try Self.scenario().write(toFile: directory.file("printer.json"), atomically: true, encoding: .utf8)
        let checked = try BuiltTool.run(["replay", "--check", "--kinds", directory.file("kinds.json"), directory.file("printer.json")])
        #expect(checked.status == 0, "\(checked)")
        #expect(checked.output.contains("1 passed, 0 failed"), "\(checked.output)")
        // Without the kinds file the kind is unknown, and the step says so.
        let unknown = try BuiltTool.run(["replay", "--check", directory.file("printer.json")])
        #expect(unknown.status == 1)
        #expect(unknown.output.contains("steps[2]: unknown notification kind 'printerStatus'"), "\(unknown.output)")
    }

    /// A scenario may declare the kind too, but only as the file does: a
    /// copy that drifted from the service's rule is an error, not a test of it.
    @Test func aScenarioThatDeclaresTheKindDifferentlyIsAnError() throws {
        let directory = TemporaryDirectory()
        try Self.writeKinds([Self.printerStatus], to: directory.file("kinds.json"))
        let same = try Self.printerStatus.customKindJSON().jsonText
        let drifted = same.replacingOccurrences(of: #""payloadKey":"status""#, with: #""payloadKey":"state""#)
        try Self.scenario(customKinds: same).write(toFile: directory.file("same.json"), atomically: true, encoding: .utf8)
        try Self.scenario(customKinds: drifted).write(toFile: directory.file("drifted.json"), atomically: true, encoding: .utf8)
        let result = try BuiltTool.run(["replay", "--check", "--kinds", directory.file("kinds.json"),
                                        directory.file("same.json"), directory.file("drifted.json")])
        #expect(result.status == 1)
        #expect(result.output.contains("PASS \(directory.file("same.json"))"), "\(result.output)")
        #expect(result.output.contains("customKinds[0]: 'printerStatus' is declared differently from the kinds file's rule"),
                "\(result.output)")
    }

    /// A kinds file that is not one is refused, naming the file and the
    /// entry, and no scenario runs.
    @Test(arguments: [
        (#"{"customKinds": []}"#, "a kinds file is a JSON array"),
        (#"[{"name": "a", "shape": "lastValue"}]"#, "[0]: needs 'notification'"),
        (#"[{"name": "a", "shape": "lastValue", "notification": "n"}, {"name": "a", "shape": "latestEvent", "notification": "m"}]"#,
         "[1]: a kind named 'a' is already declared"),
        ("[", "invalid JSON"),
    ])
    func aMalformedKindsFileIsRefused(_ text: String, _ problem: String) throws {
        let directory = TemporaryDirectory()
        try text.write(toFile: directory.file("kinds.json"), atomically: true, encoding: .utf8)
        try Self.scenario().write(toFile: directory.file("printer.json"), atomically: true, encoding: .utf8)
        let result = try BuiltTool.run(["replay", "--kinds", directory.file("kinds.json"), directory.file("printer.json")])
        #expect(result.status == 1)
        #expect(result.output.isEmpty, "no scenario ran: \(result.output)")
        #expect(result.error.contains(directory.file("kinds.json") + ": " + problem), "\(result.error)")
    }

    @Test func aMissingKindsFileIsRefused() throws {
        let directory = TemporaryDirectory()
        try Self.scenario().write(toFile: directory.file("printer.json"), atomically: true, encoding: .utf8)
        let result = try BuiltTool.run(["replay", "--kinds", directory.file("absent.json"), directory.file("printer.json")])
        #expect(result.status == 1)
        #expect(result.error.contains("absent.json"), "\(result.error)")
    }
}

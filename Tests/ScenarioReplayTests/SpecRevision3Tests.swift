import MainLoop
import MainLoopJSON
import ScenarioReplay
import Testing
import TestSupport

/// Reserved observation keys, and a replay with
/// no cap of its own on observations or on a kind's subjects.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SpecRevision3Tests {
    static func scenario(customKind: String) -> String {
        #"{"config": {"customKinds": [\#(customKind)]}, "steps": [{"at": 0, "lifecycle": "launch"}]}"#
    }

    /// `payloadKey: "at"` replaced the line's time, `"notification"` its
    /// name, `"merged"` dropped the value; `replay --check` passed the
    /// corrupted line. Now the scenario is invalid, naming the key.
    @Test(arguments: ["at", "notification", "merged"], ["payloadKey", "subjectKey", "valueKey"])
    func anObservationKeyIsNotAPayloadKey(key: String, field: String) {
        let shape = field == "payloadKey" ? "lastValue" : "perSubject"
        let kind = #"{"name": "thermal", "shape": "\#(shape)", "notification": "thermalDidChange", "\#(field)": "\#(key)"}"#
        do {
            _ = try ScenarioReplayer.run(try Scenario.parse(Self.scenario(customKind: kind)))
            Issue.record("\(field) '\(key)' was accepted")
        } catch {
            #expect(error.description.contains("customKinds[0]"), "\(error)")
            #expect(error.description.contains("'\(field)' may not be '\(key)'"), "\(error)")
        }
    }

    @Test func aPerSubjectKindsSubjectAndValueKeysDiffer() {
        for kind in [#"{"name": "peer", "shape": "perSubject", "notification": "peerDidChange", "subjectKey": "x", "valueKey": "x"}"#,
                     #"{"name": "peer", "shape": "perSubject", "notification": "peerDidChange", "valueKey": "subject"}"#] {
            do {
                _ = try ScenarioReplayer.run(try Scenario.parse(Self.scenario(customKind: kind)))
                Issue.record("equal subject and value keys were accepted: \(kind)")
            } catch {
                #expect(error.description.contains("one would overwrite the other"), "\(error)")
            }
        }
    }

    /// The 1,025th connected accessory failed the whole replay (the
    /// service's subject limit); replay has none.
    @Test func replayKeepsAnyNumberOfSubjects() throws {
        var steps = [#"{"at": 0, "lifecycle": "launch"}"#, #"{"at": 1, "lifecycle": "home"}"#]
        for index in 0..<2_000 { steps.append(#"{"at": 2, "system": {"accessory": {"id": "a\#(index)", "connected": true}}}"#) }
        steps.append(#"{"at": 3, "lifecycle": "foreground"}"#)
        let observations = try ScenarioReplayer.run(try Scenario.parse(#"{"steps": [\#(steps.joined(separator: ","))]}"#))
        let connected = observations.filter { $0["notification"] == .string("accessoryDidConnect") }
        #expect(connected.count == 2_000)
    }

    /// A valid scenario of 100,001 observations exited 1 and printed
    /// nothing; it streams every line now.
    @Test func replayStreamsPastAHundredThousandObservations() throws {
        var steps = [#"{"at": 0, "lifecycle": "launch"}"#]
        for index in 0..<100_001 { steps.append(#"{"at": 1, "input": "t\#(index)"}"#) }
        var count = 0
        try ScenarioReplayer.stream(try Scenario.parse(#"{"steps": [\#(steps.joined(separator: ","))]}"#)) { _ in
            count += 1
            return true
        }
        #expect(count == 5 + 100_001)
    }

    /// A caller may still bound a replay of untrusted input (the fuzzer does).
    @Test func aCallersLimitStillStopsAReplayWithAnError() throws {
        let text = #"{"steps": [{"at": 0, "lifecycle": "launch"}, {"at": 0, "app": {"timer": "t", "every": 1e-9}}, {"at": 10, "input": "x"}]}"#
        #expect(throws: ScenarioError.self) {
            try ScenarioReplayer.stream(try Scenario.parse(text), limits: ReplayLimits(maxObservations: 1_000)) { _ in true }
        }
    }

    /// Item 11: leading zeros in a time were removed one at a time
    /// (quadratic: 800,000 zeros took 5.4 s, five million would take minutes); now a moment.
    @Test func leadingZerosInATimeAreLinear() {
        let text = "0." + String(repeating: "0", count: 5_000_000) + "1"
        #expect(DecimalSeconds.nanoseconds(text) == 0)
        #expect(DecimalSeconds.nanoseconds(String(repeating: "0", count: 3_000_000) + "1.5") == 1_500_000_000)
    }
}

import Glibc
import ScenarioReplay
import Testing
import TestSupport

/// Regression tests: extreme times neither crash nor hang the
/// replay, and every invalid time is reported with its file and step.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ReplayRobustnessRegressionTests {
    /// Runs `text` as a scenario; called in a child process that must exit
    /// normally (an error is fine, a trap or a hang is not: SIGALRM ends a hang).
    static func replayBounded(_ text: String) {
        alarm(20)
        // Replay has no cap of its own (BEHAVIOUR.md §7); a 1 ns timer for
        // 10 s is 10^10 valid lines, so these runs take a caller's limit.
        do {
            try ScenarioReplayer.stream(try Scenario.parse(text), limits: ReplayLimits(maxObservations: 100_000)) { _ in true }
        } catch {
            print("rejected: \(error)")
        }
    }

    @Test func aTimeBeyondTheInt64RangeDoesNotTrap() async {
        await #expect(processExitsWith: .success) { Self.replayBounded(#"{"steps": [{"at": 0, "lifecycle": "launch"}, {"at": 1e10, "input": "x"}]}"#) }
    }

    @Test func aRepeatingIntervalBelowHalfANanosecondDoesNotTrap() async {
        await #expect(processExitsWith: .success) { Self.replayBounded(#"{"steps": [{"at": 0, "lifecycle": "launch"}, {"at": 0, "app": {"timer": "t", "every": 1e-10}}, {"at": 1, "input": "x"}]}"#) }
    }

    @Test func aOneNanosecondRepeatingTimerDoesNotHang() async {
        await #expect(processExitsWith: .success) { Self.replayBounded(#"{"steps": [{"at": 0, "lifecycle": "launch"}, {"at": 0, "app": {"timer": "t", "every": 1e-9}}, {"at": 10, "input": "x"}]}"#) }
    }

    @Test(arguments: [
        (#"{"steps": [{"at": 0, "lifecycle": "launch"}, {"at": 1e10, "input": "x"}]}"#, "steps[1]"),
        (#"{"steps": [{"at": 0, "lifecycle": "launch"}, {"at": 0, "app": {"timer": "t", "every": 1e-10}}]}"#, "steps[1]"),
        (#"{"steps": [{"at": 0, "app": {"timer": "t", "after": 2e9}}]}"#, "steps[0]"),
        (#"{"config": {"backgroundTaskLimit": 1e300}, "steps": []}"#, "backgroundTaskLimit"),
    ])
    func anInvalidTimeIsRejectedWithItsStep(text: String, location: String) {
        do {
            _ = try ScenarioReplayer.run(try Scenario.parse(text))
            Issue.record("expected an error naming \(location)")
        } catch {
            #expect(error.description.contains(location), "\(error.description)")
        }
    }

    @Test func aDuplicateCustomKindIsReportedInConfig() {
        let kind = #"{"name": "peer", "shape": "lastValue", "notification": "peerDidChange"}"#
        do {
            _ = try ScenarioReplayer.run(try Scenario.parse(#"{"config": {"customKinds": [\#(kind), \#(kind)]}, "steps": []}"#))
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("config: customKinds[1]: a kind named 'peer' is already declared"), "\(error.description)")
            #expect(!error.description.contains("initial"), "\(error.description)")
        }
    }
}

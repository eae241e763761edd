import FileSupport
import Glibc
import MainLoopJSON
import ScenarioReplay
import Testing
import TestSupport

/// The scenario files beside this test: the shared conformance suite
/// (copied from ../shared/conformance) and the project's own scenarios.
enum ScenarioFiles {
    static let directory: String = {
        let file = "\(#filePath)"
        return String(file[..<file.lastIndex(of: "/")!])
    }()

    static func list(_ folder: String) -> [String] {
        let path = directory + "/" + folder
        return (DirectoryNames.list(path) { $0.hasSuffix(".json") } ?? []).map { path + "/" + $0 }.sorted()
    }

    static var conformance: [String] { list("Conformance") }
    static var malformed: [String] { list("Malformed") }
}

/// Every scenario runs through `ScenarioFile.check`, the same code path as
/// `mainloop replay --check`.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ConformanceTests {
    @Test func theSuiteHasTheSharedScenariosAndAtLeastFifteenOfOurOwn() {
        let names = ScenarioFiles.conformance.map { String($0[$0.index(after: $0.lastIndex(of: "/")!)...]) }
        // Shared files are numbered NN-, the project's own NNN-.
        func numberLength(_ name: String) -> Int { name.prefix { $0.isNumber }.count }
        #expect(names.filter { numberLength($0) == 2 }.count == 27)  // the shared vectors of revision 4
        #expect(names.filter { numberLength($0) == 3 }.count >= 15)
    }

    @Test(arguments: ScenarioFiles.conformance)
    func scenarioMatchesItsExpectation(path: String) {
        let outcome = ScenarioFile.check(path)
        guard case .passed = outcome else {
            Issue.record("\(path): \(outcome)")
            return
        }
    }

    @Test func replayIsDeterministic() throws {
        for path in ScenarioFiles.conformance.prefix(10) {
            let (_, first) = try ScenarioFile.replay(path)
            let (_, second) = try ScenarioFile.replay(path)
            #expect(first == second)
        }
    }

    @Test func aWrongExpectationIsReportedWithTheFirstDifferingLine() throws {
        let text = try ScenarioFile.read(ScenarioFiles.conformance.first { $0.hasSuffix("01-orientation-net-change.json") }!)
        var scenario = try Scenario.parse(text)
        let actual = try ScenarioReplayer.run(scenario)
        var expected = try #require(scenario.expect)
        expected[13]["orientation"] = "faceDown"
        scenario.expect = expected
        #expect(ConformanceCheck.difference(expected: expected, actual: actual)?.hasPrefix("line 14: expected") == true)
        #expect(ConformanceCheck.difference(expected: Array(expected.prefix(3)), actual: actual)?.contains("(nothing)") == true)
    }

    @Test func numbersCompareByValueAndKeyOrderDoesNotMatter() {
        let a: JSONObject = ["at": 7, "notification": "x", "merged": 1]
        let b: JSONObject = ["merged": 1.0, "at": 7.0, "notification": "x"]
        #expect(ConformanceCheck.difference(expected: [a], actual: [b]) == nil)
    }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct MalformedScenarioTests {
    @Test func eachMalformedFileGetsAnErrorNamingFileStepAndProblem() {
        let outcomes = Dictionary(uniqueKeysWithValues: ScenarioFiles.malformed.map {
            (String($0[$0.index(after: $0.lastIndex(of: "/")!)...]), ScenarioFile.check($0))
        })
        #expect(outcomes.count == 4)
        func message(_ name: String) -> String {
            if case .error(let message) = outcomes[name] { return message }
            return "not an error: \(String(describing: outcomes[name]))"
        }
        #expect(message("bad-step.json").contains(#"bad-step.json: steps[2]: unknown lifecycle command "fly""#))
        #expect(message("bad-orientation.json").contains("bad-orientation.json: steps[1]: orientation event: expected one of"))
        #expect(message("time-goes-back.json").contains("steps[1]: 'at' 4 is before the previous step's 5"))
        #expect(message("truncated.json").contains("invalid JSON at line"))
    }

    @Test(arguments: [
        (#"{"steps": [{"at": 0, "lifecycle": "launch", "input": "x"}]}"#, "steps[0]: a request needs exactly one of lifecycle, system, input, memoryWarning, app (got 'lifecycle', 'input')"),
        (#"{"steps": [{"at": -1, "lifecycle": "launch"}]}"#, "steps[0]: 'at' must be a number of seconds from 0 to 1000000000 (got -1)"),
        (#"{"steps": [{"at": 0, "app": {"timer": "t"}}]}"#, "steps[0]: app 'timer' needs exactly one of 'after' or 'every'"),
        (#"{"steps": [{"at": 0, "app": {"dance": 1}}]}"#, "steps[0]: unknown app action 'dance'"),
        (#"{"steps": [{"at": 0, "query": "state"}]}"#, "steps[0]: 'query' is not allowed here"),
        (#"{"config": {"backgroundTaskLimt": 3}, "steps": []}"#, "config: unknown key 'backgroundTaskLimt' in the config"),
        (#"{"steps": [{"at": 0, "system": {"accessory": {"id": "a"}}}]}"#, "steps[0]: accessory event: missing 'connected'"),
        (#"{"steps": [{"at": 0, "system": {"weather": "rain"}}]}"#, "steps[0]: unknown notification kind 'weather'"),
        (#"{"initial": {"batteryLevel": 2}, "steps": []}"#, "initial 'batteryLevel': batteryLevel event: expected a number in 0...1"),
        (#"{"name": "no steps"}"#, "'steps' is missing"),
        (#"[1, 2]"#, "a scenario must be a JSON object"),
    ])
    func malformedInputIsRejectedBeforeAnyStepRuns(text: String, expected: String) {
        do {
            let scenario = try Scenario.parse(text)
            _ = try ScenarioReplayer.run(scenario)
            Issue.record("expected an error containing \(expected)")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }
}

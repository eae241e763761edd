import FileSupport
import AppLifecycle
import EngineWire
import MainLoopJSON
import SystemNotifications

/// Reading scenario files and running them, for the CLI and the tests
/// (one code path for both).
public enum ScenarioFile {
    /// The result of checking one file.
    public enum Outcome: Equatable, Sendable {
        case passed(name: String)
        case failed(name: String, difference: String)
        /// The file is unreadable or malformed; the message names file, step and problem.
        case error(String)
        /// The file has no `expect`, so there is nothing to compare.
        case noExpectation(name: String)
    }

    /// The largest scenario file read (256 MiB; a million steps take about 45 MB).
    public static let maxFileBytes = 256 << 20

    /// Reads a whole file as UTF-8 (a pipe too), at most ``maxFileBytes``.
    public static func read(_ path: String) throws(ScenarioError) -> String {
        do {
            return try FileContents.text(path, maxBytes: maxFileBytes)
        } catch {
            throw ScenarioError(file: path, problem: error.description)
        }
    }

    /// Parses and replays a file.
    public static func replay(_ path: String, limits: ReplayLimits = ReplayLimits()) throws(ScenarioError) -> (Scenario, [JSONObject]) {
        try replay(text: try read(path), path: path, limits: limits)
    }

    /// Parses and replays the text of the scenario (or recording) file
    /// `path`; errors name `path` (and a recording's line).
    public static func replay(text: String, path: String,
                              limits: ReplayLimits = ReplayLimits()) throws(ScenarioError) -> (Scenario, [JSONObject]) {
        try locating(path) { () throws(ScenarioError) in
            let scenario = try Scenario.parse(text, partial: false)
            var observations: [JSONObject] = []
            try replaying(scenario) { () throws(ScenarioError) in observations = try ScenarioReplayer.run(scenario, limits: limits) }
            return (scenario, observations)
        }
    }

    /// Parses and replays the file `path`, handing each observation line to
    /// `emit` as it happens (nothing is kept: any number of lines in bounded
    /// memory). Errors name `path`. `kinds` are declared before the
    /// scenario's own (``Scenario/declaring(_:)``).
    /// - Returns: the scenario (its name and `expect`).
    @discardableResult
    public static func stream(_ path: String, limits: ReplayLimits = ReplayLimits(), kinds: [CoalescingRule] = [],
                              partial: Bool = false,
                              emit: @escaping (JSONObject) -> Void) throws(ScenarioError) -> Scenario {
        try locating(path) { () throws(ScenarioError) in
            let scenario = try Scenario.parse(try read(path), partial: partial).declaring(kinds)
            try replaying(scenario) { () throws(ScenarioError) in
                try ScenarioReplayer.stream(scenario, limits: limits) { line in
                    emit(line)
                    return true
                }
            }
            return scenario
        }
    }

    /// Runs a replay of `scenario`, placing a recording's step errors at their lines.
    private static func replaying(_ scenario: Scenario, _ body: () throws(ScenarioError) -> Void) throws(ScenarioError) {
        do throws(ScenarioError) {
            try body()
        } catch {
            guard let firstStepLine = scenario.firstStepLine else { throw error }
            throw Scenario.located(error, firstStepLine: firstStepLine, headerLine: 1)
        }
    }

    /// Reads a file of observation lines (what `mainloop run` or `replay`
    /// printed): one JSON object per line, blank lines skipped.
    /// - Throws: ``ScenarioError`` naming the file and the line.
    public static func readObservations(_ path: String) throws(ScenarioError) -> [JSONObject] {
        let text = try read(path)
        var observations: [JSONObject] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            let json: JSONValue
            do {
                json = try JSONValue.parse(String(line))
            } catch {
                throw ScenarioError(file: path, line: index + 1, problem: "invalid JSON at \(error)")
            }
            guard let object = json.objectValue else {
                throw ScenarioError(file: path, line: index + 1, problem: "an observation line is a JSON object")
            }
            observations.append(object)
        }
        return observations
    }

    /// Runs `body`, naming `path` in the error it throws.
    @discardableResult
    private static func locating<T>(_ path: String, _ body: () throws(ScenarioError) -> T) throws(ScenarioError) -> T {
        do throws(ScenarioError) {
            return try body()
        } catch {
            var located = error
            located.file = path
            throw located
        }
    }

    /// Replays a file and compares with its `expect`; `kinds` are declared
    /// before the scenario's own (``Scenario/declaring(_:)``).
    public static func check(_ path: String, kinds: [CoalescingRule] = []) -> Outcome {
        check(path, kinds: kinds, partial: false, expected: nil)
    }

    /// Replays a file (a scenario or a recording) and compares with
    /// `expected` (the lines a live session printed, say), or with its own
    /// `expect` when `expected` is nil.
    public static func check(_ path: String, kinds: [CoalescingRule] = [], partial: Bool,
                             expected: [JSONObject]?) -> Outcome {
        do {
            let text = try read(path)
            return check(text: text, path: path, kinds: kinds, partial: partial, expected: expected)
        } catch {
            return .error(error.description)
        }
    }

    /// Replays the text of the scenario file `path` and compares with its `expect`.
    /// Lines are compared as they are produced, and the replay stops at the
    /// first difference, so a check holds no more than the expectation.
    public static func check(text: String, path: String, limits: ReplayLimits = ReplayLimits(),
                             kinds: [CoalescingRule] = [], partial: Bool = false, expected: [JSONObject]? = nil) -> Outcome {
        do {
            var scenario = try locating(path) { () throws(ScenarioError) in
                try Scenario.parse(text, partial: partial).declaring(kinds)
            }
            if let expected { scenario.expect = expected }
            var comparison = ConformanceCheck.Streaming(expected: scenario.expect ?? [])
            // Replayed even without `expect`: an invalid step is still an error.
            try locating(path) { () throws(ScenarioError) in
                try replaying(scenario) { () throws(ScenarioError) in
                    try ScenarioReplayer.stream(scenario, limits: limits) { scenario.expect == nil || comparison.next($0) }
                }
            }
            guard scenario.expect != nil else { return .noExpectation(name: scenario.name) }
            if let difference = comparison.finish() { return .failed(name: scenario.name, difference: difference) }
            return .passed(name: scenario.name)
        } catch {
            return .error(error.description)
        }
    }

    /// One observation as a JSON line with `at` first.
    public static func line(_ observation: JSONObject) -> String { JSONValue.object(observation).jsonText }
}

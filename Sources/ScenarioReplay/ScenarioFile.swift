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

    /// Parses and replays the text of the scenario file `path`; errors name `path`.
    public static func replay(text: String, path: String,
                              limits: ReplayLimits = ReplayLimits()) throws(ScenarioError) -> (Scenario, [JSONObject]) {
        try locating(path) { () throws(ScenarioError) in
            let scenario = try Scenario.parse(text)
            return (scenario, try ScenarioReplayer.run(scenario, limits: limits))
        }
    }

    /// Parses and replays the file `path`, handing each observation line to
    /// `emit` as it happens (nothing is kept: any number of lines in bounded
    /// memory). Errors name `path`. `kinds` are declared before the
    /// scenario's own (``Scenario/declaring(_:)``).
    /// - Returns: the scenario (its name and `expect`).
    @discardableResult
    public static func stream(_ path: String, limits: ReplayLimits = ReplayLimits(), kinds: [CoalescingRule] = [],
                              emit: @escaping (JSONObject) -> Void) throws(ScenarioError) -> Scenario {
        try locating(path) { () throws(ScenarioError) in
            let scenario = try Scenario.parse(try read(path)).declaring(kinds)
            try ScenarioReplayer.stream(scenario, limits: limits) { line in
                emit(line)
                return true
            }
            return scenario
        }
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
        do {
            let text = try read(path)
            return check(text: text, path: path, kinds: kinds)
        } catch {
            return .error(error.description)
        }
    }

    /// Replays the text of the scenario file `path` and compares with its `expect`.
    /// Lines are compared as they are produced, and the replay stops at the
    /// first difference, so a check holds no more than the expectation.
    public static func check(text: String, path: String, limits: ReplayLimits = ReplayLimits(),
                             kinds: [CoalescingRule] = []) -> Outcome {
        do {
            let scenario = try locating(path) { () throws(ScenarioError) in try Scenario.parse(text).declaring(kinds) }
            var comparison = ConformanceCheck.Streaming(expected: scenario.expect ?? [])
            // Replayed even without `expect`: an invalid step is still an error.
            try locating(path) { () throws(ScenarioError) in
                try ScenarioReplayer.stream(scenario, limits: limits) { scenario.expect == nil || comparison.next($0) }
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

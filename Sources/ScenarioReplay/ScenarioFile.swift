import AppLifecycle
import EngineWire
import MainLoopJSON

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

    /// Reads a whole file as UTF-8.
    public static func read(_ path: String) throws(ScenarioError) -> String {
        do {
            return try FileContents.text(path)
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
        do throws(ScenarioError) {
            let scenario = try Scenario.parse(text)
            return (scenario, try ScenarioReplayer.run(scenario, limits: limits))
        } catch {
            var located = error
            located.file = path
            throw located
        }
    }

    /// Replays a file and compares with its `expect`.
    public static func check(_ path: String) -> Outcome {
        do {
            let text = try read(path)
            return check(text: text, path: path)
        } catch {
            return .error(error.description)
        }
    }

    /// Replays the text of the scenario file `path` and compares with its `expect`.
    public static func check(text: String, path: String, limits: ReplayLimits = ReplayLimits()) -> Outcome {
        do {
            let (scenario, observations) = try replay(text: text, path: path, limits: limits)
            guard let expected = scenario.expect else { return .noExpectation(name: scenario.name) }
            if let difference = ConformanceCheck.difference(expected: expected, actual: observations) {
                return .failed(name: scenario.name, difference: difference)
            }
            return .passed(name: scenario.name)
        } catch {
            return .error(error.description)
        }
    }

    /// One observation as a JSON line with `at` first.
    public static func line(_ observation: JSONObject) -> String { JSONValue.object(observation).jsonText }
}

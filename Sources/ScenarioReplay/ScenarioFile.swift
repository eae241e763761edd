import Glibc
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
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ScenarioError(file: path, problem: String(cString: strerror(errno))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw ScenarioError(file: path, problem: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses and replays a file.
    public static func replay(_ path: String) throws(ScenarioError) -> (Scenario, [JSONObject]) {
        do throws(ScenarioError) {
            let scenario = try Scenario.parse(try read(path))
            return (scenario, try ScenarioReplayer.run(scenario))
        } catch {
            var located = error
            located.file = path
            throw located
        }
    }

    /// Replays a file and compares with its `expect`.
    public static func check(_ path: String) -> Outcome {
        do {
            let (scenario, observations) = try replay(path)
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

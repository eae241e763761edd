import EngineWire
import MainLoopJSON

extension Scenario {
    /// Reads a scenario file's text: a scenario object, or a recording
    /// (JSON lines whose first line has `recording`; BEHAVIOUR.md §7).
    /// - Parameters:
    ///   - text: the file's text.
    ///   - partial: accept a recording that was cut off (no end line): its
    ///     whole steps are replayed.
    /// - Throws: ``ScenarioError``; a recording's errors name the line.
    public static func parse(_ text: String, partial: Bool) throws(ScenarioError) -> Scenario {
        guard isRecording(text) else {
            do throws(ScenarioError) {
                return try parse(text)
            } catch {
                // JSON lines whose first line lost its `recording` key: say
                // what the file is not, at its first line.
                let lines = text.split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }
                guard lines.count > 1, (try? JSONValue.parse(String(lines[0])))?.objectValue != nil else { throw error }
                throw ScenarioError(line: 1, problem: "neither a recording (whose first line is {\"recording\": 1, …}) "
                                    + "nor a scenario (one JSON object): \(error.problem)")
            }
        }
        return try parseRecording(text, partial: partial)
    }

    /// Whether `text` is a recording: it begins `{"recording"` as the
    /// recorder writes it (so a first line damaged after that is reported
    /// as a recording's line 1).
    static func isRecording(_ text: String) -> Bool {
        text.utf8.starts(with: #"{"recording""#.utf8)
    }

    /// Reads a recording (BEHAVIOUR.md §7, "Recordings").
    static func parseRecording(_ text: String, partial: Bool) throws(ScenarioError) -> Scenario {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // A recording's every line ends with a newline: the last piece is
        // empty, or a line cut off in the middle.
        let cutLine = lines.removeLast()
        func fail(_ line: Int, _ problem: String) -> ScenarioError { ScenarioError(line: line, problem: problem) }
        guard let headerText = lines.first else { throw fail(1, "the recording's first line is incomplete") }
        let header = try object(headerText, line: 1)
        guard let version = header["recording"]?.numberValue, version == version.rounded(), version >= 1 else {
            throw fail(1, "'recording' must be the format version, a whole number from 1")
        }
        guard version <= Double(SessionRecorder.formatVersion) else {
            throw fail(1, "written by a newer version (recording \(Int(version))); this one reads recording \(SessionRecorder.formatVersion)")
        }
        if let unknown = header.orderedKeys.first(where: { !["recording", "config", "initial"].contains($0) }) {
            throw fail(1, "unknown key '\(unknown)' (known: recording, config, initial)")
        }
        var steps: [JSONValue] = []
        var ended = false
        for (offset, lineText) in lines.enumerated().dropFirst() {
            let number = offset + 1
            guard !ended else { throw fail(number, "a line after the end line") }
            let line = try object(lineText, line: number)
            if let end = line["end"] {
                let shape = "an end line is {\"end\": \"stopped\"} or {\"end\": \"sizeLimit\", \"maxBytes\": n}"
                let keys: [String]
                switch end.stringValue {
                case "stopped": keys = ["end"]
                case "sizeLimit": keys = ["end", "maxBytes"]
                default: throw fail(number, shape)
                }
                if let extra = line.orderedKeys.first(where: { !keys.contains($0) }) {
                    throw fail(number, "unknown key '\(extra)': \(shape)")
                }
                if end.stringValue == "sizeLimit" {
                    guard let bound = line["maxBytes"]?.numberValue, bound == bound.rounded(), bound >= 0 else {
                        throw fail(number, "'maxBytes' must be a whole number of bytes: \(shape)")
                    }
                }
                ended = true
                continue
            }
            steps.append(.object(line))
        }
        if !ended && !partial {
            let last = cutLine.isEmpty ? lines.count : lines.count + 1
            throw fail(last, cutLine.isEmpty
                ? "the recording has no end line: it was cut off after this line (the recorder was killed); --partial replays its whole steps"
                : "the recording was cut off inside this line; --partial replays the whole steps before it")
        }
        if ended && !cutLine.isEmpty { throw fail(lines.count + 1, "a line after the end line") }
        var root = JSONObject([("name", .string("recording")), ("steps", .array(steps))])
        if let config = header["config"] { root["config"] = config }
        if let initial = header["initial"] { root["initial"] = initial }
        do throws(ScenarioError) {
            var scenario = try parse(.object(root))
            scenario.firstStepLine = 2
            return scenario
        } catch {
            throw located(error, firstStepLine: 2, headerLine: 1)
        }
    }

    private static func object(_ text: String, line: Int) throws(ScenarioError) -> JSONObject {
        let json: JSONValue
        do {
            json = try JSONValue.parse(text)
        } catch {
            throw ScenarioError(line: line, problem: "invalid JSON at \(error)")
        }
        guard let object = json.objectValue else { throw ScenarioError(line: line, problem: "each line must be a JSON object") }
        return object
    }

    /// A recording's error placed at its line: a step's, or the first line's.
    static func located(_ error: ScenarioError, firstStepLine: Int, headerLine: Int) -> ScenarioError {
        var located = error
        if let index = error.stepIndex {
            located.stepIndex = nil
            located.line = firstStepLine + index
        } else if located.line == nil {
            located.line = headerLine
        }
        return located
    }
}

/// A malformed (or unreplayable) scenario: names the file, the place
/// (`steps[2]` is the third step: indices count from 0, as in the JSON
/// array; or `config`, `initial`) and the problem.
public struct ScenarioError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The scenario file, when known.
    public var file: String?
    /// The index of the offending step in `steps` (from 0), if the problem is in a step.
    public var stepIndex: Int?
    /// The line (from 1) of a recording the problem is on, if it is in one.
    public var line: Int?
    /// What is wrong.
    public var problem: String

    public init(file: String? = nil, stepIndex: Int? = nil, line: Int? = nil, problem: String) {
        self.file = file
        self.stepIndex = stepIndex
        self.line = line
        self.problem = problem
    }

    public var description: String {
        var parts: [String] = []
        if let file { parts.append(file) }
        if let stepIndex { parts.append("steps[\(stepIndex)]") }
        if let line { parts.append("line \(line)") }
        parts.append(problem)
        return parts.joined(separator: ": ")
    }
}

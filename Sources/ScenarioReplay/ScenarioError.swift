/// A malformed scenario: names the file, the step (0-based index into
/// `steps`) and the problem.
public struct ScenarioError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The scenario file, when known.
    public var file: String?
    /// The index of the offending step, if the problem is in a step.
    public var stepIndex: Int?
    /// What is wrong.
    public var problem: String

    public init(file: String? = nil, stepIndex: Int? = nil, problem: String) {
        self.file = file
        self.stepIndex = stepIndex
        self.problem = problem
    }

    public var description: String {
        var parts: [String] = []
        if let file { parts.append(file) }
        if let stepIndex { parts.append("step \(stepIndex)") }
        parts.append(problem)
        return parts.joined(separator: ": ")
    }
}

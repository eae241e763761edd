import MainLoop
import MainLoopJSON

/// Compares observations with a scenario's `expect`, line by line as JSON
/// objects (key order and whitespace do not matter, numbers compare by
/// value, `at` exactly to the nanosecond), in order (BEHAVIOUR.md §7).
public enum ConformanceCheck {
    /// nil when they match, else a description of the first difference.
    public static func difference(expected: [JSONObject], actual: [JSONObject]) -> String? {
        for index in 0..<max(expected.count, actual.count) {
            let want = index < expected.count ? JSONValue.object(expected[index]).jsonText : "(nothing)"
            let got = index < actual.count ? JSONValue.object(actual[index]).jsonText : "(nothing)"
            if index >= expected.count || index >= actual.count || !same(expected[index], actual[index]) {
                return "line \(index + 1): expected \(want), got \(got)"
            }
        }
        return nil
    }

    /// The same comparison, one actual line at a time as a replay
    /// produces it (``ScenarioReplayer/stream(_:limits:to:)``).
    public struct Streaming {
        private let expected: [JSONObject]
        private var index = 0
        private var difference: String?

        /// A comparison with `expected`.
        public init(expected: [JSONObject]) { self.expected = expected }

        /// Compares the next actual line; false once they differ (the
        /// replay can stop there).
        public mutating func next(_ actual: JSONObject) -> Bool {
            defer { index += 1 }
            guard index < expected.count, same(expected[index], actual) else {
                let want = index < expected.count ? JSONValue.object(expected[index]).jsonText : "(nothing)"
                difference = "line \(index + 1): expected \(want), got \(JSONValue.object(actual).jsonText)"
                return false
            }
            return true
        }

        /// nil when every line matched and none is missing, else the first difference.
        public func finish() -> String? {
            if let difference { return difference }
            guard index < expected.count else { return nil }
            return "line \(index + 1): expected \(JSONValue.object(expected[index]).jsonText), got (nothing)"
        }
    }

    /// Equal as JSON objects, with `at` compared in exact nanoseconds (two
    /// instants a nanosecond apart can be the same Double).
    static func same(_ expected: JSONObject, _ actual: JSONObject) -> Bool {
        var lhs = expected, rhs = actual
        let lhsAt = lhs["at"], rhsAt = rhs["at"]
        lhs["at"] = nil
        rhs["at"] = nil
        guard lhs == rhs else { return false }
        guard let a = lhsAt?.exactNumber, let b = rhsAt?.exactNumber else { return lhsAt == rhsAt }
        guard let nanosA = DecimalSeconds.nanoseconds(a.decimalText), let nanosB = DecimalSeconds.nanoseconds(b.decimalText)
        else { return a == b }
        return nanosA == nanosB
    }
}

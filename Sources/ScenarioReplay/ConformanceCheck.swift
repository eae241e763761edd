import MainLoopJSON

/// Compares observations with a scenario's `expect`, line by line as JSON
/// objects (key order and whitespace do not matter, numbers compare by
/// value), in order (SPEC §7).
public enum ConformanceCheck {
    /// nil when they match, else a description of the first difference.
    public static func difference(expected: [JSONObject], actual: [JSONObject]) -> String? {
        for index in 0..<max(expected.count, actual.count) {
            let want = index < expected.count ? JSONValue.object(expected[index]).jsonText : "(nothing)"
            let got = index < actual.count ? JSONValue.object(actual[index]).jsonText : "(nothing)"
            if index >= expected.count || index >= actual.count || expected[index] != actual[index] {
                return "line \(index + 1): expected \(want), got \(got)"
            }
        }
        return nil
    }
}

import Glibc
import MainLoopJSON
import MainLoop

/// The demo's readable timeline: driver actions and the service's
/// observations, each with the time since the demo started. Both threads
/// print through it, one whole line at a time.
final class DemoTimeline: Sendable {
    private let start: Double
    private let lock = LockedValue(())

    init() { start = Self.now() }

    static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    private var stamp: String {
        let elapsed = Self.now() - start
        let millis = Int((elapsed * 1000).rounded())
        let text = "\(millis / 1000).\(String(repeating: "0", count: 3 - String(millis % 1000).count))\(millis % 1000)s"
        return String(repeating: " ", count: max(0, 7 - text.count)) + text
    }

    /// A line of the driver (what happens to the service from outside).
    func action(_ text: String) { emit("\(stamp)  ▶ \(text)") }
    /// A note under the previous line.
    func note(_ text: String) { emit("              \(text)") }
    /// A heading.
    func heading(_ text: String) { emit("\n\(text)") }

    /// One observation of the service, formatted for people.
    func observation(_ line: JSONObject) {
        var fields = line
        fields["at"] = nil
        fields["time"] = nil
        let text: String
        if let state = fields["state"]?.stringValue {
            text = "state → \(state)"
        } else if let callback = fields["callback"]?.stringValue {
            text = "delegate: \(callback)"
        } else if let name = fields["notification"]?.stringValue {
            let merged = fields["merged"]?.numberValue.map { Int($0) } ?? 1
            fields["notification"] = nil
            fields["merged"] = nil
            let payload = fields.isEmpty ? "" : " " + JSONValue.object(fields).jsonText
            text = "notification: \(name)\(payload)" + (merged > 1 ? "   ← merged from \(merged) events" : "")
        } else if let input = fields["input"]?.stringValue {
            text = "input delivered: \(input)"
        } else if let discarded = fields["discarded"]?.objectValue?["input"]?.stringValue {
            text = "input discarded: \(discarded) (the app is not active)"
        } else {
            text = JSONValue.object(fields).jsonText
        }
        emit("\(stamp)      app  \(text)")
    }

    private func emit(_ text: String) {
        lock.withLock { _ in Output.line(text) }
    }
}

import AppLifecycle
import EngineWire
import MainLoop
import MainLoopJSON
import SystemNotifications
import Testing
import TestSupport

/// `ObservationRecorder`'s text lines (what `mainloop run` prints) are the
/// text of its object lines, byte for byte, for every kind of line.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ObservationTextTests {
    /// The timestamp of the n-th line: a new object every third line and,
    /// on every other line, a fresh copy of equal content (so the text's
    /// cache sees both a changed and an equal-but-new object). Every sixth
    /// line's timestamp also has a `proximity` key, a standard kind's
    /// payload key: the kind's line then takes the general form.
    final class Stamps {
        private var calls = 0
        private var current: JSONObject = [:]
        func next() -> JSONObject {
            defer { calls += 1 }
            if calls % 3 == 0 {
                current = ["at": .number(Double(calls) / 1000), "time": .string("t\(calls)")]
                if calls % 6 == 0 { current["proximity"] = "the timestamp's" }
            }
            guard calls % 2 == 1 else { return current }
            var copy = JSONObject()
            for (key, value) in current { copy[key] = value }
            return copy
        }
    }

    /// One session on a fresh application: every kind of line the recorder
    /// writes, and payload or field keys that collide with the line's own.
    func session(_ makeRecorder: (Stamps) -> ObservationRecorder) throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let recorder = makeRecorder(Stamps())
        try recorder.attach(to: application)
        // Rules of a user's own whose payload keys are the line's: the
        // object line holds the payload's value in that key's place.
        let clashing = [("thermal", "time"), ("pressure", "notification"), ("fan", "merged")]
        var kinds: [NotificationKind] = []
        for (name, key) in clashing {
            kinds.append(try application.notifications.register(CoalescingRule(
                kind: NotificationKind(name), shape: .lastValue, defaultValue: "low", eventFormat: .value(.string),
                naming: .fixed("\(name)DidChange"), payload: .value(key: key))))
        }
        // One key for the subject and the value: the object holds the value there.
        let fanSpeed = try application.notifications.register(CoalescingRule(
            kind: "fanSpeed", shape: .perSubject, defaultValue: .null,
            eventFormat: .subjectAndValue(subjectField: "fan", valueField: "rpm", value: .number(0...100_000)),
            naming: .fixed("fanSpeedDidChange"), payload: .subjectAndValue(subjectKey: "fan", valueKey: "fan")))
        try application.perform(.launch)
        try application.notifications.post(.orientation(.faceUp))
        // Standard kinds whose lines are written from text made once per
        // kind: enumerated, Bool and null values; a number is printed.
        for near in [true, false, true, false, true, false] { try application.notifications.post(.proximity(near)) }
        try application.notifications.post(.protectedData(available: false))
        try application.notifications.post(.ubiquityIdentity("token"))
        try application.notifications.post(.ubiquityIdentity(nil))
        try application.notifications.post(.batteryLevel(0.25))
        try application.notifications.post(.batteryState(.charging))
        try application.notifications.post(.significantTimeChange(.clockSet))
        try application.notifications.post(SystemEvent(kind: fanSpeed, subject: "cpu", value: 1200))
        try application.notifications.post(.screenMode(screen: "hdmi-1", mode: "1080p"))
        try application.notifications.post(.accessory(id: "a \"quoted\"\n", connected: true))
        try application.notifications.post(.userDefault(key: "k", value: ["nested": [1, 2.5, .null, true]]))
        for kind in kinds { try application.notifications.post(SystemEvent(kind: kind, value: "high")) }
        try application.deliverInput("tap-1")
        try application.perform(.home)
        try loop.runUntilIdle()
        try application.notifications.post(.orientation(.portrait))
        try application.notifications.post(.orientation(.landscapeLeft))
        try application.notifications.post(.proximity(true))
        try application.notifications.post(.batteryState(.full))
        try application.notifications.post(.batteryState(.unplugged))
        try application.notifications.post(.locale("fr_FR"))
        // A count of two digits in a line written from the kind's text.
        for index in 0..<13 { try application.notifications.post(.orientation(index % 2 == 0 ? .faceDown : .portraitUpsideDown)) }
        #expect(throws: LifecycleError.self) { try application.perform(.launch) }
        try application.perform(.foreground)
        try loop.runUntilIdle()
        recorder.record("custom", "ünïcode \u{1}")
        recorder.record(["at": "a field named like the timestamp", "other": .number(-0.5)])
        recorder.record([:])
        try application.perform(.terminate)
        try loop.runUntilIdle()
    }

    @Test func textLinesAreTheObjectLinesText() throws {
        var objects: [JSONObject] = []
        try session { stamps in ObservationRecorder(timestamp: stamps.next) { objects.append($0) } }
        var texts: [String] = []
        try session { stamps in
            ObservationRecorder(timestamp: stamps.next) { texts.append(String(decoding: $0, as: UTF8.self)) }
        }
        #expect(objects.count > 15)
        #expect(texts == objects.map { JSONValue.object($0).jsonText })
        // The clashing payloads replaced the line's own value in place.
        #expect(texts.contains { $0.contains(#""notification":"high""#) })
        #expect(texts.contains { $0.contains(#""time":"high""#) })
        #expect(texts.contains { $0.contains(#""fan":1200,"merged""#) })
        #expect(texts.contains { $0.contains(#""screen":"hdmi-1","mode":"1080p""#) })
        // A timestamp with the payload's key: the payload's value in its place.
        #expect(texts.contains { $0.contains(#""proximity":false,"notification":"proximityStateDidChange","merged":1}"#) })
        #expect(texts.contains { $0.hasSuffix(#""proximity":true,"merged":1}"#) })
        #expect(texts.contains { $0.hasSuffix(#""orientation":"faceDown","merged":15}"#) })
    }
}

import AppLifecycle
import EngineWire
import MainLoop
import MainLoopJSON
import SystemNotifications
import Testing

/// The SPEC §7 lines of an application: each notification's line is the
/// timestamp's fields, then `notification`, the payload and `merged`.
@Suite(.timeLimit(.minutes(2))) struct ObservationRecorderTests {
    @Test func aNotificationLineIsTheTimestampThenItsFieldsInOrder() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        var lines: [JSONObject] = []
        let recorder = ObservationRecorder(timestamp: { ["at": .number(1.5), "time": "then"] }) { lines.append($0) }
        try recorder.attach(to: application)
        var delivered: [SystemNotification] = []
        try application.notifications.addObserver(for: .accessory) { delivered.append($0) }
        try application.perform(.launch)
        lines.removeAll()
        try application.notifications.post(.accessory(id: "a1", connected: true))
        try loop.runUntilIdle()
        let notification = try #require(delivered.first)
        var expected: JSONObject = ["at": .number(1.5), "time": "then"]
        for (key, value) in ObservationRecorder.fields(of: notification) { expected[key] = value }
        #expect(lines == [expected])
        #expect(lines.first?.orderedKeys == ["at", "time", "notification", "accessory", "merged"])
        #expect(JSONValue.object(try #require(lines.first)).jsonText
                == #"{"at":1.5,"time":"then","notification":"accessoryDidConnect","accessory":"a1","merged":1}"#)
    }
}

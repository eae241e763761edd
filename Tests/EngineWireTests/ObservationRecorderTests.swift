import AppLifecycle
import EngineWire
import MainLoop
import MainLoopJSON
import SystemNotifications
import Testing
import TestSupport

/// The BEHAVIOUR.md §7 lines of an application: each notification's line is the
/// timestamp's fields, then `notification`, the payload and `merged`.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ObservationRecorderTests {
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

    /// The observers reach the recorder through a link it clears when it
    /// goes: once the application lets go of it (another delegate) and
    /// nothing else holds it, it is freed, and later notifications print
    /// nothing (no crash, no line).
    @Test func aRecorderTheApplicationLetGoOfIsFreedAndReportsNothingMore() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let lines = LineBox()
        weak var freed: ObservationRecorder?
        do {
            let recorder = ObservationRecorder(timestamp: { [:] }) { lines.objects.append($0) }
            freed = recorder
            try recorder.attach(to: application)
            try application.perform(.launch)
        }
        #expect(freed != nil, "the application holds its delegate")
        application.delegate = nil
        #expect(freed == nil)
        let before = lines.objects.count
        try application.notifications.post(.accessory(id: "a1", connected: true))
        try loop.runUntilIdle()
        try application.perform(.home)
        try loop.runUntilIdle()
        #expect(lines.objects.count == before)
    }

    /// A sink that lets go of the last reference to its recorder while a
    /// line is reported: the recorder lives until the line is done (the
    /// observer holds it while it reports), then goes.
    @Test func aSinkThatDropsItsRecorderMidLineStillGetsTheWholeLine() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let lines = LineBox()
        weak var freed: ObservationRecorder?
        do {
            let recorder = ObservationRecorder(timestamp: { ["at": .number(2)] }) { line in
                lines.objects.append(line)
                if line["notification"] != nil { application.delegate = nil }
            }
            freed = recorder
            try recorder.attach(to: application)
            try application.perform(.launch)
        }
        try application.notifications.post(.accessory(id: "a1", connected: true))
        try loop.runUntilIdle()
        #expect(freed == nil)
        #expect(lines.objects.last?["notification"] == "accessoryDidConnect")
        #expect(lines.objects.last?["merged"] == .number(1))
        try application.notifications.post(.accessory(id: "a2", connected: true))
        try loop.runUntilIdle()
        #expect(lines.objects.filter { $0["notification"] != nil }.count == 1)
    }
}

/// Lines a test's sink collected (a class: the sink outlives the test's scope).
private final class LineBox {
    var objects: [JSONObject] = []
}

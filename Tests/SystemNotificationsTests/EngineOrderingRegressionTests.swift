import AppLifecycle
import MainLoop
import MainLoopJSON
import SystemNotifications
import Testing
import TestSupport

/// Regression tests for the defects on the public API: inputs take
/// effect in program order on the loop thread, and a keyed subject that
/// returns to its default is the same as one never seen.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct EngineOrderingRegressionTests {
    /// The lifecycle example of the guide "Using the loop": home, two orientation events, foreground,
    /// all on the loop thread, must give one net change after the resume.
    @Test func loopThreadInputsTakeEffectInProgramOrder() throws {
        let h = try CenterHarness()
        try h.observeAll()
        try h.app.perform(.launch)
        try h.app.perform(.home)
        try h.center.post(.orientation(.faceUp))
        try h.center.post(.orientation(.landscapeLeft))
        try h.app.perform(.foreground)
        try h.loop.runUntilIdle()
        #expect(h.take() == [#"orientationDidChange {"orientation":"landscapeLeft"} x2"#])
    }

    /// A second disconnect of an accessory is no change, and a subject back
    /// at its default is not stored.
    @Test func aSubjectBackAtItsDefaultIsTheSameAsOneNeverSeen() throws {
        let h = try CenterHarness()
        try h.observeAll()
        try h.app.perform(.launch)
        try h.post(.accessory(id: "dock", connected: true), .accessory(id: "dock", connected: false),
                   .accessory(id: "dock", connected: false))
        #expect(h.take() == [#"accessoryDidConnect {"accessory":"dock"} x1"#, #"accessoryDidDisconnect {"accessory":"dock"} x1"#])
        #expect(try h.center.currentValue(of: .accessory) == .object(JSONObject()))
        try h.app.perform(.home)
        try h.post(.accessory(id: "dock", connected: true), .accessory(id: "dock", connected: false))
        try h.app.perform(.foreground)
        #expect(h.take().isEmpty)
        #expect(try h.center.counters(for: .accessory).cancelled == 2)
    }
}

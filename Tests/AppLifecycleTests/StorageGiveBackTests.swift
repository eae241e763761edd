@testable import AppLifecycle
import MainLoop
@testable import SystemNotifications
import Testing
import TestSupport

/// An application gives the storage of a burst of
/// subjects back a while after the flush that freed it, and not while
/// bursts keep coming (they would regrow it each time).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct StorageGiveBackTests {
    @Test func aBurstOfSubjectsIsGivenBackFiveSecondsAfterTheFlushThatFreedIt() throws {
        let loop = try MainRunLoop(deterministic: true)
        var limits = CoalescingLimits()
        limits.maxSubjectsPerKind = 10_000
        let app = try Application(loop: loop, limits: limits)
        let center = app.notifications
        let burst = 3_000
        func hold(connected: Bool) throws {
            try app.perform(.home)
            for index in 0..<burst { try center.post(.accessory(id: "accessory-\(index)", connected: connected)) }
            try app.perform(.foreground)
        }
        func advance(by seconds: Double) throws { try loop.advance(by: .milliseconds(Int(seconds * 1000))) }
        try app.perform(.launch)
        try hold(connected: true)
        try hold(connected: false)
        #expect(app.table.storage.subjectPositions == burst, "kept at first: a burst may come back")
        try advance(by: 4)
        try hold(connected: true)  // it came back: the storage is in use again
        try hold(connected: false)
        try advance(by: 4.9)
        #expect(app.table.storage.subjectPositions == burst, "each freeing flush pushes the deadline back")
        try advance(by: 0.2)
        #expect(app.table.storage.subjectPositions == 0, "\(app.table.storage)")
        #expect(try app.table.subjectCount(of: .accessory) == 0)
        // Still a working table: a subject comes and goes as before.
        try hold(connected: true)
        #expect(try app.table.subjectCount(of: .accessory) == burst)
    }
}

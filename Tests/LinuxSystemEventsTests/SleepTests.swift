import Foundation
import Glibc
import MainLoopKit
import Testing
import TestSupport

/// Sleep through logind, against python-dbusmock's own `logind` template
/// on a private bus with a system bus's policy: a delay inhibitor is held,
/// `PrepareForSleep(true)` sends the active app to the background and
/// releases it once the app is suspended, the wake brings the app back
/// with what was held merged, and a forged announcement changes nothing.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(2)),
       .enabled(if: UnprivilegedPeer.available, "root and setpriv are needed to act as nobody"))
struct SleepTests {
    static func sleepInhibitors(_ bus: PrivateSystemBus) throws -> Int {
        let output = try bus.busctl(["call", "org.freedesktop.login1", "/org/freedesktop/login1",
                                     "org.freedesktop.login1.Manager", "ListInhibitors"])
        return output.components(separatedBy: "\"sleep\"").count - 1
    }

    static func announceSleep(_ bus: PrivateSystemBus, _ going: Bool, asNobody: Bool = false) throws {
        if asNobody {
            try HostileBusTests.spoof(bus, ["sleep", going ? "true" : "false", "-", "1"])
        } else {
            try HostileBusTests.spoof(bus, asNobody: false, ["owner-emit", "org.freedesktop.login1", "/org/freedesktop/login1",
                                                             "org.freedesktop.login1.Manager", "PrepareForSleep", "b",
                                                             going ? "[true]" : "[false]", "1"])
        }
    }

    @Test func theAppGoesToTheBackgroundBeforeSleepAndComesBackAfter() throws {
        let bus = try PrivateSystemBus(policy: .system)
        let rig = try HostileBusTests.launchedRig(bus)
        defer { try? rig.stop() }
        #expect(eventually(timeout: 10) { (try? rig.onLoop { $0.sources.holdsSleepDelay }) == true }, "\(rig.problems.value)")
        #expect(try Self.sleepInhibitors(bus) == 1)
        #expect(try rig.onLoop { $0.application.state } == .active)
        rig.notes.mutate { $0.removeAll() }

        // A forged announcement from nobody changes nothing.
        try Self.announceSleep(bus, true, asNobody: true)
        try SystemBusSourcesTests.setOrientation(bus, "left-up")
        #expect(eventually(timeout: 5) { rig.notes.value.contains { $0.contains("orientationDidChange") } }, "\(rig.notes.value)")
        #expect(try rig.onLoop { $0.application.state } == .active)
        #expect(try Self.sleepInhibitors(bus) == 1)
        rig.notes.mutate { $0.removeAll() }

        try Self.announceSleep(bus, true)
        #expect(eventually(timeout: 5) { (try? rig.onLoop { $0.application.state }) == .suspended })
        #expect(eventually(timeout: 5) { (try? Self.sleepInhibitors(bus)) == 0 }, "released once the app is suspended")
        #expect(try rig.onLoop { $0.sources.holdsSleepDelay } == false)

        // Asleep (as far as the app knows): changes are held.
        try SystemBusSourcesTests.setOrientation(bus, "normal")
        try SystemBusSourcesTests.setOrientation(bus, "right-up")
        #expect(eventually(timeout: 5) { rig.value(.orientation) == "landscapeLeft" || rig.value(.orientation) == "landscapeRight" })
        #expect(rig.notes.value.isEmpty, "held while suspended: \(rig.notes.value)")

        try Self.announceSleep(bus, false)
        #expect(eventually(timeout: 5) { (try? rig.onLoop { $0.application.state }) == .active })
        #expect(eventually(timeout: 5) { rig.notes.value.contains { $0.contains("orientationDidChange") && $0.contains("merged from 2") } },
                "\(rig.notes.value)")
        #expect(eventually(timeout: 10) { (try? Self.sleepInhibitors(bus)) == 1 }, "taken again after the wake")
    }

    /// The sleep delay does not depend on the session: with a session
    /// logind's mock has no object for (its `GetSession` answers any name),
    /// whose properties are never read, the delay is held all the same.
    @Test func theDelayDoesNotWaitForTheSession() throws {
        let bus = try PrivateSystemBus(policy: .system)
        try SystemBusSourcesTests.startDaemons(bus)
        let rig = try HostileBusTests.Rig(bus: bus, session: "c9")
        defer { try? rig.stop() }
        #expect(eventually(timeout: 10) { (try? Self.sleepInhibitors(bus)) == 1 }, "\(rig.problems.value)")
        #expect(rig.value(.protectedData) == "unavailable", "fails closed while the session is not read")
    }

    /// An app that keeps running in the background (a background task
    /// that does not end) holds the sleep up to the limit, no longer.
    @Test func theSleepWaitsForTheAppNoLongerThanTheLimit() throws {
        let bus = try PrivateSystemBus(policy: .system)
        let rig = try HostileBusTests.launchedRig(bus)
        defer { try? rig.stop() }
        try rig.onLoop { rig in
            rig.sources.sleepLimit = .milliseconds(300)
            _ = try rig.application.beginBackgroundTask(name: "never ends") {}
        }
        #expect(eventually(timeout: 10) { (try? Self.sleepInhibitors(bus)) == 1 })
        let start = ContinuousClock.now
        try Self.announceSleep(bus, true)
        #expect(eventually(timeout: 5) { (try? Self.sleepInhibitors(bus)) == 0 })
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        #expect(try rig.onLoop { $0.application.state } == .background)
    }

    /// Scheduled work running when the machine prepares to sleep is told
    /// to stop (its expiration handler runs); once it completes, the app is
    /// suspended and the sleep goes on.
    @Test func aRunningScheduledTaskExpiresBeforeSleep() throws {
        let bus = try PrivateSystemBus(policy: .system)
        let rig = try HostileBusTests.launchedRig(bus)
        defer { try? rig.stop() }
        let expired = Locked(false)
        try rig.onLoop { rig in
            try rig.application.registerScheduledTask(identifier: "refresh") { task in
                task.expirationHandler = {
                    expired.mutate { $0 = true }
                    task.setTaskCompleted(success: false)
                }
            }
            try rig.application.submitScheduledTask(.appRefresh("refresh"))
            try rig.application.perform(.home)
        }
        #expect(eventually(timeout: 5) { (try? rig.onLoop { $0.application.runningScheduledTask != nil }) == true })
        #expect(try rig.onLoop { $0.application.state } == .background)
        #expect(eventually(timeout: 10) { (try? Self.sleepInhibitors(bus)) == 1 })
        try Self.announceSleep(bus, true)
        #expect(eventually(timeout: 5) { (try? Self.sleepInhibitors(bus)) == 0 }, "released once the task completed")
        #expect(expired.value)
        #expect(try rig.onLoop { $0.application.state } == .suspended)
    }
}

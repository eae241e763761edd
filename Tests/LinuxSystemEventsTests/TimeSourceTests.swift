import Foundation
import Glibc
import MainLoopKit
import MainLoop
import SystemNotifications
import Testing
import TestSupport

/// A scripted wall clock on a deterministic loop: UTC-like days of 86,400 s
/// starting at `epoch`, with DST transitions at the given instants.
final class ScriptedWallClock: WallClock {
    let loop: MainRunLoop
    let epoch: Double
    var transitions: [Double]
    var zone = "Zone/A"

    init(loop: MainRunLoop, epoch: Double, transitions: [Double] = []) {
        self.loop = loop
        self.epoch = epoch
        self.transitions = transitions
    }

    func now() -> Double { epoch + loop.now.seconds }
    func nextLocalMidnight(after time: Double) -> Double { (time / 86_400).rounded(.down) * 86_400 + 86_400 }
    func nextDaylightSavingTransition(after time: Double) -> Double? { transitions.first { $0 > time } }
    func zoneIdentity() -> String { zone }
}

/// A wall clock that counts its DST searches.
final class CountingWallClock: WallClock {
    let base: any WallClock
    let searched: () -> Void
    init(_ base: any WallClock, searched: @escaping () -> Void) {
        self.base = base
        self.searched = searched
    }

    func now() -> Double { base.now() }
    func nextLocalMidnight(after time: Double) -> Double { base.nextLocalMidnight(after: time) }
    func nextDaylightSavingTransition(after time: Double) -> Double? {
        searched()
        return base.nextDaylightSavingTransition(after: time)
    }
    func zoneIdentity() -> String { base.zoneIdentity() }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct InjectedClockTimeSourceTests {
    private func source(_ clock: ScriptedWallClock) throws -> (SignificantTimeChangeSource, () -> [String]) {
        var events: [String] = []
        let source = try SignificantTimeChangeSource(loop: clock.loop, clock: clock, watcher: nil, detectClockSet: false) {
            events.append("\($0.value.stringValue!)@\(Int(clock.now()))")
        }
        return (source, { defer { events.removeAll() }; return events })
    }

    @Test func midnightFiresAtEachLocalMidnightAndReArms() throws {
        let loop = try MainRunLoop(deterministic: true)
        let clock = ScriptedWallClock(loop: loop, epoch: 86_400 * 10 - 30)
        let (source, take) = try source(clock)
        #expect(source.nextMidnight == 86_400 * 10)
        try loop.advance(by: .seconds(29))
        #expect(take().isEmpty, "never early")
        try loop.advance(by: .seconds(1))
        #expect(take() == ["midnight@864000"])
        try loop.advance(by: .seconds(86_400))
        #expect(take() == ["midnight@950400"])
    }

    @Test func daylightSavingFiresAtEachTransition() throws {
        let loop = try MainRunLoop(deterministic: true)
        let clock = ScriptedWallClock(loop: loop, epoch: 1_000, transitions: [1_500, 5_000])
        let (source, take) = try source(clock)
        try loop.advance(by: .seconds(499))
        #expect(take().isEmpty)
        try loop.advance(by: .seconds(4_000))
        #expect(take() == ["daylightSaving@1500", "daylightSaving@5000"])
        #expect(source.nextDaylightSavingTransition == nil, "no transition left in the script")
    }

    /// The DST search (a year of `localtime_r` calls) waits for the loop's
    /// first turn, so it is not part of a service's start-up; reading the
    /// transition sooner runs it then. Either way it searches from the
    /// instant the source was made.
    @Test func theDaylightSavingSearchWaitsForTheFirstTurnOrARead() throws {
        let loop = try MainRunLoop(deterministic: true)
        let clock = ScriptedWallClock(loop: loop, epoch: 1_000, transitions: [1_500])
        var searches = 0
        let counting = CountingWallClock(clock) { searches += 1 }
        let source = try SignificantTimeChangeSource(loop: loop, clock: counting, watcher: nil, detectClockSet: false) { _ in }
        #expect(searches == 0, "not searched while the source is made")
        try loop.runUntilIdle()
        #expect(searches == 1, "searched in the first turn")
        #expect(source.nextDaylightSavingTransition == 1_500)
        #expect(searches == 1, "a read after the first turn searches nothing more")

        let early = try SignificantTimeChangeSource(loop: loop, clock: counting, watcher: nil, detectClockSet: false) { _ in }
        #expect(early.nextDaylightSavingTransition == 1_500, "a read before the first turn searches at once")
        #expect(searches == 2)
        try loop.runUntilIdle()
        #expect(searches == 2, "the first turn then finds it done")
    }

    @Test func aZoneChangePostsTimeZoneOnceAndReArmsTheTimers() throws {
        let loop = try MainRunLoop(deterministic: true)
        let clock = ScriptedWallClock(loop: loop, epoch: 0)
        let (source, take) = try source(clock)
        source.checkTimeZone()
        #expect(take().isEmpty, "same zone: nothing")
        clock.zone = "Zone/B"
        clock.transitions = [100]
        source.checkTimeZone()
        #expect(take() == ["timeZone@0"])
        #expect(source.nextDaylightSavingTransition == 100)
        try loop.advance(by: .seconds(100))
        #expect(take() == ["daylightSaving@100"])
    }
}

/// Tests that change the real clock run one at a time (the TZ test runs in
/// a child process of its own).
@Suite(.ownThread, .serialized, .timeLimit(.minutes(2))) struct RealTimeSourceTests {
    @Test func aReplacedZoneFileIsARealTimeZoneChange() throws {
        let directory = TemporaryDirectory()
        let zoneFile = directory.file("localtime")
        copyFile("/usr/share/zoneinfo/Europe/Paris", zoneFile)
        let loop = try MainRunLoop()
        let watcher = try FileWatcher(loop: loop)
        var reasons: [String] = []
        let source = try SignificantTimeChangeSource(
            loop: loop, clock: SystemWallClock(localtimePath: zoneFile), watcher: watcher, zoneFiles: [zoneFile],
            detectClockSet: false) { event in
                reasons.append(event.value.stringValue!)
                loop.stop()
            }
        try loop.executeInLoop { copyFile("/usr/share/zoneinfo/Asia/Tokyo", zoneFile) }
        loop.scheduleTimer(after: .seconds(5)) { loop.stop() }
        try loop.run()
        #expect(reasons == ["timeZone"])
        _ = source
    }

    /// In a child process of its own (an exit test): TZ belongs to the
    /// process, and `setenv` here would race with every other suite that
    /// reads local time in parallel.
    @Test func systemClockFindsARealDaylightSavingTransition() async {
        await #expect(processExitsWith: .success) {
            setenv("TZ", ":/usr/share/zoneinfo/Europe/Paris", 1)
            let clock = SystemWallClock()
            // 2026-01-01T00:00:00Z: Paris springs forward on 2026-03-29 at 01:00 UTC.
            guard clock.nextDaylightSavingTransition(after: 1_767_225_600) == 1_774_746_000 else { exit(1) }
            // Local midnight in Paris (UTC+1 in January) is 23:00 UTC.
            guard clock.nextLocalMidnight(after: 1_767_225_600) == 1_767_222_000 + 86_400 else { exit(2) }
        }
    }

    /// Setting CLOCK_REALTIME to its own current value is harmless and still
    /// cancels a TFD_TIMER_CANCEL_ON_SET timer: a real clockSet.
    @Test(.enabled(if: getuid() == 0, "setting the clock needs root"))
    func settingTheRealClockPostsClockSet() throws {
        let loop = try MainRunLoop()
        var reasons: [String] = []
        let source = try SignificantTimeChangeSource(loop: loop, clock: SystemWallClock(), watcher: nil) { event in
            reasons.append(event.value.stringValue!)
            loop.stop()
        }
        try loop.executeInLoop {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            if clock_settime(CLOCK_REALTIME, &now) != 0 { reasons.append("clock_settime failed: errno \(errno)") }
        }
        loop.scheduleTimer(after: .seconds(5)) { loop.stop() }
        try loop.run()
        #expect(reasons.first == "clockSet", "\(reasons)")
        _ = source
    }
}

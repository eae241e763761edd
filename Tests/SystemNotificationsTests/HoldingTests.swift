import AppLifecycle
import Glibc
import MainLoop
import MainLoopJSON
import SystemNotifications
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct HoldingTests {
    @Test func accountingBalancesHeldAgainstFoldedCancelledAndDiscarded() throws {
        let h = try CenterHarness()
        try h.observeAll()
        try h.app.perform(.launch)
        try h.app.perform(.home)
        try h.post(.orientation(.faceUp), .orientation(.faceDown),           // folded 2
                   .locale("en_US"),                                           // unchanged: ignored
                   .batteryState(.charging), .batteryState(.unplugged),        // cancelled 2
                   .accessory(id: "a", connected: true), .accessory(id: "b", connected: true))
        #expect(h.center.isHolding)
        #expect(h.center.heldSlotCount == 5, "orientation, battery state, accessory kind + 2 subjects")
        try h.app.perform(.foreground)
        let orientation = try h.center.counters(for: .orientation)
        #expect(orientation.held == 2 && orientation.folded == 2 && orientation.deliveredMerged == 1 && orientation.pending == 0)
        let battery = try h.center.counters(for: .batteryState)
        #expect(battery.cancelled == 2 && battery.deliveredMerged == 0)
        #expect(try h.center.counters(for: .locale).ignoredUnchanged == 1)
        let accessory = try h.center.counters(for: .accessory)
        #expect(accessory.deliveredMerged == 2 && accessory.folded == 2)
        #expect(h.center.heldSlotCount == 0)

        try h.app.perform(.home)
        try h.post(.proximity(true), .proximity(false), .proximity(true))
        try h.app.perform(.purge)
        let proximity = try h.center.counters(for: .proximity)
        #expect(proximity.held == 3 && proximity.discarded == 3 && proximity.pending == 0)
        for (_, counters) in h.center.statistics {
            #expect(counters.held == counters.folded + counters.cancelled + counters.discarded + counters.pending)
            #expect(counters.pending == 0)
        }
    }

    @Test func customKindsRegisterOnceAndBehaveLikeStandardShapes() throws {
        let h = try CenterHarness()
        try h.observeAll()
        let rule = CoalescingRule(kind: "coolingState", shape: .lastValue, defaultValue: "nominal",
                                  eventFormat: .value(.oneOf(["nominal", "serious"])),
                                  naming: .fixed("coolingStateDidChange"), payload: .value(key: "state"))
        let cooling = try h.center.register(rule)
        #expect(throws: NotificationCenterError.duplicateKind("coolingState")) { try h.center.register(rule) }
        try h.app.perform(.launch)
        try h.app.perform(.home)
        try h.post(SystemEvent(kind: cooling, value: "serious"), SystemEvent(kind: "coolingState", value: "nominal"),
                   SystemEvent(kind: cooling, value: "serious"))
        try h.app.perform(.foreground)
        #expect(h.take() == [#"coolingStateDidChange {"state":"serious"} x3"#])
    }

    /// Holding is O(1) per event and bounded by kinds and subjects: ten
    /// million events of the standard kinds, through the real loop and
    /// center, leave a handful of slots and flat memory. It runs in a child
    /// process of its own (an exit test), because resident memory is
    /// process-wide and the other suites, running in parallel, grow it too.
    @Test func tenMillionHeldEventsKeepMemoryFlat() async {
        await #expect(processExitsWith: .success) {
            let report = try! HoldingTests.holdTenMillionEvents()
            // Storing even one pointer per held event would add 9M × 8 B = 72 MB.
            let flat = report.growth < 4 * 1024 * 1024
            let bounded = report.slots <= 12 + 5 + 7 + 3 && report.delivered <= 12 + 5 + 7 + 3
            guard flat, bounded, report.held == 10_000_000, report.allResolved else {
                let line = "growth \(report.growth) B, slots \(report.slots), held \(report.held), "
                    + "delivered \(report.delivered), resolved \(report.allResolved)\n"
                _ = line.withCString { write(2, $0, strlen($0)) }
                exit(1)
            }
        }
    }

    struct HoldingReport {
        let growth: Int, slots: Int, held: Int, delivered: Int, allResolved: Bool
    }

    static func holdTenMillionEvents() throws -> HoldingReport {
        let h = try CenterHarness()
        try h.observeAll()
        try h.app.perform(.launch)
        try h.app.perform(.home)
        // Event c is occurrence k = c / 8 of kind c % 8; each kind's value
        // (per subject for keyed kinds) alternates, so every event is a real
        // change and is held.
        let keys = (0..<5).map { "key\($0)" }, accessories = (0..<7).map { "acc\($0)" }
        let screens = (0..<3).map { "s\($0)" }, modes = ["m0", "m1"]
        func event(_ c: Int) -> SystemEvent {
            let k = c / 8
            switch c % 8 {
            case 0: return .orientation(k % 2 == 0 ? .faceUp : .faceDown)
            case 1: return .locale(k % 2 == 0 ? "de_DE" : "fr_FR")
            case 2: return .userDefault(key: keys[k % 5], value: .number(Double((k / 5) % 2)))
            case 3: return .significantTimeChange(.midnight)
            case 4: return .batteryLevel(k % 2 == 0 ? 0.75 : 0.25)
            case 5: return .accessory(id: accessories[k % 7], connected: (k / 7) % 2 == 0)
            case 6: return .screenMode(screen: screens[k % 3], mode: modes[(k / 3) % 2])
            default: return .proximity(k % 2 == 0)
            }
        }
        let batch = 10_000
        func post(batches: Range<Int>) throws {
            for b in batches {
                for c in b * batch..<(b + 1) * batch { try h.center.post(event(c)) }
                try h.loop.runUntilIdle()
            }
        }
        try post(batches: 0..<100)  // warm up: 1M events
        let before = residentBytes()
        try post(batches: 100..<1_000)  // 9M more
        let growth = residentBytes() - before
        let slots = h.center.heldSlotCount
        let held = h.center.statistics.reduce(0) { $0 + $1.counters.held }
        try h.app.perform(.foreground)
        return HoldingReport(growth: growth, slots: slots, held: held, delivered: h.take().count,
                             allResolved: h.center.statistics.allSatisfy { $0.counters.pending == 0 })
    }

    static func residentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = read(fd, &buffer, 128)
        let fields = String(decoding: buffer[0..<max(0, count)], as: UTF8.self).split(separator: " ")
        return (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct LifetimeTests {
    /// A loop, application and center dropped together are freed, and with
    /// the loop its eventfds (the loop's inbox and timers refer back to the
    /// application, so a strong back-reference would leak them all).
    @Test func droppingALoopApplicationAndCenterFreesThemAll() throws {
        weak var weakLoop: MainRunLoop?
        weak var weakApplication: Application?
        try {
            let loop = try MainRunLoop()
            let application = try Application(loop: loop)
            let center = SystemNotificationCenter(application: application)
            try center.addObserver { _ in }
            try application.perform(.launch)
            try center.post(.orientation(.faceUp))
            try loop.runUntilIdle()
            weakLoop = loop
            weakApplication = application
        }()
        #expect(weakApplication == nil)
        #expect(weakLoop == nil)
    }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct ReleasedOwnerTests {
    /// Events and timers that arrive after their owner was released (on the
    /// loop thread) are dropped, not delivered into freed memory.
    @Test func aReleasedCenterAndApplicationStopTheirChannelsAndTimers() throws {
        let loop = try MainRunLoop(deterministic: true)
        var poster: EngineInputPoster?
        try {
            let application = try Application(loop: loop)
            let center = SystemNotificationCenter(application: application)
            try application.perform(.launch)
            _ = try application.beginBackgroundTask(name: "t")
            try application.scheduleTimer(after: .seconds(1)) {}
            try application.perform(.home)  // background deadlines are now scheduled
            poster = center.poster
        }()
        #expect(loop.nextTimerDeadline == nil, "the released application's timers were cancelled")
        #expect(throws: MainLoopError.sourceRemoved) { try poster!.post(SystemEvent.orientation(.faceUp)) }
        try loop.advance(by: .seconds(600))
    }

    @Test func aClosedChannelDeliversNothingAndRejectsPosts() throws {
        let loop = try MainRunLoop(deterministic: true)
        var received: [Int] = []
        let channel = try loop.makeChannel(of: Int.self) { received.append($0) }
        try channel.post(1)
        try channel.close()
        #expect(throws: MainLoopError.sourceRemoved) { try channel.post(2) }
        #expect(throws: MainLoopError.sourceRemoved) { try channel.close() }
        try loop.runUntilIdle()
        #expect(received.isEmpty, "events queued before close are dropped")
    }
}

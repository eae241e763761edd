import MainLoopJSON
import SystemNotifications
import Testing
import TestSupport

/// The pure coalescing engine on its own, with no loop and no
/// `Application`: recording in each holding mode, the flush of
/// held slots (one merged notification per kind or subject, net-zero
/// dropped), and the accounting identity.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct CoalescingTableTests {
    @Test func liveChangesAreDeliveredAndRepeatsAreUnchanged() throws {
        var table = CoalescingTable()
        let first = try table.record(.orientation(.faceUp), mode: .live)
        #expect(first.effect == .live)
        #expect(table.liveNotification(first).payload == ["orientation": "faceUp"])
        table.finishLive(first)
        #expect(try table.record(.orientation(.faceUp), mode: .live).effect == .unchanged)
        #expect(try table.record(.orientation(.portrait), mode: .notRunning).effect == .changedWhileNotRunning)
        #expect(try table.currentValue(of: .orientation) == "portrait")
    }

    @Test func heldEventsFlushAsOneNetChangePerKindAndSubject() throws {
        var table = CoalescingTable()
        try table.setInitialValue(.orientation(.portrait))
        for event: SystemEvent in [.orientation(.faceUp), .orientation(.landscapeLeft),      // net: landscapeLeft
                                   .batteryLevel(0.5), .batteryLevel(1.0),                    // back to default: net zero
                                   .accessory(id: "dock", connected: true),
                                   .accessory(id: "pen", connected: true), .accessory(id: "pen", connected: false)] {
            #expect(try table.record(event, mode: .holding).effect == .held, "\(event.kind)")
        }
        #expect(try table.subjectCount(of: .accessory) >= 1)
        let flushed = table.flushNotifications().map { "\($0)" }
        #expect(flushed == [#"orientationDidChange {"orientation":"landscapeLeft"} (merged from 2)"#,
                            #"accessoryDidConnect {"accessory":"dock"}"#],
                "\(flushed)")
        #expect(table.heldSlotCount == 0)
        for (kind, counters) in table.statistics {
            #expect(counters.held == counters.folded + counters.cancelled + counters.discarded + counters.pending,
                    "accounting identity for \(kind.name): \(counters)")
        }
    }

    /// The held list (linked through the kinds and the subject records)
    /// keeps first-held order across kinds and subjects, suspension after
    /// suspension, while subjects are freed (back at their default) and
    /// their records reused by new ones, and after a discard.
    @Test func firstHeldOrderHoldsAcrossSuspensionsAndReusedSubjects() throws {
        var table = CoalescingTable()
        func hold(_ events: [SystemEvent]) throws -> [String] {
            for event in events { _ = try table.record(event, mode: .holding) }
            return table.flushNotifications().map { "\($0.name) \($0.subject ?? "-")" }
        }
        #expect(try hold([.accessory(id: "a", connected: true), .orientation(.faceUp),
                          .accessory(id: "b", connected: true), .batteryLevel(0.5), .accessory(id: "a", connected: true)])
                == ["accessoryDidConnect a", "orientationDidChange -", "accessoryDidConnect b", "batteryLevelDidChange -"])
        // a and b go back to their default: freed after this flush.
        #expect(try hold([.batteryLevel(0.25), .accessory(id: "b", connected: false), .accessory(id: "a", connected: false)])
                == ["batteryLevelDidChange -", "accessoryDidDisconnect b", "accessoryDidDisconnect a"])
        // New subjects take the freed records; the order is still first held.
        #expect(try hold([.accessory(id: "d", connected: true), .accessory(id: "c", connected: true),
                          .orientation(.portrait), .accessory(id: "d", connected: false), .accessory(id: "d", connected: true)])
                == ["accessoryDidConnect d", "accessoryDidConnect c", "orientationDidChange -"])
        _ = try table.record(.accessory(id: "e", connected: true), mode: .holding)
        _ = try table.record(.orientation(.faceDown), mode: .holding)
        table.discard()
        #expect(try hold([.orientation(.landscapeLeft), .accessory(id: "f", connected: true)])
                == ["orientationDidChange -", "accessoryDidConnect f"])
    }

    @Test func discardDropsWhatWasHeld() throws {
        var table = CoalescingTable()
        _ = try table.record(.orientation(.faceUp), mode: .holding)
        #expect(table.heldSlotCount == 1)
        table.discard()
        #expect(table.heldSlotCount == 0)
        #expect(table.flushNotifications().isEmpty)
        #expect(try table.counters(for: .orientation).discarded == 1)
    }
}

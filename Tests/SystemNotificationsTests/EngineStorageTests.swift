@testable import SystemNotifications
import Testing
import TestSupport

/// The engine's own storage (``OwnedArray``, ``FreeListArray``): elements
/// kept in order across growth, removed in place, and every element
/// destroyed exactly once (counted with a class whose deinit counts).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct EngineStorageTests {
    final class Tracked {
        let value: Int
        let onDeinit: () -> Void
        init(_ value: Int, onDeinit: @escaping () -> Void) {
            self.value = value
            self.onDeinit = onDeinit
        }
        deinit { onDeinit() }
    }

    final class Count { var value = 0 }

    @Test func ownedArrayKeepsOrderAcrossGrowthAndFreesEveryElement() {
        let destroyed = Count()
        do {
            var array = OwnedArray<Tracked>()
            for value in 0..<100 { array.append(Tracked(value) { destroyed.value += 1 }) }
            #expect(array.count == 100)
            #expect(array.indices.map { array[$0].value } == Array(0..<100))
            array[7] = Tracked(700) { destroyed.value += 1 }
            #expect(destroyed.value == 1, "the replaced element is destroyed")
            #expect(array[7].value == 700)
        }
        #expect(destroyed.value == 101, "deinit destroys what is left")
    }

    @Test func ownedArrayRemovesInPlaceAndIsReusable() {
        let destroyed = Count()
        var array = OwnedArray<Tracked>()
        for value in 0..<10 { array.append(Tracked(value) { destroyed.value += 1 }) }
        array.removeAll { $0.value % 3 == 0 }
        #expect(array.indices.map { array[$0].value } == [1, 2, 4, 5, 7, 8])
        #expect(destroyed.value == 4)
        array.removeAll()
        #expect(array.count == 0)
        #expect(destroyed.value == 10)
        array.append(Tracked(42) { destroyed.value += 1 })
        #expect(array[0].value == 42)
    }

    @Test func freeListReusesFreedPositions() {
        var list = FreeListArray<String>()
        let first = list.insert("a"), second = list.insert("b")
        list.free(first, placeholder: "")
        #expect(list.insert("c") == first, "a freed position is reused")
        #expect(list[second] == "b")
        #expect(list[first] == "c")
        #expect(list.capacity == 2)
    }

    /// `compact` moves movable elements from the end into the lowest free
    /// positions, stops at one that cannot move, and keeps the free list
    /// right (later inserts reuse exactly the positions still free).
    @Test func freeListCompactsAroundAnElementThatCannotMove() {
        var list = FreeListArray<String>()
        for name in ["a", "b", "c", "d", "e", "f", "g", "h"] { _ = list.insert(name) }
        for index in [1, 2, 6] { list.free(index, placeholder: "") }  // a _ _ d e f _ h
        var moves: [String] = []
        list.compact(isFree: { $0.isEmpty }, canMove: { $0 != "f" }) { moves.append("\($0)→\($2) from \($1)") }
        // h moves to 1; then f is last and cannot move: 2 stays free.
        #expect(moves == ["h→1 from 7"])
        #expect(list.capacity == 6 && list.freeCount == 1)
        #expect((0..<6).map { list[$0] } == ["a", "h", "", "d", "e", "f"])
        #expect(list.insert("x") == 2, "the one free position left is reused")
        #expect(list.insert("y") == 6)
    }

    /// What a first hold over 10^6 subjects streams
    /// through the cache. A record is half a cache line (it was 96 bytes,
    /// then 64; its name and notification details are kept beside the
    /// slab, and the held value after the latest event is its value).
    @Test func aSubjectRecordIsHalfACacheLine() {
        #expect(MemoryLayout<SubjectRecord>.stride == 32)
    }

    /// A record keeps 32 bits of a subject's held count; the table carries
    /// the rest, so a subject that folds over 2^32 − 1 events in one
    /// suspension still reports them all. (Four billion events take
    /// minutes: the count is set near the edge, then real events cross it.)
    @Test func aHeldCountPastThirtyTwoBitsStaysExact() throws {
        var table = CoalescingTable()
        _ = try table.record(.accessory(id: "a", connected: true), mode: .holding)
        let subject = try table.prepare(.accessory(id: "a", connected: true)).subject
        table.subjectRecords[Int(subject)].heldCount = UInt32.max - 1
        // One more reaches UInt32.max, the next crosses it.
        _ = try table.record(.accessory(id: "a", connected: false), mode: .holding)
        #expect(table.heldCountCarries.isEmpty)
        _ = try table.record(.accessory(id: "a", connected: true), mode: .holding)
        #expect(table.heldCountCarries.count == 1)
        let notifications = table.flushNotifications()
        #expect(notifications.count == 1)
        #expect(notifications.first?.merged == Int(UInt32.max) + 1)
        #expect(table.heldCountCarries.isEmpty, "the flush takes the carry")
    }

    /// A discard (the app died) drops a carried count with the rest, so the
    /// next suspension counts from zero.
    @Test func aDiscardDropsACarriedCount() throws {
        var table = CoalescingTable()
        _ = try table.record(.accessory(id: "a", connected: true), mode: .holding)
        let subject = try table.prepare(.accessory(id: "a", connected: true)).subject
        table.subjectRecords[Int(subject)].heldCount = UInt32.max
        _ = try table.record(.accessory(id: "a", connected: false), mode: .holding)
        #expect(table.heldCountCarries.count == 1)
        table.discard()
        #expect(table.heldCountCarries.isEmpty)
        _ = try table.record(.accessory(id: "a", connected: true), mode: .holding)
        #expect(table.flushNotifications().map(\.merged) == [1])
    }

    /// A burst of 100,000 subjects held, flushed, then
    /// all back at their defaults left the storage of the burst behind for
    /// good (subject records, name index, held list, flush entries). Once
    /// they are freed it is given back; a pinned subject keeps its index,
    /// and a subject still live moves down with its name index following.
    @Test func aBurstOfSubjectsGivesItsStorageBackOnceFreed() throws {
        var limits = CoalescingLimits()
        limits.maxSubjectsPerKind = 200_000
        var table = CoalescingTable(limits: limits)
        let pinned = try table.prepare(.accessory(id: "pinned", connected: true), pinned: true)
        let burst = 100_000
        for round in 0..<2 {
            for index in 0..<burst { _ = try table.record(.accessory(id: "a\(index)", connected: true), mode: .holding) }
            #expect(table.flushNotifications().count == burst)
            #expect(table.storage.subjectPositions > burst, "round \(round): the burst is stored")
            // All but the last one go back to their default.
            for index in 0..<(burst - 1) { _ = try table.record(.accessory(id: "a\(index)", connected: false), mode: .holding) }
            #expect(table.flushNotifications().count == burst - 1)
            #expect(table.storage.subjectPositions == burst + 1, "kept until given back")
            let gaveBack = table.giveBackStorage(), gaveBackAgain = table.giveBackStorage()
            #expect(gaveBack)
            #expect(!gaveBackAgain, "nothing left to give back")
            let storage = table.storage
            #expect(storage.subjectPositions <= 4, "round \(round): \(storage)")
            #expect(storage.subjectStorage <= 1024 && storage.nameIndexCapacity <= 1024
                    && storage.heldKeysCapacity <= 4096 && storage.flushEntryStorage <= 4096, "round \(round): \(storage)")
            #expect(try table.subjectCount(of: .accessory) == 2, "the pinned one and the last of the burst, still connected")
            #expect(try table.currentValue(of: .accessory, subject: "a\(burst - 1)") == true)
            // The moved subject is still found by name and changes in place.
            _ = try table.record(.accessory(id: "a\(burst - 1)", connected: false), mode: .holding)
            #expect(table.flushNotifications().map { "\($0)" } == [#"accessoryDidDisconnect {"accessory":"a\#(burst - 1)"}"#])
            #expect(try table.subjectCount(of: .accessory) == 1, "the pinned one")
        }
        #expect(try table.record(pinned, mode: .live).effect == .live, "the pinned subject's prepared event still works")
    }
}

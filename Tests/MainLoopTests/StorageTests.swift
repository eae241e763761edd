@testable import MainLoop
import Testing
import TestSupport

/// Direct tests of the loop's unsafe storage: each type
/// hand-rolls its memory, so each is checked for order, growth, removal and
/// (where elements are objects) every element destroyed exactly once.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct StorageTests {
    /// Counts deinitializations.
    final class Tracked {
        final class Counter { var destroyed = 0 }
        let value: Int
        let counter: Counter
        init(_ value: Int, _ counter: Counter) { self.value = value; self.counter = counter }
        deinit { counter.destroyed += 1 }
    }

    @Test func ringBufferIsFIFOAcrossGrowthAndWraparound() {
        let ring = RingBuffer<Int>(initialCapacity: 4)
        var model: [Int] = []
        var random = SeededRandom(state: 7)
        var next = 0
        for _ in 0..<5_000 {
            if Int.random(in: 0..<3, using: &random) < 2 {
                ring.append(next)
                model.append(next)
                next += 1
            } else {
                #expect(ring.popFirst() == (model.isEmpty ? nil : model.removeFirst()))
            }
            #expect(ring.count == model.count)
        }
        while let first = ring.popFirst() { #expect(first == model.removeFirst()) }
        #expect(model.isEmpty && ring.count == 0)
    }

    @Test func ringBufferDestroysEveryElementExactlyOnce() {
        let counter = Tracked.Counter()
        do {
            let ring = RingBuffer<Tracked>(initialCapacity: 2)
            for index in 0..<100 { ring.append(Tracked(index, counter)) }
            for _ in 0..<30 { _ = ring.popFirst() }         // popped: destroyed when dropped
            #expect(counter.destroyed == 30)
            for index in 100..<150 { ring.append(Tracked(index, counter)) }  // wraps and grows
            ring.removeAll()                                   // 120 destroyed here
            #expect(counter.destroyed == 150)
            for index in 0..<10 { ring.append(Tracked(index, counter)) }     // left for deinit
        }
        #expect(counter.destroyed == 160)
    }

    /// A batch (a ring of posts from other threads) moves into the queue
    /// behind what it holds, in order, whatever either ring's wrap point
    /// and however much the queue must grow, and is left empty and reusable.
    @Test func aRingMovedIntoAnotherKeepsOrderAcrossWraparoundAndGrowth() {
        let ring = RingBuffer<Int>(initialCapacity: 4)
        let batch = RingBuffer<Int>(initialCapacity: 1)
        var model: [Int] = []
        var random = SeededRandom(state: 23)
        var next = 0
        for _ in 0..<2_000 {
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                // The batch's head moved first (an append and a pop each),
                // so its contents often wrap around its block too.
                for _ in 0..<Int.random(in: 0..<64, using: &random) {
                    batch.append(-1)
                    _ = batch.popFirst()
                }
                for _ in 0..<Int.random(in: 0..<40, using: &random) {
                    batch.append(next)
                    model.append(next)
                    next += 1
                }
                ring.moveAll(from: batch)
                #expect(batch.isEmpty)
            case 1:
                ring.append(next)
                model.append(next)
                next += 1
            default:
                for _ in 0..<Int.random(in: 0..<10, using: &random) {
                    #expect(ring.popFirst() == (model.isEmpty ? nil : model.removeFirst()))
                }
            }
            #expect(ring.count == model.count)
        }
        while let first = ring.popFirst() { #expect(first == model.removeFirst()) }
        #expect(model.isEmpty)
    }

    /// Elements moved from one ring to another are destroyed once, by the
    /// ring they moved to; elements left in a batch (a closed channel's)
    /// once, by the batch.
    @Test func aMovedRingDestroysEveryElementExactlyOnce() {
        let counter = Tracked.Counter()
        do {
            let ring = RingBuffer<Tracked>(initialCapacity: 2)
            let batch = RingBuffer<Tracked>(initialCapacity: 1)
            for index in 0..<50 { batch.append(Tracked(index, counter)) }
            ring.moveAll(from: batch)
            #expect(counter.destroyed == 0, "a move destroys nothing")
            for _ in 0..<20 { _ = ring.popFirst() }
            #expect(counter.destroyed == 20)
            for index in 0..<30 { batch.append(Tracked(index, counter)) }
            batch.removeAll()
            #expect(counter.destroyed == 50)
            batch.append(Tracked(0, counter))
            ring.moveAll(from: batch)                                      // the one-element path
            #expect(counter.destroyed == 50 && ring.count == 31)
            for index in 0..<5 { batch.append(Tracked(index, counter)) }   // left for the batch's deinit
        }
        #expect(counter.destroyed == 86)
    }

    @Test func timerHeapOrdersByDeadlineThenInsertionAcrossGrowth() {
        let heap = TimerHeap()
        var random = SeededRandom(state: 11)
        // The model: (deadline, insertion number) per live slot.
        var model: [Int32: (deadline: Int64, order: Int)] = [:]
        var insertions = 0
        for _ in 0..<3_000 {
            let slot = Int32.random(in: 0..<500, using: &random)   // beyond the initial 64 slots
            if model[slot] != nil, Bool.random(using: &random) {
                heap.remove(slot: slot)
                model[slot] = nil
            } else if model[slot] == nil {
                let deadline = Int64.random(in: 0..<50, using: &random)   // many ties
                heap.insert(slot: slot, deadline: deadline)
                model[slot] = (deadline, insertions)
                insertions += 1
            }
            #expect(heap.count == model.count)
            #expect(heap.contains(slot: slot) == (model[slot] != nil))
            if Int.random(in: 0..<16, using: &random) == 0 {
                // Reading the order joins the staged entries to the heap:
                // sometimes one sift each, sometimes a rebuild (more staged
                // than heaped), so removals meet entries in both places.
                let earliest = model.min { ($0.value.deadline, $0.value.order) < ($1.value.deadline, $1.value.order) }
                #expect(heap.first?.slot == earliest?.key)
            }
        }
        let expected = model.sorted { ($0.value.deadline, $0.value.order) < ($1.value.deadline, $1.value.order) }.map(\.key)
        var taken: [Int32] = []
        while let first = heap.first {
            taken.append(first.slot)
            heap.remove(slot: first.slot)
        }
        #expect(taken == expected)
        #expect(heap.isEmpty && !heap.contains(slot: 0))
    }

    @Test func timerHeapRemoveAllEmptiesEverySlot() {
        let heap = TimerHeap()
        for slot in 0..<200 { heap.insert(slot: Int32(slot), deadline: Int64(200 - slot)) }
        heap.removeAll()
        #expect(heap.isEmpty)
        #expect((0..<200).allSatisfy { !heap.contains(slot: Int32($0)) })
        heap.insert(slot: 3, deadline: 1)
        #expect(heap.first?.slot == 3)
    }
}

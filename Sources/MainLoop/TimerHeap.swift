/// A binary min-heap of plain entries keyed by (deadline, sequence), with
/// O(log n) removal through a per-slot index, so sifting moves 24-byte
/// values and counts no references (each scheduled timer owns one slot;
/// ``TimerScheduler`` keeps the timer objects by slot).
///
/// Loop thread only. Every field is `@exclusivity(unchecked)`: the loop's
/// one-thread rule is the exclusivity guarantee, and the heap keeps its
/// entries in its own memory, so one heap level costs a compare and two
/// stores, with no array bookkeeping (the timer schedule+cancel row of `compare`).
final class TimerHeap {
    struct Entry {
        /// Nanoseconds on the loop's clock.
        var deadline: Int64
        /// FIFO tie-breaker: assigned each time a timer enters the heap.
        var sequence: UInt64
        /// The timer's slot.
        var slot: Int32

        @inline(__always)
        func isBefore(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    /// The heap, `count` entries in `storage` (its own memory: no
    /// uniqueness or bounds checks per access; nothing of it leaves the type).
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0
    /// Where each slot's entry is in `storage`, or -1; `slotCapacity` long.
    @exclusivity(unchecked) private var positions: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private var slotCapacity: Int
    @exclusivity(unchecked) private var nextSequence: UInt64 = 0

    init() {
        capacity = 64
        storage = .allocate(capacity: capacity)
        slotCapacity = 64
        positions = .allocate(capacity: slotCapacity)
        positions.initialize(repeating: -1, count: slotCapacity)
    }

    deinit {
        storage.deallocate()
        positions.deallocate()
    }

    var isEmpty: Bool { count == 0 }
    /// The earliest entry.
    var first: Entry? { count > 0 ? storage[0] : nil }
    /// The entries, in heap order (not sorted).
    var entries: UnsafeBufferPointer<Entry> { UnsafeBufferPointer(start: storage, count: count) }

    /// Whether `slot` has an entry.
    @inline(__always)
    func contains(slot: Int32) -> Bool { Int(slot) < slotCapacity && positions[Int(slot)] >= 0 }

    /// Adds `slot` at `deadline` (it must not be in the heap).
    func insert(slot: Int32, deadline: Int64) {
        if Int(slot) >= slotCapacity { growSlots(to: Int(slot) + 1) }
        if count == capacity { grow() }
        let entry = Entry(deadline: deadline, sequence: nextSequence, slot: slot)
        nextSequence &+= 1
        (storage + count).initialize(to: entry)
        count += 1
        siftUp(count - 1, entry)
    }

    /// Removes `slot`'s entry.
    func remove(slot: Int32) {
        let index = Int(positions[Int(slot)])
        precondition(index >= 0, "TimerHeap: slot \(slot) is not scheduled")
        positions[Int(slot)] = -1
        count -= 1
        guard index != count else { return }
        let moved = storage[count]
        if index > 0, moved.isBefore(storage[(index - 1) >> 1]) { siftUp(index, moved) } else { siftDown(index, moved) }
    }

    /// Removes every entry.
    func removeAll() {
        for index in 0..<count { positions[Int(storage[index].slot)] = -1 }
        count = 0
    }

    /// Puts `moving` at `start` or above it, moving larger parents down.
    private func siftUp(_ start: Int, _ moving: Entry) {
        var child = start
        while child > 0 {
            let parent = (child - 1) >> 1
            let above = storage[parent]
            guard moving.isBefore(above) else { break }
            storage[child] = above
            positions[Int(above.slot)] = Int32(child)
            child = parent
        }
        storage[child] = moving
        positions[Int(moving.slot)] = Int32(child)
    }

    /// Puts `moving` at `start` or below it, moving smaller children up.
    private func siftDown(_ start: Int, _ moving: Entry) {
        var parent = start
        while true {
            let left = 2 &* parent &+ 1
            guard left < count else { break }
            let right = left &+ 1
            let best = right < count && storage[right].isBefore(storage[left]) ? right : left
            let below = storage[best]
            guard below.isBefore(moving) else { break }
            storage[parent] = below
            positions[Int(below.slot)] = Int32(parent)
            parent = best
        }
        storage[parent] = moving
        positions[Int(moving.slot)] = Int32(parent)
    }

    private func grow() {
        let bigger = UnsafeMutablePointer<Entry>.allocate(capacity: capacity * 2)
        bigger.moveInitialize(from: storage, count: count)
        storage.deallocate()
        storage = bigger
        capacity *= 2
    }

    private func growSlots(to needed: Int) {
        var newCapacity = slotCapacity
        while newCapacity < needed { newCapacity *= 2 }
        let bigger = UnsafeMutablePointer<Int32>.allocate(capacity: newCapacity)
        bigger.moveInitialize(from: positions, count: slotCapacity)
        (bigger + slotCapacity).initialize(repeating: -1, count: newCapacity - slotCapacity)
        positions.deallocate()
        positions = bigger
        slotCapacity = newCapacity
    }
}

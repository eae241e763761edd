/// A binary min-heap of plain entries keyed by (deadline, sequence), with
/// O(log n) removal through a per-slot index, so sifting moves 24-byte
/// values and counts no references (each scheduled timer owns one slot;
/// ``TimerScheduler`` keeps the timer objects by slot).
///
/// Insertion is deferred: a new entry waits, unsorted, in a staging area
/// (with its sequence number, so its order is fixed when it is made) until
/// the order is next needed (``first``, ``entries``), and then joins the
/// heap. A timer scheduled and cancelled before that (a timeout reset
/// within one callback: the timer schedule+cancel row of `compare`) costs
/// an append and a swap-remove, and never touches the heap. What reads the
/// order (the loop's timer dispatch, arming the timerfd for an earlier
/// deadline) pays the insertions it deferred, each one the sift it would
/// have cost at once.
///
/// Loop thread only. Every field is `@exclusivity(unchecked)`: the loop's
/// one-thread rule is the exclusivity guarantee, and the heap keeps its
/// entries in its own memory, so one heap level costs a compare and two
/// stores, with no array bookkeeping.
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

    /// The heap, `heapCount` entries in `storage` (its own memory: no
    /// uniqueness or bounds checks per access; nothing of it leaves the type).
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var heapCount = 0
    /// Entries inserted since the order was last read, unsorted.
    @exclusivity(unchecked) private var staged: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) private var stagedCapacity: Int
    @exclusivity(unchecked) private var stagedCount = 0
    /// Where each slot's entry is, `slotCapacity` long: an index into
    /// `storage` (0 or more), -1 for none, or `-2 - i` for `staged[i]`.
    @exclusivity(unchecked) private var positions: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private var slotCapacity: Int
    @exclusivity(unchecked) private var nextSequence: UInt64 = 0

    init() {
        capacity = 64
        storage = PlainBuffer.allocate(Entry.self, capacity: capacity)
        stagedCapacity = 64
        staged = PlainBuffer.allocate(Entry.self, capacity: stagedCapacity)
        slotCapacity = 64
        positions = PlainBuffer.allocate(Int32.self, capacity: slotCapacity)
        positions.initialize(repeating: -1, count: slotCapacity)
    }

    deinit {
        PlainBuffer.free(storage)
        PlainBuffer.free(staged)
        PlainBuffer.free(positions)
    }

    /// How many entries there are.
    var count: Int { heapCount + stagedCount }
    var isEmpty: Bool { heapCount == 0 && stagedCount == 0 }

    /// The earliest entry (staged entries join the heap first).
    var first: Entry? {
        if stagedCount > 0 { joinStaged() }
        return heapCount > 0 ? storage[0] : nil
    }

    /// The entries, in heap order (not sorted; staged entries join first).
    var entries: UnsafeBufferPointer<Entry> {
        if stagedCount > 0 { joinStaged() }
        return UnsafeBufferPointer(start: storage, count: heapCount)
    }

    /// Whether `slot` has an entry.
    @inline(__always)
    func contains(slot: Int32) -> Bool { Int(slot) < slotCapacity && positions[Int(slot)] != -1 }

    /// Adds `slot` at `deadline` (it must not be in the heap): staged, in
    /// constant time.
    func insert(slot: Int32, deadline: Int64) {
        if Int(slot) >= slotCapacity { growSlots(to: Int(slot) + 1) }
        if stagedCount == stagedCapacity { growStaged() }
        (staged + stagedCount).initialize(to: Entry(deadline: deadline, sequence: nextSequence, slot: slot))
        nextSequence &+= 1
        positions[Int(slot)] = -2 - Int32(truncatingIfNeeded: stagedCount)
        stagedCount += 1
    }

    /// Removes `slot`'s entry.
    func remove(slot: Int32) {
        let position = Int(positions[Int(slot)])
        precondition(position != -1, "TimerHeap: slot \(slot) is not scheduled")
        positions[Int(slot)] = -1
        if position < -1 { return unstage(at: -2 - position) }
        heapCount -= 1
        guard position != heapCount else { return }
        let moved = storage[heapCount]
        if position > 0, moved.isBefore(storage[(position - 1) >> 1]) {
            siftUp(position, moved)
        } else {
            siftDown(position, moved)
        }
    }

    /// Removes every entry.
    func removeAll() {
        for index in 0..<heapCount { positions[Int(storage[index].slot)] = -1 }
        for index in 0..<stagedCount { positions[Int(staged[index].slot)] = -1 }
        heapCount = 0
        stagedCount = 0
    }

    /// Takes `staged[index]` out: the last staged entry moves into its place.
    private func unstage(at index: Int) {
        stagedCount -= 1
        guard index != stagedCount else { return }
        let moved = staged[stagedCount]
        staged[index] = moved
        positions[Int(moved.slot)] = -2 - Int32(truncatingIfNeeded: index)
    }

    /// Moves every staged entry into the heap: one sift each, or, when
    /// they outnumber the heap, a rebuild of the whole heap in linear time.
    @inline(never)
    private func joinStaged() {
        if heapCount + stagedCount > capacity { grow(to: heapCount + stagedCount) }
        if stagedCount > heapCount {
            (storage + heapCount).moveInitialize(from: staged, count: stagedCount)
            heapCount += stagedCount
            stagedCount = 0
            for index in 0..<heapCount { positions[Int(storage[index].slot)] = Int32(truncatingIfNeeded: index) }
            var parent = heapCount / 2
            while parent > 0 {
                parent -= 1
                siftDown(parent, storage[parent])
            }
            return
        }
        for index in 0..<stagedCount {
            let entry = staged[index]
            (storage + heapCount).initialize(to: entry)
            heapCount += 1
            siftUp(heapCount - 1, entry)
        }
        stagedCount = 0
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
            guard left < heapCount else { break }
            let right = left &+ 1
            let best = right < heapCount && storage[right].isBefore(storage[left]) ? right : left
            let below = storage[best]
            guard below.isBefore(moving) else { break }
            storage[parent] = below
            positions[Int(below.slot)] = Int32(parent)
            parent = best
        }
        storage[parent] = moving
        positions[Int(moving.slot)] = Int32(parent)
    }

    private func grow(to needed: Int) {
        storage = Self.enlarged(storage, capacity: &capacity, toHold: needed)
    }

    private func growStaged() {
        staged = Self.enlarged(staged, capacity: &stagedCapacity, toHold: stagedCapacity + 1)
    }

    /// `buffer` grown to at least `needed` values (`capacity` doubled
    /// until it fits), its values kept.
    private static func enlarged<Value>(_ buffer: UnsafeMutablePointer<Value>, capacity: inout Int,
                                        toHold needed: Int) -> UnsafeMutablePointer<Value> {
        while capacity < needed { capacity *= 2 }
        return PlainBuffer.resized(buffer, to: capacity)
    }

    private func growSlots(to needed: Int) {
        let oldCapacity = slotCapacity
        positions = Self.enlarged(positions, capacity: &slotCapacity, toHold: needed)
        (positions + oldCapacity).initialize(repeating: -1, count: slotCapacity - oldCapacity)
    }
}

/// A growable FIFO ring buffer with power-of-two capacity.
///
/// The loop's in-thread post path appends here and the drain pops from the
/// front. It grows by doubling and never shrinks, so once it has reached a
/// workload's high-water mark, appends and pops allocate nothing. A class
/// held by a `let`, with `@exclusivity(unchecked)` fields (loop thread only,
/// so access is exclusive by construction; the typed post→run row of
/// `compare`, probe `typed`), and `@inlinable` so callers get it
/// specialized for their element type. Not thread-safe.
@usableFromInline
final class RingBuffer<Element> {
    @exclusivity(unchecked) @usableFromInline var storage: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) @usableFromInline var mask: Int
    @exclusivity(unchecked) @usableFromInline var head = 0
    @exclusivity(unchecked) @usableFromInline var count = 0

    @usableFromInline
    init(initialCapacity: Int = 64) {
        var capacity = 1
        while capacity < initialCapacity { capacity <<= 1 }
        mask = capacity - 1
        storage = .allocate(capacity: capacity)
    }

    deinit {
        removeAll()
        storage.deallocate()
    }

    @inlinable var isEmpty: Bool { count == 0 }

    @inlinable
    func append(_ element: Element) {
        if count > mask { grow() }
        (storage + ((head &+ count) & mask)).initialize(to: element)
        count &+= 1
    }

    @inlinable
    func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = (storage + head).move()
        head = (head &+ 1) & mask
        count &-= 1
        return element
    }

    /// Moves every element of `source` to the back of this queue, in
    /// order, and leaves `source` empty: a bitwise move, no reference
    /// counted. A channel's posts from other threads collect in one ring
    /// and move into the loop's this way (copied out of an array, each was
    /// retained, then released with the array's contents).
    @inlinable
    func moveAll(from source: RingBuffer<Element>) {
        let incoming = source.count
        if incoming == 1 {
            // The common batch of a wake-up: one element, without the bulk
            // moves' calls (the cross-thread post rows of `compare`).
            append((source.storage + source.head).move())
        } else {
            while count &+ incoming > mask &+ 1 { grow() }
            var moved = 0
            while moved < incoming {
                // Up to the end of whichever block wraps first.
                let from = (source.head &+ moved) & source.mask, to = (head &+ count &+ moved) & mask
                let run = min(incoming &- moved, source.mask &+ 1 &- from, mask &+ 1 &- to)
                (storage + to).moveInitialize(from: source.storage + from, count: run)
                moved &+= run
            }
            count &+= incoming
        }
        source.head = 0
        source.count = 0
    }

    /// Drops every element (they are deinitialized, not run).
    @usableFromInline
    func removeAll() {
        while count > 0 { _ = popFirst() }
        head = 0
    }

    @usableFromInline
    func grow() {
        let capacity = mask + 1
        let newStorage = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        // Move the (possibly wrapped) contents to the front of the new block.
        let firstRun = min(count, capacity - head)
        newStorage.moveInitialize(from: storage + head, count: firstRun)
        (newStorage + firstRun).moveInitialize(from: storage, count: count - firstRun)
        storage.deallocate()
        storage = newStorage
        mask = capacity * 2 - 1
        head = 0
    }
}

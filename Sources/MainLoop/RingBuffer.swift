/// A growable FIFO ring buffer with power-of-two capacity.
///
/// The loop's in-thread post path appends here and the drain pops from the
/// front. It grows by doubling and never shrinks, so once it has reached a
/// workload's high-water mark, appends and pops allocate nothing. A class
/// held by a `let`, with `@exclusivity(unchecked)` fields (loop thread only,
/// so access is exclusive by construction), and `@inlinable` so callers get
/// it specialized for their element type. Not thread-safe.
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

    /// Drops every element (they are deinitialized, not run).
    /// Moves every event of `batch` to the back of the queue, in order,
    /// and leaves `batch` empty: a bitwise move, no reference counted.
    @inlinable
    func moveAll(from batch: RemoteBatch<Element>) {
        let incoming = batch.count
        if incoming == 1 {
            // The common batch of a wake-up: one event, without the two
            // bulk moves' calls (58 instructions for one event).
            append(batch.storage.move())
            batch.count = 0
            return
        }
        while count &+ incoming > mask &+ 1 { grow() }
        let tail = (head &+ count) & mask
        let firstRun = min(incoming, mask &+ 1 &- tail)
        (storage + tail).moveInitialize(from: batch.storage, count: firstRun)
        storage.moveInitialize(from: batch.storage + firstRun, count: incoming &- firstRun)
        count &+= incoming
        batch.count = 0
    }

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

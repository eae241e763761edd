/// Events posted to a channel from other threads and not received by the
/// loop yet: a growable block of the channel's own memory. The loop takes a
/// whole batch by swapping two of these under the inbox lock, then moves
/// the events into its queue bitwise (``RingBuffer/moveAll(from:)``). With
/// an array, each event was copied into the queue (a retain) and then
/// destroyed with the array's contents (a release), through generic code.
///
/// Not thread-safe: the inbox's lock protects the one being filled, and the
/// one the loop holds is loop thread only.
@usableFromInline
final class RemoteBatch<Element> {
    @exclusivity(unchecked) @usableFromInline var storage: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) @usableFromInline var capacity: Int
    @exclusivity(unchecked) @usableFromInline var count = 0

    @usableFromInline
    init(initialCapacity: Int = 16) {
        capacity = max(1, initialCapacity)
        storage = .allocate(capacity: capacity)
    }

    deinit {
        removeAll()
        storage.deallocate()
    }

    @inlinable var isEmpty: Bool { count == 0 }

    @inlinable
    func append(_ element: Element) {
        if count == capacity { grow() }
        (storage + count).initialize(to: element)
        count &+= 1
    }

    /// Drops every event (a channel closed with posts waiting).
    @usableFromInline
    func removeAll() {
        storage.deinitialize(count: count)
        count = 0
    }

    /// Doubles the block. It keeps the largest burst's size, as the array
    /// it replaces kept its capacity: bounded by what the posters sent
    /// between two wake-ups of the loop.
    @usableFromInline
    func grow() {
        let newStorage = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        newStorage.moveInitialize(from: storage, count: count)
        storage.deallocate()
        storage = newStorage
        capacity *= 2
    }
}

/// A growable FIFO ring buffer with power-of-two capacity.
///
/// The loop's in-thread post path appends here and the drain pops from the
/// front. It grows by doubling and never shrinks, so once it has reached a
/// workload's high-water mark, appends and pops allocate nothing. Not
/// thread-safe: owned by one channel and used on the loop thread only.
struct RingBuffer<Element>: ~Copyable {
    private var storage: UnsafeMutablePointer<Element>
    private var capacity: Int
    private var head = 0
    private(set) var count = 0

    init(initialCapacity: Int = 64) {
        var capacity = 1
        while capacity < initialCapacity { capacity <<= 1 }
        self.capacity = capacity
        self.storage = .allocate(capacity: capacity)
    }

    deinit {
        for offset in 0..<count { (storage + ((head + offset) & (capacity - 1))).deinitialize(count: 1) }
        storage.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: consuming Element) {
        if count == capacity { grow() }
        (storage + ((head + count) & (capacity - 1))).initialize(to: element)
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = (storage + head).move()
        head = (head + 1) & (capacity - 1)
        count -= 1
        return element
    }

    /// Drops every element (they are deinitialized, not run).
    mutating func removeAll() {
        while count > 0 { _ = popFirst() }
        head = 0
    }

    private mutating func grow() {
        let newCapacity = capacity * 2
        let newStorage = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        // Move the (possibly wrapped) contents to the front of the new block.
        let firstRun = min(count, capacity - head)
        (newStorage).moveInitialize(from: storage + head, count: firstRun)
        (newStorage + firstRun).moveInitialize(from: storage, count: count - firstRun)
        storage.deallocate()
        storage = newStorage
        capacity = newCapacity
        head = 0
    }
}

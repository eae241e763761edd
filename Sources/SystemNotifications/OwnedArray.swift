/// A growable array in memory it owns, for the engine's hot state (kinds,
/// subjects, symbols). It cannot be copied, so it needs no copy-on-write:
/// an element is read and written in place (`table.kinds[slot].value = v`
/// is one bounds check and one store), where a Swift `Array` checks its
/// buffer's uniqueness on every write and copies an element to read one
/// of its fields through a getter. Owned by exactly one (noncopyable)
/// ``CoalescingTable``, whose lifetime bounds it: `deinit` frees it.
@usableFromInline
struct OwnedArray<Element>: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<Element>
    @usableFromInline private(set) var count = 0
    private var capacity = 0

    init() {
        base = .allocate(capacity: 0)
    }

    // `@usableFromInline`: the table's `@usableFromInline` stored property
    // of this type has an inlinable setter that destroys the old value;
    // without it Swift 6.3's optimizer crashes (signal 6 in EarlyPerfInliner).
    @usableFromInline
    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// Adds `element` at the end (storage doubles when full, so appending is
    /// amortised O(1)).
    mutating func append(_ element: Element) {
        if count == capacity {
            let grown = UnsafeMutablePointer<Element>.allocate(capacity: max(8, capacity * 2))
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity = max(8, capacity * 2)
        }
        (base + count).initialize(to: element)
        count += 1
    }

    /// Removes every element, keeping the storage for reuse.
    mutating func removeAll() {
        base.deinitialize(count: count)
        count = 0
    }

    /// Removes and returns the last element.
    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast of an empty OwnedArray")
        count -= 1
        return (base + count).move()
    }

    /// Gives back storage a burst left behind: when the elements fill less
    /// than a quarter of it (and it holds more than 1,024), it is cut down
    /// to twice the elements, so the next growth is still amortised.
    mutating func shrinkIfSparse() {
        guard capacity > 1024, count < capacity / 4 else { return }
        let kept = max(8, count * 2)
        let smaller = UnsafeMutablePointer<Element>.allocate(capacity: kept)
        smaller.moveInitialize(from: base, count: count)
        base.deallocate()
        base = smaller
        capacity = kept
    }

    /// The elements the storage has room for.
    var storageCapacity: Int { capacity }

    /// Removes the elements that match, keeping the others in order.
    mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        var kept = 0
        for index in 0..<count {
            if shouldRemove(base[index]) {
                (base + index).deinitialize(count: 1)
            } else {
                if kept != index { (base + kept).moveInitialize(from: base + index, count: 1) }
                kept += 1
            }
        }
        count = kept
    }

    /// The element at `index`, in place.
    @inlinable
    subscript(index: Int) -> Element {
        unsafeAddress {
            precondition(index >= 0 && index < count, "OwnedArray index out of range")
            return UnsafePointer(base + index)
        }
        unsafeMutableAddress {
            precondition(index >= 0 && index < count, "OwnedArray index out of range")
            return base + index
        }
    }

    /// Runs `body` on the element at `index` in place: one bounds check for
    /// a whole read-modify-write of several fields (each `array[i].field`
    /// access checks the bounds again and reloads the storage).
    @inlinable @inline(__always)
    func update<Result>(at index: Int, _ body: (inout Element) -> Result) -> Result {
        precondition(index >= 0 && index < count, "OwnedArray index out of range")
        return body(&(base + index).pointee)
    }

    /// The valid indices.
    var indices: Range<Int> { 0..<count }
}

/// An array whose freed positions are reused: indices stay stable while an
/// element lives, and storage stays as dense as the most elements ever live
/// at once. The engine's symbols and subjects are kept this way, so an
/// event can carry a 32-bit index instead of a reference-counted value.
/// Noncopyable, in the engine's own memory (see `OwnedArray`).
struct FreeListArray<Element>: ~Copyable {
    private var elements = OwnedArray<Element>()
    private var freeIndices: [Int] = []

    /// Stores `element` (in a freed position when there is one); returns its index.
    mutating func insert(_ element: Element) -> Int {
        if let reused = freeIndices.popLast() {
            elements[reused] = element
            return reused
        }
        elements.append(element)
        return elements.count - 1
    }

    /// Frees `index`, leaving `placeholder` there until it is reused.
    mutating func free(_ index: Int, placeholder: Element) {
        elements[index] = placeholder
        freeIndices.append(index)
    }

    /// How many positions exist (live or free).
    var capacity: Int { elements.count }

    /// How many positions are free.
    var freeCount: Int { freeIndices.count }

    /// How many elements the storage has room for.
    var storageCapacity: Int { elements.storageCapacity }

    /// Gives back what a burst of elements, now freed, left behind: free
    /// positions at the end are dropped, then the last element, while
    /// `canMove` allows it, moves into the lowest free position (`moved`
    /// tells the owner its old and new index, so it can update what refers
    /// to it),
    /// until the free positions are all at the end or the last element
    /// cannot move; then the storage shrinks if it is mostly empty. An
    /// element that cannot move (something outside the owner holds its
    /// index) keeps its index and everything before it stays. O(n log n).
    mutating func compact(isFree: (Element) -> Bool, canMove: (Element) -> Bool, moved: (Element, _ from: Int, _ to: Int) -> Void) {
        let free = freeIndices.sorted()
        var next = 0
        func dropTrailingFree() {
            while elements.count > 0, isFree(elements[elements.count - 1]) { _ = elements.removeLast() }
        }
        dropTrailingFree()
        while next < free.count, free[next] < elements.count - 1, canMove(elements[elements.count - 1]) {
            let target = free[next]
            next += 1
            elements[target] = elements.removeLast()
            moved(elements[target], elements.count, target)
            dropTrailingFree()
        }
        let count = elements.count
        freeIndices = free[next...].filter { $0 < count }  // a new array, sized to what is left
        elements.shrinkIfSparse()
    }

    /// Read and modified in place: reading one field of an element does
    /// not copy (and retain) the whole element.
    subscript(index: Int) -> Element {
        _read { yield elements[index] }
        _modify { yield &elements[index] }
    }
}

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

    /// Read and modified in place: reading one field of an element does
    /// not copy (and retain) the whole element.
    subscript(index: Int) -> Element {
        _read { yield elements[index] }
        _modify { yield &elements[index] }
    }
}

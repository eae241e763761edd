import MainLoopJSON

/// Interned JSON values (strings that are not enum cases, arrays, objects)
/// by id, so the engine carries a 32-bit id instead of a reference-counted
/// value. Equal JSON values (as JSON: `{"a":1,"b":2}` is `{"b":2,"a":1.0}`)
/// get the same id.
///
/// Memory stays bounded by what the engine still refers to: symbols are
/// collected by mark and sweep (``sweep(keeping:)``) once the table has
/// doubled since the last sweep, so the amortised cost per new symbol is
/// O(1) and nothing is counted per event. Pinned symbols (those of events
/// prepared ahead by the user, ``CoalescingTable/prepare(_:pinned:)``) are
/// never collected. Loop thread only (a value inside the engine).
struct SymbolTable: ~Copyable {
    private var values = FreeListArray<JSONValue?>()
    private var ids: [JSONValue: UInt32] = [:]
    /// Pinned symbols, by id: a mark per position up to the highest pinned
    /// id (ids are dense). A `Set<UInt32>` cost every start-up a runtime
    /// generic instantiation and a scan for `UInt32: Hashable` (with the
    /// control socket's set of uids, also gone, 0.11 million instructions).
    private var pinned: [Bool] = []
    /// Sweep when this many symbols are live.
    private(set) var sweepThreshold = 256

    /// How many symbols are stored.
    var count: Int { ids.count }

    /// The id of `value`, interning it if new.
    mutating func intern(_ value: JSONValue, pinned pin: Bool = false) -> UInt32 {
        if let id = ids[value] {
            if pin { markPinned(id) }
            return id
        }
        let id = UInt32(values.insert(value))
        ids[value] = id
        if pin { markPinned(id) }
        return id
    }

    private mutating func markPinned(_ id: UInt32) {
        let position = Int(id)
        if position >= pinned.count { pinned.append(contentsOf: repeatElement(false, count: position + 1 - pinned.count)) }
        pinned[position] = true
    }

    /// Whether a sweep is due before the next intern.
    var needsSweep: Bool { ids.count >= sweepThreshold }

    /// The value of a live symbol.
    subscript(id: UInt32) -> JSONValue {
        guard Int(id) < values.capacity, let value = values[Int(id)] else {
            preconditionFailure("SymbolTable: symbol \(id) is not live (an engine invariant was broken)")
        }
        return value
    }

    /// One mark per symbol position, set for the pinned ones: the start of
    /// a sweep (the owner then marks every id it still refers to).
    func pinnedMarks() -> [Bool] {
        var live = pinned
        live.append(contentsOf: repeatElement(false, count: max(0, values.capacity - live.count)))
        return live
    }

    /// Frees every symbol whose mark in `live` (from ``pinnedMarks()``) is unset.
    mutating func sweep(keeping live: [Bool]) {
        for (index, isLive) in live.enumerated() where !isLive {
            guard let value = values[index] else { continue }
            values.free(index, placeholder: nil)
            ids[value] = nil
        }
        sweepThreshold = max(256, ids.count * 2)
    }
}

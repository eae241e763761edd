import MainLoopJSON

/// Everything the center keeps for one kind: its rule, the system's current
/// value(s), the counters and what is held while suspended.
struct KindState {
    let rule: CoalescingRule
    /// The current value (non-keyed kinds).
    var value: JSONValue
    /// Current values per subject (keyed kinds); absent = the rule's default.
    var subjects: [String: JSONValue] = [:]
    var counters = NotificationCounters()
    /// The kind-level held slot (for keyDiff only its order and count).
    var held: HeldSlot?
    /// Held slots per subject (keyed kinds).
    var heldSubjects: [String: HeldSlot] = [:]

    init(rule: CoalescingRule) {
        self.rule = rule
        value = rule.defaultValue
    }
}

/// The per-kind states in one block of memory, indexed by kind slot.
///
/// Why raw memory: the center handles every event by mutating its kind's
/// state in place. Kept in an array stored in a class property, each such
/// mutation is a dynamic exclusivity check (`swift_beginAccess`), which
/// measured as about half of the per-event cost; through a pointer it is
/// a plain store. Loop thread only.
final class KindTable {
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<KindState>
    @exclusivity(unchecked) private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 16) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// The state of slot `slot` (valid until the next `append`).
    @inline(__always)
    subscript(slot: Int) -> UnsafeMutablePointer<KindState> { base + slot }

    /// Adds a kind; returns its slot.
    func append(_ state: KindState) -> Int {
        if count == capacity {
            let grown = UnsafeMutablePointer<KindState>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        (base + count).initialize(to: state)
        count += 1
        return count - 1
    }
}

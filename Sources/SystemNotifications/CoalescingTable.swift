import MainLoopJSON

/// What the engine reads and writes for every event of a kind: plain data
/// only, so touching it never counts a reference (and a debug build's copy
/// of it is a memcpy).
@usableFromInline
struct KindState {
    @usableFromInline let shape: CoalescingRule.Shape
    @usableFromInline let isKeyed: Bool
    /// Whether notifications of this kind need nothing but plain data (a
    /// standard value kind): the live path then builds them inline.
    @usableFromInline let isPlainStandard: Bool
    /// A plain standard kind whose events notify only when the value
    /// changes (not `latestEvent`): the common case, which `record` tests
    /// with this one flag instead of three (keyed, shape, plain).
    @usableFromInline let isPlainValueKind: Bool
    /// The value before any event (per subject for keyed kinds).
    @usableFromInline let defaultValue: EventValue
    /// The current value (non-keyed kinds).
    @usableFromInline var value: EventValue
    @usableFromInline var counters = NotificationCounters()
    /// The kind-level held slot: the net change for value kinds; for keyed
    /// kinds only its count (the subjects hold their own slots).
    @usableFromInline var held: HeldSlot?
    /// The entry after this kind's in the held list (see ``HeldList``).
    @usableFromInline var nextHeld = HeldList.end

    @usableFromInline
    init(shape: CoalescingRule.Shape, isKeyed: Bool, isPlainStandard: Bool, defaultValue: EventValue, value: EventValue) {
        self.shape = shape
        self.isKeyed = isKeyed
        self.isPlainStandard = isPlainStandard
        self.isPlainValueKind = isPlainStandard && !isKeyed && shape != .latestEvent
        self.defaultValue = defaultValue
        self.value = value
    }
}

/// What the engine needs of a kind at the edges (decoding, naming).
struct KindDescriptor {
    /// The kind, with its slot.
    let kind: NotificationKind
    let rule: CoalescingRule
    /// For a user kind, its rule; nil for a standard kind (see ``SystemNotification``).
    let customRule: CoalescingRule?
    /// The rule's value list, when it has one (values are then enum cases).
    let enumValues: [String]?
    /// The details of a user value kind's notifications (its rule), shared.
    let customDetails: NotificationDetails?
}

/// A keyed kind's subjects by name (the records are in the table's slab),
/// and, for a keyDiff kind, those held in first-held order.
struct KindSubjects {
    var indexByName: [String: Int32] = [:]
    var heldKeys: [Int32] = []
}

/// What is held, in the order of each one's first held event: kind slots,
/// and subjects of perSubject kinds, linked through the kinds' and the
/// subject records' own `nextHeld` (a subject's index is its entry; a
/// kind's slot `s` is entry `-(s + 1)`).
///
/// A list through the records, not an array: holding one event for each
/// of 10^6 subjects grew an array to 8 MB through 16 MB of buffers, fresh
/// pages the kernel had to fault in and zero, about a third of that
/// burst's cost on the test machine. The records are there already.
@usableFromInline
enum HeldList {
    /// No entry: the end of the list, or an empty list's head and tail.
    @usableFromInline static let end = Int32.min

    /// A kind slot's entry.
    @inlinable
    static func entry(kind slot: Int) -> Int32 { Int32(-(slot + 1)) }

    /// The kind slot of a kind's entry (the inverse of ``entry(kind:)``).
    static func kindSlot(of entry: Int32) -> Int { Int(-entry - 1) }
}

/// The notification engine's whole coalescing state, in one value: the
/// rules, the system's current values, the counters and what is held while
/// the app is suspended (BEHAVIOUR.md §4). Pure: no loop, no clock, no lifecycle;
/// the application drives it with `record`, `flush` and ``discard()``.
///
/// Events inside are plain data (``PreparedEvent``): recording one is an
/// array access by kind slot (and subject index), with no hashing, no
/// allocation and no reference counting. Holding is O(1) per event: one slot
/// per kind and per subject, appended to a list in first-held order when it
/// is first held, so a flush delivers in order without sorting. Memory is
/// bounded by kinds and subjects (and ``CoalescingLimits``), never by the
/// number of events.
///
/// Noncopyable: the state has exactly one owner (the application), and the
/// hot state (kinds, subjects, symbols, the flush's entries) lives in
/// storage the table owns (`OwnedArray`), read and written in place with
/// no copy-on-write check.
///
/// The implementation is split by concern: events at the edge
/// (`+Events`), recording (`+Record`), the resume flush and discarding
/// (`+Flush`), subjects and symbols (`+Subjects`).
public struct CoalescingTable: ~Copyable {
    /// The bounds on what the table stores.
    public let limits: CoalescingLimits
    @usableFromInline var kinds = OwnedArray<KindState>()
    var descriptors: [KindDescriptor] = []
    /// Per slot; empty for value kinds.
    var subjects: [KindSubjects] = []
    /// Every keyed kind's subjects, by index.
    var subjectRecords = FreeListArray<SubjectRecord>()
    /// Each subject's name and notification details, by the same index.
    /// Beside the records, not in them: a record stays 32 bytes.
    var subjectInfo = OwnedArray<SubjectInfo>()
    /// What a held subject's count passed `UInt32.max` by (a record keeps
    /// 32 bits of it), by subject; empty unless one subject folded over
    /// four billion events in one suspension.
    var heldCountCarries: [Int32: Int] = [:]
    var slotsByName: [String: Int] = [:]
    var symbols = SymbolTable()
    /// The first and the last entry of the held list (``HeldList``).
    @usableFromInline var heldHead = HeldList.end
    @usableFromInline var heldTail = HeldList.end
    @usableFromInline var heldSlots = 0
    /// Subjects a flush left at their default, freed (if idle) once it was delivered.
    var flushedSubjects: [Int32] = []
    /// Resolved values (keyDiff maps) of the last flush, by entry.
    var flushedValues: [JSONValue] = []
    /// The notifications of the flush in progress, as plain data.
    var flushEntries = OwnedArray<FlushEntry>()

    /// How many held slots are occupied (kinds plus subjects).
    public var heldSlotCount: Int { heldSlots }

    /// A table with the fifteen standard kinds of BEHAVIOUR.md §4, in slot order.
    public init(limits: CoalescingLimits = CoalescingLimits()) {
        self.limits = limits
        for rule in CoalescingRule.standard { add(rule, custom: false) }
    }

    // MARK: Kinds

    /// Registers a rule for a kind of your own; it behaves exactly like a
    /// standard kind of the same shape.
    /// - Returns: the kind, with its slot resolved.
    /// - Throws: ``NotificationCenterError/duplicateKind(_:)``, or
    ///   ``NotificationCenterError/malformedEvent(_:)`` when the rule's
    ///   default value fails its own value check.
    @discardableResult
    public mutating func register(_ rule: CoalescingRule) throws(NotificationCenterError) -> NotificationKind {
        guard slotsByName[rule.kind.name] == nil else { throw .duplicateKind(rule.kind.name) }
        if !rule.defaultValue.isNull, let problem = rule.valueCheck.problem(with: rule.defaultValue) {
            throw .malformedEvent(EventDecodingError(kind: rule.kind, problem: "default value: \(problem)"))
        }
        return add(rule, custom: true)
    }

    @discardableResult
    private mutating func add(_ rule: CoalescingRule, custom: Bool) -> NotificationKind {
        let slot = kinds.count
        let kind = NotificationKind(name: rule.kind.name, slot: slot)
        let enumValues = rule.enumeratedValues
        let defaultValue = Self.plainOrNil(rule.defaultValue, enumValues: enumValues)
            ?? .symbol(symbols.intern(rule.defaultValue, pinned: true))
        // Plain: a standard kind (its rule is a global constant) whose values
        // are never symbols (enum cases, bools, numbers, null).
        let isPlainStandard = !custom && !rule.isKeyed && defaultValue.symbolID == nil
            && (enumValues != nil || rule.valueCheck.isPlainOnly)
        kinds.append(KindState(shape: rule.shape, isKeyed: rule.isKeyed, isPlainStandard: isPlainStandard,
                               defaultValue: defaultValue, value: defaultValue))
        descriptors.append(KindDescriptor(kind: kind, rule: rule, customRule: custom ? rule : nil, enumValues: enumValues,
                                          customDetails: custom ? NotificationDetails(subject: nil, resolved: nil, customRule: rule) : nil))
        subjects.append(KindSubjects())
        slotsByName[rule.kind.name] = slot
        return kind
    }

    /// Every registered kind, in slot order.
    public var registeredKinds: [NotificationKind] { descriptors.map(\.kind) }

    /// The slot of a kind (by its cached slot when valid, else by name).
    /// - Throws: ``NotificationCenterError/unknownKind(_:)``.
    public func slot(of kind: NotificationKind) throws(NotificationCenterError) -> Int {
        if kind.slot >= 0, kind.slot < kinds.count, descriptors[kind.slot].kind.name == kind.name { return kind.slot }
        guard let slot = slotsByName[kind.name] else { throw .unknownKind(kind.name) }
        return slot
    }

    /// The rule for a kind.
    public func rule(for kind: NotificationKind) throws(NotificationCenterError) -> CoalescingRule {
        descriptors[try slot(of: kind)].rule
    }

    // MARK: Current values

    /// Sets a current value without any notification (the initial state
    /// before launch, BEHAVIOUR.md §7 `initial`). The caller checks the app is not running.
    public mutating func setInitialValue(_ event: SystemEvent) throws(NotificationCenterError) {
        let prepared = try prepare(event)
        let slot = Int(prepared.slot)
        if kinds[slot].isKeyed {
            subjectRecords[Int(prepared.subject)].value = prepared.value
            releaseSubjectIfIdle(prepared.subject)
        } else {
            kinds[slot].value = prepared.value
        }
    }

    /// The current value of a kind (for keyed kinds, of a subject, or an
    /// object of every subject that differs from the default, by name).
    public func currentValue(of kind: NotificationKind, subject: String? = nil) throws(NotificationCenterError) -> JSONValue {
        let slot = try slot(of: kind)
        guard kinds[slot].isKeyed else { return json(kinds[slot].value, slot: slot) }
        guard let subject else {
            let pairs = subjects[slot].indexByName.compactMap { name, index -> (String, JSONValue)? in
                let value = subjectRecords[Int(index)].value
                return value == kinds[slot].defaultValue ? nil : (name, json(value, slot: slot))
            }
            return .object(JSONObject(pairs.sorted { $0.0 < $1.0 }))
        }
        guard let index = subjects[slot].indexByName[subject] else { return descriptors[slot].rule.defaultValue }
        return json(subjectRecords[Int(index)].value, slot: slot)
    }

    /// How many subjects a keyed kind stores (0 for other kinds).
    public func subjectCount(of kind: NotificationKind) throws(NotificationCenterError) -> Int {
        subjects[try slot(of: kind)].indexByName.count
    }

    /// How many JSON values the symbol table stores (bounded: see `SymbolTable`).
    public var symbolCount: Int { symbols.count }

    // MARK: Accounting

    /// The counters of one kind.
    public func counters(for kind: NotificationKind) throws(NotificationCenterError) -> NotificationCounters {
        kinds[try slot(of: kind)].counters
    }

    /// Counters per kind, in slot order.
    public var statistics: [(kind: NotificationKind, counters: NotificationCounters)] {
        descriptors.indices.map { (descriptors[$0].kind, kinds[$0].counters) }
    }
}

import MainLoopJSON

/// What the engine reads and writes for every event of a kind: plain data
/// only, so touching it never counts a reference (and a debug build's copy
/// of it is a memcpy).
struct KindState {
    let shape: CoalescingRule.Shape
    let isKeyed: Bool
    /// The value before any event (per subject for keyed kinds).
    let defaultValue: EventValue
    /// The current value (non-keyed kinds).
    var value: EventValue
    var counters = NotificationCounters()
    /// The kind-level held slot: the net change for value kinds; for keyed
    /// kinds only its count (the subjects hold their own slots).
    var held: HeldSlot?
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
}

/// A keyed kind's subjects, and (keyDiff) those held in first-held order.
struct KindSubjects {
    var store = SubjectStore()
    var heldKeys: [Int32] = []
}

/// A kind slot, or a subject of a per-subject kind, with something held, in
/// the order of its first held event.
struct HeldEntry {
    let slot: Int32
    /// The subject for a perSubject kind, else -1.
    let subject: Int32
}

/// The notification engine's whole coalescing state, in one value: the
/// rules, the system's current values, the counters and what is held while
/// the app is suspended (SPEC §4). Pure: no loop, no clock, no lifecycle;
/// the application drives it with ``record(_:mode:)``, ``flush(into:)`` and
/// ``discard()``.
///
/// Events inside are plain data (``PreparedEvent``): recording one is an
/// array access by kind slot (and subject index), with no hashing, no
/// allocation and no reference counting. Holding is O(1) per event: one slot
/// per kind and per subject, appended to a list in first-held order when it
/// is first held, so a flush delivers in order without sorting. Memory is
/// bounded by kinds and subjects (and ``CoalescingLimits``), never by the
/// number of events.
public struct CoalescingTable {
    /// The bounds on what the table stores.
    public let limits: CoalescingLimits
    private var kinds: [KindState] = []
    private var descriptors: [KindDescriptor] = []
    /// Per slot; empty for value kinds.
    private var subjects: [KindSubjects] = []
    private var slotsByName: [String: Int] = [:]
    private var symbols = SymbolTable()
    private var heldOrder: [HeldEntry] = []
    /// How many held slots are occupied (kinds plus subjects).
    public private(set) var heldSlotCount = 0

    /// A table with the twelve standard kinds of SPEC §4, in slot order.
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
        kinds.append(KindState(shape: rule.shape, isKeyed: rule.isKeyed, defaultValue: defaultValue, value: defaultValue))
        descriptors.append(KindDescriptor(kind: kind, rule: rule, customRule: custom ? rule : nil, enumValues: enumValues))
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

    // MARK: Events at the edge

    /// Reads a system event in the scenario and control-socket form: an
    /// object with exactly one kind key, `{"orientation": "faceUp"}`.
    /// - Throws: ``NotificationCenterError`` naming what is wrong.
    public func decodeEvent(_ json: JSONValue) throws(NotificationCenterError) -> SystemEvent {
        guard let object = json.objectValue, object.count == 1, let (name, payload) = object.first(where: { _ in true }) else {
            throw .notASingleEvent("got \(json.jsonText)")
        }
        let rule = descriptors[try slot(of: NotificationKind(name))].rule
        do {
            return try rule.decodeEvent(payload)
        } catch {
            throw .malformedEvent(error)
        }
    }

    /// Checks an event against its kind's rule without storing anything
    /// (limits are checked when it is recorded).
    /// - Throws: ``NotificationCenterError`` naming what is wrong.
    public func validate(_ event: SystemEvent) throws(NotificationCenterError) {
        let slot = try slot(of: event.kind)
        let rule = descriptors[slot].rule
        if let problem = rule.valueCheck.problem(with: event.value) {
            throw .malformedEvent(EventDecodingError(kind: rule.kind, problem: problem))
        }
        if kinds[slot].isKeyed != (event.subject != nil) {
            let problem = kinds[slot].isKeyed ? "missing subject" : "this kind has no subjects"
            throw .malformedEvent(EventDecodingError(kind: rule.kind, problem: problem))
        }
    }

    /// Turns an event into the engine's plain form: resolves the kind,
    /// checks the value against the kind's rule and the limits, and interns
    /// the subject and the value.
    ///
    /// - Parameter pinned: keep the event's subject and value for the
    ///   table's life, so the prepared event can be posted again and again
    ///   (the hot path). Unpinned, it must be recorded before anything else
    ///   is prepared or recorded.
    /// - Throws: ``NotificationCenterError`` (unknown kind, malformed value,
    ///   over a limit); nothing changes then, except the `refused` counter.
    public mutating func prepare(_ event: SystemEvent, pinned: Bool = false) throws(NotificationCenterError) -> PreparedEvent {
        try prepare(event, slot: slot(of: event.kind), pinned: pinned)
    }

    private mutating func prepare(_ event: SystemEvent, slot: Int, pinned: Bool) throws(NotificationCenterError) -> PreparedEvent {
        guard kinds[slot].isKeyed else {
            guard event.subject == nil else { throw malformed(slot, "this kind has no subjects") }
            return PreparedEvent(slot: Int32(slot), subject: -1, value: try encode(event.value, slot: slot, pinned: pinned))
        }
        guard let subject = event.subject else { throw malformed(slot, "missing subject") }
        guard subject.utf8.count <= limits.maxSubjectBytes else {
            throw refuse(slot, "a subject id is at most \(limits.maxSubjectBytes) bytes")
        }
        let value = try encode(event.value, slot: slot, pinned: pinned)
        let index: Int32
        if let existing = subjects[slot].store.index(of: subject) {
            index = existing
        } else {
            guard subjects[slot].store.count < limits.maxSubjectsPerKind else {
                throw refuse(slot, "the kind already keeps \(limits.maxSubjectsPerKind) subjects")
            }
            index = subjects[slot].store.insert(subject, value: kinds[slot].defaultValue)
        }
        if pinned { subjects[slot].store[index].isPinned = true }
        return PreparedEvent(slot: Int32(slot), subject: index, value: value)
    }

    private func malformed(_ slot: Int, _ problem: String) -> NotificationCenterError {
        .malformedEvent(EventDecodingError(kind: descriptors[slot].rule.kind, problem: problem))
    }

    /// Prepares (unpinned) and records a rich event in one step. An event
    /// for a subject the table does not keep, at the default value, is no
    /// change and needs no storage (so it cannot be refused by a limit).
    public mutating func record(_ event: SystemEvent, mode: HoldingMode) throws(NotificationCenterError) -> RecordOutcome {
        let slot = try slot(of: event.kind)
        if kinds[slot].isKeyed, let subject = event.subject, subjects[slot].store.index(of: subject) == nil,
           event.value == descriptors[slot].rule.defaultValue, descriptors[slot].rule.valueCheck.problem(with: event.value) == nil {
            kinds[slot].counters.received &+= 1
            kinds[slot].counters.ignoredUnchanged &+= 1
            return RecordOutcome(.unchanged, PreparedEvent(slot: Int32(slot), subject: -1, value: .null))
        }
        return try record(prepare(event, slot: slot, pinned: false), mode: mode)
    }

    private mutating func refuse(_ slot: Int, _ limit: String) -> NotificationCenterError {
        kinds[slot].counters.refused &+= 1
        return .overLimit(kind: descriptors[slot].kind.name, limit: limit)
    }

    /// The plain form of a value that needs no symbol, or nil.
    private static func plainOrNil(_ value: JSONValue, enumValues: [String]?) -> EventValue? {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number): return .number(number.value)
        case .string(let string): return enumValues?.firstIndex(of: string).map(EventValue.enumCase)
        case .array, .object: return nil
        }
    }

    /// Checks `value` against the kind's rule and encodes it (interning a symbol).
    private mutating func encode(_ value: JSONValue, slot: Int, pinned: Bool) throws(NotificationCenterError) -> EventValue {
        // An allowed enum value passes the rule's check by definition.
        if case .string(let string) = value, let index = descriptors[slot].enumValues?.firstIndex(of: string) {
            return .enumCase(index)
        }
        if let problem = descriptors[slot].rule.valueCheck.problem(with: value) { throw malformed(slot, problem) }
        if let plain = Self.plainOrNil(value, enumValues: nil) { return plain }
        let size = value.stringValue?.utf8.count ?? value.jsonText.utf8.count
        guard size <= limits.maxValueBytes else { throw refuse(slot, "a value is at most \(limits.maxValueBytes) bytes of JSON") }
        if symbols.needsSweep { sweepSymbols() }
        return .symbol(symbols.intern(value, pinned: pinned))
    }

    /// The JSON form of a value of the kind at `slot`.
    func json(_ value: EventValue, slot: Int) -> JSONValue {
        if let id = value.symbolID { return symbols[id] }
        return descriptors[slot].rule.json(forPlain: value)
    }

    // MARK: Recording

    /// Records one event: drops it if it changes nothing, updates the
    /// current value, then delivers it (``RecordOutcome/live(_:)``), holds
    /// it, or (not running) keeps only the value.
    /// - Throws: ``NotificationCenterError/foreignPreparedEvent`` for an
    ///   event this table did not prepare; nothing changes then.
    public mutating func record(_ event: PreparedEvent, mode: HoldingMode) throws(NotificationCenterError) -> RecordOutcome {
        let slot = Int(event.slot)
        guard slot >= 0, slot < kinds.count else { throw .foreignPreparedEvent }
        guard kinds[slot].isKeyed else { return RecordOutcome(recordValue(event.value, slot: slot, mode: mode), event) }
        guard subjects[slot].store.isLive(event.subject) else { throw .foreignPreparedEvent }
        return RecordOutcome(recordKeyed(event.value, slot: slot, subject: event.subject, mode: mode), event)
    }

    /// The notification of a live change that ``record(_:mode:)-(PreparedEvent,_)`` reported.
    /// `mutating` only so that a table stored in a class is borrowed in
    /// place for the call rather than copied (it changes nothing).
    public mutating func liveNotification(_ outcome: RecordOutcome) -> SystemNotification {
        let slot = Int(outcome.event.slot)
        let subject = outcome.event.subject >= 0 ? subjects[slot].store[outcome.event.subject].name : nil
        return notification(slot: slot, subject: subject, value: outcome.event.value, merged: 1)
    }

    /// Ends a live change once it is delivered: its subject, if back at the
    /// default, is freed now (it had to stay for the notification's name).
    public mutating func finishLive(_ outcome: RecordOutcome) {
        guard outcome.event.subject >= 0 else { return }
        let slot = Int(outcome.event.slot)
        subjects[slot].store.releaseIfIdle(outcome.event.subject, defaultValue: kinds[slot].defaultValue)
    }

    private mutating func recordValue(_ new: EventValue, slot: Int, mode: HoldingMode) -> RecordOutcome.Effect {
        kinds[slot].counters.received &+= 1
        let previous = kinds[slot].value
        guard kinds[slot].shape == .latestEvent || previous != new else {
            kinds[slot].counters.ignoredUnchanged &+= 1
            return .unchanged
        }
        kinds[slot].value = new
        switch mode {
        case .notRunning:
            kinds[slot].counters.changedWhileNotRunning &+= 1
            return .changedWhileNotRunning
        case .live:
            kinds[slot].counters.deliveredLive &+= 1
            return .live
        case .holding:
            kinds[slot].counters.held &+= 1
            holdKindLevel(slot, previous: previous, new: new, entry: true)
            return .held
        }
    }

    private mutating func recordKeyed(_ new: EventValue, slot: Int, subject: Int32, mode: HoldingMode) -> RecordOutcome.Effect {
        kinds[slot].counters.received &+= 1
        let previous = subjects[slot].store[subject].value
        guard previous != new else {
            kinds[slot].counters.ignoredUnchanged &+= 1
            subjects[slot].store.releaseIfIdle(subject, defaultValue: kinds[slot].defaultValue)
            return .unchanged
        }
        subjects[slot].store[subject].value = new
        let outcome: RecordOutcome.Effect
        switch mode {
        case .notRunning:
            kinds[slot].counters.changedWhileNotRunning &+= 1
            outcome = .changedWhileNotRunning
        case .live:
            kinds[slot].counters.deliveredLive &+= 1
            // The subject stays until ``finishLive(_:)``: its name is in the notification.
            return .live
        case .holding:
            kinds[slot].counters.held &+= 1
            // The kind-level slot counts the kind's held events (a keyDiff
            // kind's one notification sits at its first held event).
            holdKindLevel(slot, previous: previous, new: new, entry: kinds[slot].shape == .keyDiff)
            if subjects[slot].store[subject].held == nil {
                subjects[slot].store[subject].held = HeldSlot(atSuspension: previous, current: new, count: 1)
                heldSlotCount += 1
                if kinds[slot].shape == .keyDiff {
                    subjects[slot].heldKeys.append(subject)
                } else {
                    heldOrder.append(HeldEntry(slot: Int32(slot), subject: subject))
                }
            } else {
                subjects[slot].store[subject].held!.current = new
                subjects[slot].store[subject].held!.count &+= 1
            }
            return .held
        }
        subjects[slot].store.releaseIfIdle(subject, defaultValue: kinds[slot].defaultValue)
        return outcome
    }

    private mutating func holdKindLevel(_ slot: Int, previous: EventValue, new: EventValue, entry: Bool) {
        if kinds[slot].held == nil {
            kinds[slot].held = HeldSlot(atSuspension: previous, current: new, count: 1)
            heldSlotCount += 1
            if entry { heldOrder.append(HeldEntry(slot: Int32(slot), subject: -1)) }
        } else {
            kinds[slot].held!.current = new
            kinds[slot].held!.count &+= 1
        }
    }

    private func notification(slot: Int, subject: String?, value: EventValue, merged: Int) -> SystemNotification {
        SystemNotification(slot: slot, subject: subject, merged: merged, encoded: value,
                           resolved: value.symbolID.map { symbols[$0] }, customRule: descriptors[slot].customRule)
    }

    // MARK: Resume and kill

    /// Resolves everything held into notifications (appended to `output`),
    /// one per kind (per subject for perSubject kinds) whose net change is
    /// not zero, in the order of each one's first held event, and updates
    /// the counters. The table then holds nothing.
    public mutating func flush(into output: inout [SystemNotification]) {
        for entry in heldOrder {
            let slot = Int(entry.slot)
            switch kinds[slot].shape {
            case .lastValue, .latestEvent:
                let held = kinds[slot].held!
                if kinds[slot].shape == .latestEvent || held.current != held.atSuspension {
                    deliverMerged(slot, subject: nil, value: held.current, resolved: nil, count: held.count, into: &output)
                } else {
                    kinds[slot].counters.cancelled += held.count
                }
            case .keyDiff:
                flushKeyDiff(slot, into: &output)
            case .perSubject:
                let subject = entry.subject
                let held = subjects[slot].store[subject].held!
                subjects[slot].store[subject].held = nil
                if held.current != held.atSuspension {
                    deliverMerged(slot, subject: subjects[slot].store[subject].name, value: held.current, resolved: nil,
                                  count: held.count, into: &output)
                } else {
                    kinds[slot].counters.cancelled += held.count
                }
                subjects[slot].store.releaseIfIdle(subject, defaultValue: kinds[slot].defaultValue)
            }
            kinds[slot].held = nil
        }
        heldOrder.removeAll(keepingCapacity: true)
        heldSlotCount = 0
    }

    /// One notification with every key whose final value differs from its
    /// value at suspension, keys in first-held order.
    private mutating func flushKeyDiff(_ slot: Int, into output: inout [SystemNotification]) {
        var changes = JSONObject()
        for subject in subjects[slot].heldKeys {
            let held = subjects[slot].store[subject].held!
            subjects[slot].store[subject].held = nil
            if held.current != held.atSuspension {
                changes[subjects[slot].store[subject].name] = json(held.current, slot: slot)
            }
            subjects[slot].store.releaseIfIdle(subject, defaultValue: kinds[slot].defaultValue)
        }
        subjects[slot].heldKeys.removeAll(keepingCapacity: true)
        let count = kinds[slot].held!.count
        if changes.isEmpty {
            kinds[slot].counters.cancelled += count
        } else {
            deliverMerged(slot, subject: nil, value: .null, resolved: .object(changes), count: count, into: &output)
        }
    }

    private mutating func deliverMerged(_ slot: Int, subject: String?, value: EventValue, resolved: JSONValue?,
                                        count: Int, into output: inout [SystemNotification]) {
        kinds[slot].counters.deliveredMerged += 1
        kinds[slot].counters.folded += count
        let notification = resolved.map {
            SystemNotification(slot: slot, subject: subject, merged: count, encoded: value, resolved: $0,
                               customRule: descriptors[slot].customRule)
        } ?? self.notification(slot: slot, subject: subject, value: value, merged: count)
        output.append(notification)
    }

    /// Drops everything held (the app died), counting it as discarded.
    public mutating func discard() {
        for entry in heldOrder {
            let slot = Int(entry.slot)
            if let held = kinds[slot].held {
                kinds[slot].counters.discarded += held.count
                kinds[slot].held = nil
            }
            let held = kinds[slot].shape == .keyDiff ? subjects[slot].heldKeys : (entry.subject >= 0 ? [entry.subject] : [])
            for subject in held {
                subjects[slot].store[subject].held = nil
                subjects[slot].store.releaseIfIdle(subject, defaultValue: kinds[slot].defaultValue)
            }
            subjects[slot].heldKeys.removeAll(keepingCapacity: true)
        }
        heldOrder.removeAll(keepingCapacity: true)
        heldSlotCount = 0
    }

    // MARK: Current values

    /// Sets a current value without any notification (the initial state
    /// before launch, SPEC §6 `initial`). The caller checks the app is not running.
    public mutating func setInitialValue(_ event: SystemEvent) throws(NotificationCenterError) {
        let prepared = try prepare(event)
        let slot = Int(prepared.slot)
        if kinds[slot].isKeyed {
            subjects[slot].store[prepared.subject].value = prepared.value
            subjects[slot].store.releaseIfIdle(prepared.subject, defaultValue: kinds[slot].defaultValue)
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
            let pairs = subjects[slot].store.nonDefault(kinds[slot].defaultValue).sorted { $0.name < $1.name }
            return .object(JSONObject(pairs.map { ($0.name, json($0.value, slot: slot)) }))
        }
        guard let index = subjects[slot].store.index(of: subject) else { return descriptors[slot].rule.defaultValue }
        return json(subjects[slot].store[index].value, slot: slot)
    }

    /// How many subjects a keyed kind stores (0 for other kinds).
    public func subjectCount(of kind: NotificationKind) throws(NotificationCenterError) -> Int {
        subjects[try slot(of: kind)].store.count
    }

    /// How many JSON values the symbol table stores (bounded: see ``SymbolTable``).
    public var symbolCount: Int { symbols.count }

    // MARK: Accounting

    /// The counters of one kind.
    public func counters(for kind: NotificationKind) throws(NotificationCenterError) -> NotificationCounters {
        kinds[try slot(of: kind)].counters
    }

    /// Counters per kind, in slot order.
    public var statistics: [(kind: NotificationKind, counters: NotificationCounters)] {
        zip(descriptors, kinds).map { ($0.kind, $1.counters) }
    }

    // MARK: Symbols

    /// Frees every symbol nothing refers to any more.
    private mutating func sweepSymbols() {
        let kinds = self.kinds, subjects = self.subjects
        symbols.sweep { mark in
            func markValue(_ value: EventValue) { if let id = value.symbolID { mark(id) } }
            func markHeld(_ held: HeldSlot?) {
                if let held {
                    markValue(held.atSuspension)
                    markValue(held.current)
                }
            }
            for kind in kinds {
                markValue(kind.value)
                markHeld(kind.held)
            }
            for kindSubjects in subjects {
                for record in kindSubjects.store.records where record.isLive {
                    markValue(record.value)
                    markHeld(record.held)
                }
            }
        }
    }
}

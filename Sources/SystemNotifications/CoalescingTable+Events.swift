import MainLoopJSON

/// Events at the edge: decoding, checking, preparing (interning subjects
/// and values) and recording a rich event in one step.
extension CoalescingTable {
    /// Reads a system event in the scenario and control-socket form: an
    /// object with exactly one kind key, `{"orientation": "faceUp"}`.
    /// - Throws: ``NotificationCenterError`` naming what is wrong.
    public func decodeEvent(_ json: JSONValue) throws(NotificationCenterError) -> SystemEvent {
        guard let object = json.objectValue, object.count == 1, let (name, payload) = object.first(where: { _ in true }) else {
            throw .notASingleEvent("got \(json.jsonText)")
        }
        return try decodeEvent(kind: NotificationKind(name), payload: payload)
    }

    /// Reads an event of `kind` from its payload, the value of the kind's
    /// key in the form ``decodeEvent(_:)`` reads. The event's kind carries
    /// its slot here, so posting it finds the kind without hashing its name.
    /// - Throws: ``NotificationCenterError`` naming what is wrong.
    public func decodeEvent(kind: NotificationKind, payload: JSONValue) throws(NotificationCenterError) -> SystemEvent {
        let slot = try slot(of: kind)
        do {
            var event = try descriptors[slot].rule.decodeEvent(payload)
            event.kind = descriptors[slot].kind
            return event
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
            throw malformed(slot, kinds[slot].isKeyed ? "missing subject" : "this kind has no subjects")
        }
    }

    /// Turns an event into the engine's plain form: resolves the kind,
    /// checks the value against the kind's rule and the limits, and interns
    /// the subject and the value.
    ///
    /// - Parameters:
    ///   - event: the event to prepare.
    ///   - pinned: keep the event's subject and value for the
    ///     table's life, so the prepared event can be posted again and again
    ///     (the hot path). Unpinned, it must be recorded before anything else
    ///     is prepared or recorded.
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
        if let existing = subjects[slot].indexByName[subject] {
            index = existing
        } else {
            guard subjects[slot].indexByName.count < limits.maxSubjectsPerKind else {
                throw refuse(slot, "the kind already keeps \(limits.maxSubjectsPerKind) subjects")
            }
            index = insertSubject(subject, slot: slot)
        }
        if pinned { subjectRecords[Int(index)].isPinned = true }
        return PreparedEvent(slot: Int32(slot), subject: index, value: value)
    }

    func malformed(_ slot: Int, _ problem: String) -> NotificationCenterError {
        .malformedEvent(EventDecodingError(kind: descriptors[slot].rule.kind, problem: problem))
    }

    /// Prepares (unpinned) and records a rich event in one step. An event
    /// for a subject the table does not keep, at the default value, is no
    /// change and needs no storage (so it cannot be refused by a limit).
    public mutating func record(_ event: SystemEvent, mode: HoldingMode) throws(NotificationCenterError) -> RecordOutcome {
        let slot = try slot(of: event.kind)
        if kinds[slot].isKeyed, let subject = event.subject, subjects[slot].indexByName[subject] == nil,
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
    static func plainOrNil(_ value: JSONValue, enumValues: [String]?) -> EventValue? {
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

    /// A prepared event in its plain form: kind, subject name and JSON
    /// value (a prepared event's subject and value are the table's until
    /// it is recorded, and a recorded one's stay while they are current).
    public func event(from prepared: PreparedEvent) -> SystemEvent {
        SystemEvent(kind: kind(of: prepared), subject: subjectName(of: prepared), value: valueJSON(of: prepared))
    }

    /// A prepared event's subject name (nil for a value kind's).
    public func subjectName(of prepared: PreparedEvent) -> String? {
        prepared.subject >= 0 ? subjectInfo[Int(prepared.subject)].name : nil
    }

    /// A prepared event's value as JSON.
    public func valueJSON(of prepared: PreparedEvent) -> JSONValue { json(prepared.value, slot: Int(prepared.slot)) }

    /// A prepared event's kind.
    public func kind(of prepared: PreparedEvent) -> NotificationKind { descriptors[Int(prepared.slot)].kind }

    /// The JSON form of a value of the kind at `slot`.
    func json(_ value: EventValue, slot: Int) -> JSONValue {
        if let id = value.symbolID { return symbols[id] }
        return descriptors[slot].rule.json(forPlain: value)
    }
}

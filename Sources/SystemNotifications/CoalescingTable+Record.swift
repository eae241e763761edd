import MainLoopJSON

/// Recording events: the engine's hot path.
extension CoalescingTable {
    /// Records one event: drops it if it changes nothing, updates the
    /// current value, then reports it live, holds it, or (not running) keeps
    /// only the value.
    /// - Throws: ``NotificationCenterError/foreignPreparedEvent`` for an
    ///   event this table did not prepare; nothing changes then.
    @inlinable @inline(__always)
    public mutating func record(_ event: PreparedEvent, mode: HoldingMode) throws(NotificationCenterError) -> RecordOutcome {
        let slot = Int(event.slot)
        guard slot >= 0, slot < kinds.count else { throw .foreignPreparedEvent }
        guard kinds[slot].isKeyed else {
            let effect = recordValue(event.value, slot: slot, mode: mode)
            return RecordOutcome(effect, event, isPlain: effect == .live && kinds[slot].isPlainStandard)
        }
        return try recordKeyedEvent(event, mode: mode)
    }

    @inlinable @inline(__always)
    mutating func recordValue(_ new: EventValue, slot: Int, mode: HoldingMode) -> RecordOutcome.Effect {
        // One borrowed buffer for the whole record (bounds already checked):
        // each `kinds[slot].field` write would check the array's uniqueness.
        let (effect, firstHeld) = kinds.withUnsafeMutableBufferPointer { kinds -> (RecordOutcome.Effect, Bool) in
            let kind = kinds.baseAddress! + slot
            kind.pointee.counters.received &+= 1
            let previous = kind.pointee.value
            guard kind.pointee.shape == .latestEvent || previous != new else {
                kind.pointee.counters.ignoredUnchanged &+= 1
                return (.unchanged, false)
            }
            kind.pointee.value = new
            switch mode {
            case .notRunning:
                kind.pointee.counters.changedWhileNotRunning &+= 1
                return (.changedWhileNotRunning, false)
            case .live:
                kind.pointee.counters.deliveredLive &+= 1
                return (.live, false)
            case .holding:
                kind.pointee.counters.held &+= 1
                if kind.pointee.held == nil {
                    kind.pointee.held = HeldSlot(atSuspension: previous, current: new, count: 1)
                    return (.held, true)
                }
                kind.pointee.held!.current = new
                kind.pointee.held!.count &+= 1
                return (.held, false)
            }
        }
        if firstHeld {
            heldSlots += 1
            heldOrder.append(HeldEntry(slot: Int32(slot), subject: -1))
        }
        return effect
    }

    @usableFromInline
    mutating func recordKeyedEvent(_ event: PreparedEvent, mode: HoldingMode) throws(NotificationCenterError) -> RecordOutcome {
        let slot = Int(event.slot)
        guard isLiveSubject(event.subject, slot: slot) else { throw .foreignPreparedEvent }
        return RecordOutcome(recordKeyed(event.value, slot: slot, subject: event.subject, mode: mode), event)
    }

    /// A keyed event, through one borrowed buffer of the kinds and one of
    /// the subject slab; what appends to lists happens after.
    private mutating func recordKeyed(_ new: EventValue, slot: Int, subject: Int32, mode: HoldingMode) -> RecordOutcome.Effect {
        var firstHeldKind = false, firstHeldSubject = false, releaseAfter = false
        let effect = kinds.withUnsafeMutableBufferPointer { kinds -> RecordOutcome.Effect in
            subjectRecords.withUnsafeMutableBufferPointer { records -> RecordOutcome.Effect in
                let kind = kinds.baseAddress! + slot
                let record = records.baseAddress! + Int(subject)
                kind.pointee.counters.received &+= 1
                let previous = record.pointee.value
                guard previous != new else {
                    kind.pointee.counters.ignoredUnchanged &+= 1
                    releaseAfter = true
                    return .unchanged
                }
                record.pointee.value = new
                switch mode {
                case .notRunning:
                    kind.pointee.counters.changedWhileNotRunning &+= 1
                    releaseAfter = true
                    return .changedWhileNotRunning
                case .live:
                    // The subject stays until `finishLive`: its name is in the notification.
                    kind.pointee.counters.deliveredLive &+= 1
                    return .live
                case .holding:
                    kind.pointee.counters.held &+= 1
                    // The kind-level slot counts the kind's held events (a keyDiff
                    // kind's one notification sits at its first held event).
                    if kind.pointee.held == nil {
                        kind.pointee.held = HeldSlot(atSuspension: previous, current: new, count: 1)
                        firstHeldKind = true
                    } else {
                        kind.pointee.held!.current = new
                        kind.pointee.held!.count &+= 1
                    }
                    if record.pointee.held == nil {
                        record.pointee.held = HeldSlot(atSuspension: previous, current: new, count: 1)
                        firstHeldSubject = true
                    } else {
                        record.pointee.held!.current = new
                        record.pointee.held!.count &+= 1
                    }
                    return .held
                }
            }
        }
        let keyDiff = kinds[slot].shape == .keyDiff
        if firstHeldKind {
            heldSlots += 1
            if keyDiff { heldOrder.append(HeldEntry(slot: Int32(slot), subject: -1)) }
        }
        if firstHeldSubject {
            heldSlots += 1
            if keyDiff {
                subjects[slot].heldKeys.append(subject)
            } else {
                heldOrder.append(HeldEntry(slot: Int32(slot), subject: subject))
            }
        }
        if releaseAfter { releaseSubjectIfIdle(subject) }
        return effect
    }

    /// The notification of a live change that `record` reported.
    /// `mutating` only so that a table stored in a class is borrowed in
    /// place for the call rather than copied (it changes nothing but a
    /// subject's cached details).
    @inlinable
    public mutating func liveNotification(_ outcome: RecordOutcome) -> SystemNotification {
        let slot = Int(outcome.event.slot)
        if kinds[slot].isPlainStandard {
            return SystemNotification(slot: slot, merged: 1, encoded: outcome.event.value, details: nil)
        }
        return richLiveNotification(outcome)
    }

    @usableFromInline
    mutating func richLiveNotification(_ outcome: RecordOutcome) -> SystemNotification {
        notification(slot: Int(outcome.event.slot), subject: outcome.event.subject, value: outcome.event.value, merged: 1)
    }

    /// Ends a live change once it is delivered: its subject, if back at the
    /// default, is freed now (it had to stay for the notification's name).
    @inlinable
    public mutating func finishLive(_ outcome: RecordOutcome) {
        guard outcome.event.subject >= 0 else { return }
        releaseSubject(outcome.event.subject)
    }

    @usableFromInline
    mutating func releaseSubject(_ index: Int32) { releaseSubjectIfIdle(index) }

    /// A notification of `slot` (and `subject`, an index, or -1) whose
    /// value is `value`; details are shared per subject and per user kind,
    /// and made anew only for a resolved symbol or map.
    mutating func notification(slot: Int, subject: Int32, value: EventValue, merged: Int,
                               resolved: JSONValue? = nil) -> SystemNotification {
        let resolved = resolved ?? value.symbolID.map { symbols[$0] }
        var details: NotificationDetails?
        if subject >= 0 {
            // In place: reading `subjectRecords[i].details` would copy the record.
            let customRule = descriptors[slot].customRule
            let shared = subjectRecords.withUnsafeMutableBufferPointer { records -> NotificationDetails in
                let record = records.baseAddress! + Int(subject)
                if let details = record.pointee.details { return details }
                let details = NotificationDetails(subject: record.pointee.name, resolved: nil, customRule: customRule)
                record.pointee.details = details
                return details
            }
            details = shared.with(resolved: resolved)
        } else if let resolved {
            details = NotificationDetails(subject: nil, resolved: resolved, customRule: descriptors[slot].customRule)
        } else {
            details = descriptors[slot].customDetails
        }
        return SystemNotification(slot: slot, merged: merged, encoded: value, details: details)
    }
}

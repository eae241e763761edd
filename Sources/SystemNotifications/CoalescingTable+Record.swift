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
        // One unsigned compare checks both ends (a negative slot becomes huge).
        let slot = Int(UInt32(bitPattern: event.slot))
        guard slot < kinds.count else { throw .foreignPreparedEvent }
        if kinds[slot].isPlainValueKind {
            // The same update, specialized: the shape and plainness are known.
            let (effect, _) = recordValue(event.value, slot: slot, mode: mode, plainValueKind: true)
            return RecordOutcome(effect, event, isPlain: true)
        }
        guard kinds[slot].isKeyed else {
            let (effect, isPlain) = recordValue(event.value, slot: slot, mode: mode, plainValueKind: false)
            return RecordOutcome(effect, event, isPlain: isPlain)
        }
        return try recordKeyedEvent(event, mode: mode)
    }

    /// Records a value kind's event in place; also returns whether it is a
    /// live change of a plain standard kind (read while the record is at
    /// hand, not looked up again). `plainValueKind`: the caller knows the
    /// kind's `isPlainValueKind` is true (a constant where inlined).
    @inlinable @inline(__always)
    mutating func recordValue(_ new: EventValue, slot: Int, mode: HoldingMode, plainValueKind: Bool)
        -> (RecordOutcome.Effect, isPlain: Bool) {
        // In place, with one bounds check (the kinds are an `OwnedArray`).
        let (effect, firstHeld, isPlain) = kinds.update(at: slot) { kind -> (RecordOutcome.Effect, Bool, Bool) in
            kind.counters.received &+= 1
            let previous = kind.value
            guard (!plainValueKind && kind.shape == .latestEvent) || previous != new else {
                kind.counters.ignoredUnchanged &+= 1
                return (.unchanged, false, false)
            }
            kind.value = new
            switch mode {
            case .live:
                kind.counters.deliveredLive &+= 1
                return (.live, false, plainValueKind || kind.isPlainStandard)
            case .notRunning:
                kind.counters.changedWhileNotRunning &+= 1
                return (.changedWhileNotRunning, false, false)
            case .holding:
                kind.counters.held &+= 1
                if kind.held == nil {
                    kind.held = HeldSlot(atSuspension: previous, current: new, count: 1)
                    return (.held, true, false)
                }
                kind.held!.current = new
                kind.held!.count &+= 1
                return (.held, false, false)
            }
        }
        if firstHeld {
            heldSlots += 1
            appendHeld(HeldList.entry(kind: slot))
        }
        return (effect, isPlain)
    }

    @usableFromInline
    mutating func recordKeyedEvent(_ event: PreparedEvent, mode: HoldingMode) throws(NotificationCenterError) -> RecordOutcome {
        let slot = Int(event.slot), subject = event.subject
        // A free record's slot is -1, and `slot` is not: the slot check
        // also checks the subject is live.
        guard subject >= 0, Int(subject) < subjectRecords.capacity, subjectRecords[Int(subject)].slot == Int32(slot) else {
            throw .foreignPreparedEvent
        }
        return RecordOutcome(recordKeyed(event.value, slot: slot, subject: subject, mode: mode), event)
    }

    /// A keyed event of a live subject of the kind at `slot`.
    private mutating func recordKeyed(_ new: EventValue, slot: Int, subject: Int32, mode: HoldingMode) -> RecordOutcome.Effect {
        let index = Int(subject)
        kinds[slot].counters.received &+= 1
        let previous = subjectRecords[index].value
        guard previous != new else {
            kinds[slot].counters.ignoredUnchanged &+= 1
            releaseSubjectIfIdle(subject)
            return .unchanged
        }
        subjectRecords[index].value = new
        switch mode {
        case .notRunning:
            kinds[slot].counters.changedWhileNotRunning &+= 1
            releaseSubjectIfIdle(subject)
            return .changedWhileNotRunning
        case .live:
            // The subject stays until `finishLive`: its name is in the notification.
            kinds[slot].counters.deliveredLive &+= 1
            return .live
        case .holding:
            kinds[slot].counters.held &+= 1
            let keyDiff = kinds[slot].shape == .keyDiff
            // The kind-level slot counts the kind's held events (a keyDiff
            // kind's one notification sits at its first held event).
            if kinds[slot].held == nil {
                kinds[slot].held = HeldSlot(atSuspension: previous, current: new, count: 1)
                heldSlots += 1
                if keyDiff { appendHeld(HeldList.entry(kind: slot)) }
            } else {
                kinds[slot].held!.current = new
                kinds[slot].held!.count &+= 1
            }
            // A first hold (every event of a burst over new subjects) costs
            // little more than a fold: `hold` ends the record's own link,
            // and linking it after the tail is inline.
            let count = subjectRecords[index].hold(atSuspension: previous)
            if count <= 1 {
                if count == 0 {
                    carryHeldCount(of: subject)
                } else {
                    heldSlots += 1
                    if keyDiff {
                        subjects[slot].heldKeys.append(subject)
                    } else {
                        linkAfterHeldTail(subject)
                    }
                }
            }
            return .held
        }
    }

    /// Carries a subject's held count that just wrapped past `UInt32.max`
    /// (to 0) into the table: 2^32 − 1 of it, leaving 1 in the record so
    /// that it still says something is held.
    @inline(never)
    mutating func carryHeldCount(of subject: Int32) {
        heldCountCarries[subject, default: 0] += Int(UInt32.max)
        subjectRecords[Int(subject)].heldCount = 1
    }

    /// What is held for a held subject, which then holds nothing.
    mutating func takeHeld(_ subject: Int32) -> HeldSlot {
        let index = Int(subject)
        precondition(subjectRecords[index].isHeld, "takeHeld of a subject that holds nothing")
        var count = Int(subjectRecords[index].heldCount)
        if !heldCountCarries.isEmpty, let carry = heldCountCarries.removeValue(forKey: subject) { count += carry }
        subjectRecords[index].heldCount = 0
        return HeldSlot(atSuspension: subjectRecords[index].valueAtSuspension, current: subjectRecords[index].value, count: count)
    }

    /// Appends `entry` to the held list (a first held event; rare, so not
    /// inlined into the hot path).
    @usableFromInline
    mutating func appendHeld(_ entry: Int32) {
        setNextHeld(of: entry, to: HeldList.end)
        linkAfterHeldTail(entry)
    }

    /// Makes `entry`, whose own link already ends the list, the held list's
    /// new tail.
    @inline(__always)
    private mutating func linkAfterHeldTail(_ entry: Int32) {
        if heldTail == HeldList.end {
            heldHead = entry
        } else {
            setNextHeld(of: heldTail, to: entry)
        }
        heldTail = entry
    }

    @inline(__always)
    private mutating func setNextHeld(of entry: Int32, to next: Int32) {
        if entry >= 0 {
            subjectRecords[Int(entry)].nextHeld = next
        } else {
            kinds[HeldList.kindSlot(of: entry)].nextHeld = next
        }
    }

    /// The entry after `entry` in the held list.
    func nextHeld(after entry: Int32) -> Int32 {
        entry >= 0 ? subjectRecords[Int(entry)].nextHeld : kinds[HeldList.kindSlot(of: entry)].nextHeld
    }

    /// The kind slot and the subject (-1 for a kind's own entry) of a held
    /// list entry.
    func heldParts(_ entry: Int32) -> (slot: Int, subject: Int32) {
        entry >= 0 ? (Int(subjectRecords[Int(entry)].slot), entry) : (HeldList.kindSlot(of: entry), -1)
    }

    /// Empties the held list (its links are rewritten as entries are added).
    mutating func clearHeldList() {
        heldHead = HeldList.end
        heldTail = HeldList.end
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
        let details: NotificationDetails?
        if subject >= 0 {
            let shared = sharedDetails(of: subject, slot: slot)
            // The shared details as they are (one retain: the notification's)
            // unless the value needs resolving.
            details = resolved.map { NotificationDetails(subject: shared.subject, resolved: $0, customRule: shared.customRule) }
                ?? shared
        } else if let resolved {
            details = NotificationDetails(subject: nil, resolved: resolved, customRule: descriptors[slot].customRule)
        } else {
            details = descriptors[slot].customDetails
        }
        return SystemNotification(slot: slot, merged: merged, encoded: value, details: details)
    }

    /// A subject's shared details (its name, its kind's rule), made the
    /// first time they are needed.
    private mutating func sharedDetails(of subject: Int32, slot: Int) -> NotificationDetails {
        if let details = subjectInfo[Int(subject)].details { return details }
        let details = NotificationDetails(subject: subjectInfo[Int(subject)].name, resolved: nil,
                                          customRule: descriptors[slot].customRule)
        subjectInfo[Int(subject)].details = details
        return details
    }
}

import MainLoopJSON

/// One notification a resume flush resolved, as plain data, kept in the
/// table until ``CoalescingTable/finishFlush()``: the application makes each
/// ``SystemNotification`` right before delivering it, so a flush of many
/// subjects builds no array of references.
struct FlushEntry {
    /// The kind's slot.
    let slot: Int32
    /// The subject (an index), or -1.
    let subject: Int32
    /// The net value.
    let value: EventValue
    /// How many events it folds.
    let merged: Int
    /// The resolved value (a keyDiff map) in `flushedValues`, or -1.
    let resolved: Int32
}

/// The resume flush and the discard of a killed app.
extension CoalescingTable {
    /// Resolves everything held into notifications, one per kind (per
    /// subject for perSubject kinds) whose net change is not zero, in the
    /// order of each one's first held event, and updates the counters. The
    /// table then holds nothing. Make each notification with
    /// ``flushedNotification(_:)`` right before delivering it, then call
    /// ``finishFlush()``.
    /// - Returns: how many notifications the flush made.
    /// - Precondition: the previous flush was finished.
    public mutating func flush() -> Int {
        precondition(flushEntries.count == 0 && flushedValues.isEmpty, "flush() before finishFlush() of the previous flush")
        var keyDiffs: [(entry: Int, slot: Int)] = []
        // Pass 1, in place: value kinds and subjects of perSubject kinds
        // (the bulk of a large flush); a keyDiff kind gets a placeholder,
        // completed in pass 2 (it builds a JSON map).
        var entry = heldHead
        while entry != HeldList.end {
            let (slot, subject) = heldParts(entry)
            entry = nextHeld(after: entry)
            switch kinds[slot].shape {
            case .lastValue, .latestEvent:
                let kindSlot = kinds[slot].held!
                kinds[slot].held = nil
                if kinds[slot].shape == .latestEvent || kindSlot.current != kindSlot.atSuspension {
                    kinds[slot].counters.deliveredMerged += 1
                    kinds[slot].counters.folded += kindSlot.count
                    flushEntries.append(FlushEntry(slot: Int32(slot), subject: -1, value: kindSlot.current,
                                                   merged: kindSlot.count, resolved: -1))
                } else {
                    kinds[slot].counters.cancelled += kindSlot.count
                }
            case .keyDiff:
                keyDiffs.append((flushEntries.count, slot))
                flushEntries.append(FlushEntry(slot: Int32(slot), subject: -1, value: .null, merged: 0, resolved: -1))
            case .perSubject:
                kinds[slot].held = nil
                let index = Int(subject)
                let subjectSlot = takeHeld(subject)
                // Only a subject back at its default may be freed after the flush.
                if subjectSlot.current == kinds[slot].defaultValue && !subjectRecords[index].isPinned {
                    flushedSubjects.append(subject)
                }
                if subjectSlot.current != subjectSlot.atSuspension {
                    kinds[slot].counters.deliveredMerged += 1
                    kinds[slot].counters.folded += subjectSlot.count
                    flushEntries.append(FlushEntry(slot: Int32(slot), subject: subject, value: subjectSlot.current,
                                                   merged: subjectSlot.count, resolved: -1))
                } else {
                    kinds[slot].counters.cancelled += subjectSlot.count
                }
            }
        }
        // Pass 2: keyDiff kinds; a kind whose keys all came back is cancelled
        // (its placeholder is dropped).
        if !keyDiffs.isEmpty {
            for (entry, slot) in keyDiffs {
                flushEntries[entry] = flushKeyDiff(slot) ?? FlushEntry(slot: -1, subject: -1, value: .null, merged: 0, resolved: -1)
            }
            flushEntries.removeAll { $0.slot < 0 }
        }
        clearHeldList()
        heldSlots = 0
        return flushEntries.count
    }

    /// One notification with every key whose final value differs from its
    /// value at suspension, keys in first-held order; nil when none differs.
    private mutating func flushKeyDiff(_ slot: Int) -> FlushEntry? {
        var changes = JSONObject()
        for subject in subjects[slot].heldKeys {
            let held = takeHeld(subject)
            if held.current != held.atSuspension {
                changes[subjectInfo[Int(subject)].name] = json(held.current, slot: slot)
            }
            if held.current == kinds[slot].defaultValue { flushedSubjects.append(subject) }
        }
        subjects[slot].heldKeys.removeAll(keepingCapacity: true)
        let count = kinds[slot].held!.count
        kinds[slot].held = nil
        guard !changes.isEmpty else {
            kinds[slot].counters.cancelled += count
            return nil
        }
        flushedValues.append(.object(changes))
        kinds[slot].counters.deliveredMerged += 1
        kinds[slot].counters.folded += count
        return FlushEntry(slot: Int32(slot), subject: -1, value: .null, merged: count, resolved: Int32(flushedValues.count - 1))
    }

    /// The `index`-th notification of the flush (valid until
    /// ``finishFlush()``). A subject's shared details are made the first
    /// time they are needed.
    public mutating func flushedNotification(_ index: Int) -> SystemNotification {
        let entry = flushEntries[index]
        let slot = Int(entry.slot)
        if entry.resolved < 0, entry.value.symbolID == nil {
            if entry.subject < 0, kinds[slot].isPlainStandard {
                return SystemNotification(slot: slot, merged: entry.merged, encoded: entry.value, details: nil)
            }
            if entry.subject >= 0, let details = subjectInfo[Int(entry.subject)].details {
                return SystemNotification(slot: slot, merged: entry.merged, encoded: entry.value, details: details)
            }
        }
        return notification(slot: slot, subject: entry.subject, value: entry.value, merged: entry.merged,
                            resolved: entry.resolved >= 0 ? flushedValues[Int(entry.resolved)] : nil)
    }

    /// Ends a flush once its notifications are delivered: subjects back at
    /// their default are freed and the flush's side storage is cleared,
    /// its capacity kept for the next flush (a warm flush allocates
    /// nothing).
    /// - Returns: whether a burst left storage behind that
    ///   ``giveBackStorage()`` would give back: the subject store is mostly
    ///   free, or a list the flush emptied has room for more than 4,096
    ///   entries. Owners call it a little later rather than at once, so that
    ///   bursts that come back again and again do not regrow storage each
    ///   time.
    @discardableResult
    public mutating func finishFlush() -> Bool {
        for subject in flushedSubjects { releaseSubjectIfIdle(subject) }
        flushedSubjects.removeAll(keepingCapacity: true)
        flushedValues.removeAll(keepingCapacity: true)
        flushEntries.removeAll()
        return burstLeftStorage
    }

    /// A whole flush as notifications (for users of the table on its own).
    public mutating func flushNotifications() -> [SystemNotification] {
        let notifications = (0..<flush()).map { flushedNotification($0) }
        finishFlush()
        return notifications
    }

    /// Drops everything held (the app died), counting it as discarded.
    public mutating func discard() {
        var entry = heldHead
        while entry != HeldList.end {
            let (slot, subject) = heldParts(entry)
            entry = nextHeld(after: entry)  // before the subject may be freed
            if let held = kinds[slot].held {
                kinds[slot].counters.discarded += held.count
                kinds[slot].held = nil
            }
            let held = kinds[slot].shape == .keyDiff ? subjects[slot].heldKeys : (subject >= 0 ? [subject] : [])
            for subject in held {
                _ = takeHeld(subject)
                releaseSubjectIfIdle(subject)
            }
            subjects[slot].heldKeys.removeAll(keepingCapacity: true)
        }
        clearHeldList()
        heldSlots = 0
    }
}

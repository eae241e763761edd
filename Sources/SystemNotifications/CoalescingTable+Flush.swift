import MainLoopJSON

/// One notification a resume flush resolved, as plain data: the
/// application makes the ``SystemNotification`` right before delivering it
/// (``CoalescingTable/notification(for:)``), so a flush of many subjects
/// builds no array of references.
public struct FlushEntry: Sendable {
    /// The kind's slot.
    public let slot: Int32
    /// The subject (an index), or -1.
    let subject: Int32
    /// The net value.
    let value: EventValue
    /// How many events it folds.
    public let merged: Int
    /// The resolved value (a keyDiff map) in the flush's side storage, or -1.
    let resolved: Int32
}

/// The resume flush and the discard of a killed app.
extension CoalescingTable {
    /// Resolves everything held into notifications (appended to `entries`),
    /// one per kind (per subject for perSubject kinds) whose net change is
    /// not zero, in the order of each one's first held event, and updates
    /// the counters. The table then holds nothing. Make each notification
    /// with ``notification(for:)``, deliver it, then call ``finishFlush()``.
    public mutating func flush(into entries: inout [FlushEntry]) {
        flushedValues.removeAll(keepingCapacity: true)
        let first = entries.count
        // Pass 1, over borrowed buffers: value kinds and subjects of
        // perSubject kinds (the bulk of a large flush); a keyDiff kind gets
        // a placeholder, completed in pass 2 (it builds a JSON map).
        var keyDiffs: [(entry: Int, slot: Int)] = []
        let order = heldOrder
        kinds.withUnsafeMutableBufferPointer { kinds in
            subjectRecords.withUnsafeMutableBufferPointer { records in
                for held in order {
                    let slot = Int(held.slot)
                    let kind = kinds.baseAddress! + slot
                    switch kind.pointee.shape {
                    case .lastValue, .latestEvent:
                        let kindSlot = kind.pointee.held!
                        kind.pointee.held = nil
                        if kind.pointee.shape == .latestEvent || kindSlot.current != kindSlot.atSuspension {
                            kind.pointee.counters.deliveredMerged += 1
                            kind.pointee.counters.folded += kindSlot.count
                            entries.append(FlushEntry(slot: held.slot, subject: -1, value: kindSlot.current,
                                                      merged: kindSlot.count, resolved: -1))
                        } else {
                            kind.pointee.counters.cancelled += kindSlot.count
                        }
                    case .keyDiff:
                        keyDiffs.append((entries.count, slot))
                        entries.append(FlushEntry(slot: held.slot, subject: -1, value: .null, merged: 0, resolved: -1))
                    case .perSubject:
                        kind.pointee.held = nil
                        let record = records.baseAddress! + Int(held.subject)
                        let subjectSlot = record.pointee.held!
                        record.pointee.held = nil
                        if subjectSlot.current != subjectSlot.atSuspension {
                            kind.pointee.counters.deliveredMerged += 1
                            kind.pointee.counters.folded += subjectSlot.count
                            entries.append(FlushEntry(slot: held.slot, subject: held.subject, value: subjectSlot.current,
                                                      merged: subjectSlot.count, resolved: -1))
                        } else {
                            kind.pointee.counters.cancelled += subjectSlot.count
                        }
                    }
                }
            }
        }
        for held in order where held.subject >= 0 { flushedSubjects.append(held.subject) }
        // Pass 2: keyDiff kinds; a kind whose keys all came back is cancelled.
        var cancelledKeyDiff = false
        for (entry, slot) in keyDiffs {
            if let completed = flushKeyDiff(slot) {
                entries[entry] = completed
            } else {
                entries[entry] = FlushEntry(slot: -1, subject: -1, value: .null, merged: 0, resolved: -1)
                cancelledKeyDiff = true
            }
        }
        if cancelledKeyDiff { entries[first...].removeAll { $0.slot < 0 } }
        heldOrder.removeAll(keepingCapacity: true)
        heldSlots = 0
    }

    /// One notification with every key whose final value differs from its
    /// value at suspension, keys in first-held order; nil when none differs.
    private mutating func flushKeyDiff(_ slot: Int) -> FlushEntry? {
        var changes = JSONObject()
        for subject in subjects[slot].heldKeys {
            let held = subjectRecords[Int(subject)].held!
            subjectRecords[Int(subject)].held = nil
            if held.current != held.atSuspension {
                changes[subjectRecords[Int(subject)].name] = json(held.current, slot: slot)
            }
            flushedSubjects.append(subject)
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

    /// The notification of a flushed entry (valid until ``finishFlush()``).
    /// `mutating` so the table is borrowed in place, and a subject's shared
    /// details are made the first time they are needed.
    public mutating func notification(for entry: FlushEntry) -> SystemNotification {
        let slot = Int(entry.slot)
        if entry.subject < 0, entry.resolved < 0, kinds[slot].isPlainStandard {
            return SystemNotification(slot: slot, merged: entry.merged, encoded: entry.value, details: nil)
        }
        return notification(slot: slot, subject: entry.subject, value: entry.value, merged: entry.merged,
                            resolved: entry.resolved >= 0 ? flushedValues[Int(entry.resolved)] : nil)
    }

    /// Ends a flush once its notifications are delivered: subjects back at
    /// their default are freed, the flush's side storage is cleared.
    public mutating func finishFlush() {
        for subject in flushedSubjects { releaseSubjectIfIdle(subject) }
        flushedSubjects.removeAll(keepingCapacity: true)
        flushedValues.removeAll(keepingCapacity: true)
    }

    /// A whole flush as notifications (for users of the table on its own).
    public mutating func flushNotifications() -> [SystemNotification] {
        var entries: [FlushEntry] = []
        flush(into: &entries)
        let notifications = entries.map { notification(for: $0) }
        finishFlush()
        return notifications
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
                subjectRecords[Int(subject)].held = nil
                releaseSubjectIfIdle(subject)
            }
            subjects[slot].heldKeys.removeAll(keepingCapacity: true)
        }
        heldOrder.removeAll(keepingCapacity: true)
        heldSlots = 0
    }
}

import MainLoopJSON

/// What is held for one kind, or one subject of a keyed kind, while the app
/// is suspended.
struct HeldSlot {
    /// The value before the first held event, i.e. the value at suspension.
    var atSuspension: JSONValue
    /// The value after the latest held event.
    var current: JSONValue
    /// Arrival order of the first held event (delivery order on resume).
    var firstSequence: UInt64
    /// How many events this slot folds.
    var count: Int
}

/// The held queue of SPEC §4: O(1) per event, memory bounded by kinds and
/// subjects, never by the number of events.
///
/// One slot per kind (and per subject for keyed kinds, inside that kind's
/// ``KindState``) keeps the value at suspension, the current value, the
/// sequence number of the first held event and a count: the idempotent
/// pending slot of sd-event's `source_set_pending`, ordered by first
/// arrival. Pure data, no loop; loop thread only, so its fields skip
/// dynamic exclusivity checks (see ``KindTable``).
final class HeldNotificationQueue {
    /// Kind slots with something held, so flush touches only those.
    @exclusivity(unchecked) private(set) var activeKinds: [Int] = []
    @exclusivity(unchecked) private var nextSequence: UInt64 = 0

    /// How many slots hold something (kinds plus subjects): the memory bound.
    func occupiedSlotCount(in table: KindTable) -> Int {
        activeKinds.reduce(0) { total, slot in
            total + (table[slot].pointee.held == nil ? 0 : 1) + table[slot].pointee.heldSubjects.count
        }
    }

    /// Holds one change of `kind` (at `slot`): `previous` is the value
    /// before it, `new` after it.
    func hold(_ kind: UnsafeMutablePointer<KindState>, slot: Int, subject: String?,
              previous: JSONValue, new: JSONValue) {
        let sequence = nextSequence
        nextSequence &+= 1
        if kind.pointee.held == nil {
            kind.pointee.held = HeldSlot(atSuspension: previous, current: new, firstSequence: sequence, count: 1)
            activeKinds.append(slot)
        } else {
            kind.pointee.held!.current = new
            kind.pointee.held!.count &+= 1
        }
        guard kind.pointee.rule.isKeyed, let subject else { return }
        if kind.pointee.heldSubjects[subject] == nil {
            kind.pointee.heldSubjects[subject] = HeldSlot(atSuspension: previous, current: new, firstSequence: sequence, count: 1)
        } else {
            kind.pointee.heldSubjects[subject]!.current = new
            kind.pointee.heldSubjects[subject]!.count &+= 1
        }
    }

    /// Resolves everything held into notifications, in order of each kind's
    /// (or subject's) first held event, and updates the counters.
    func flush(_ table: KindTable) -> [(slot: Int, notification: SystemNotification)] {
        var ordered: [(sequence: UInt64, slot: Int, notification: SystemNotification)] = []
        for slot in activeKinds {
            let kind = table[slot]
            let rule = kind.pointee.rule
            guard let kindSlot = kind.pointee.held else { continue }
            func deliver(_ subject: String?, _ value: JSONValue, merged: Int, sequence: UInt64) {
                ordered.append((sequence, slot, SystemNotification(kind: rule.kind, subject: subject, value: value,
                                                                   merged: merged, rule: rule)))
                kind.pointee.counters.deliveredMerged += 1
                kind.pointee.counters.folded += merged
            }
            switch rule.shape {
            case .lastValue, .latestEvent:
                if rule.shape == .latestEvent || kindSlot.current != kindSlot.atSuspension {
                    deliver(nil, kindSlot.current, merged: kindSlot.count, sequence: kindSlot.firstSequence)
                } else {
                    kind.pointee.counters.cancelled += kindSlot.count
                }
            case .keyDiff:
                var changes = JSONObject()
                for (key, held) in kind.pointee.heldSubjects.sorted(by: { $0.value.firstSequence < $1.value.firstSequence })
                where held.current != held.atSuspension {
                    changes[key] = held.current
                }
                if changes.isEmpty {
                    kind.pointee.counters.cancelled += kindSlot.count
                } else {
                    deliver(nil, .object(changes), merged: kindSlot.count, sequence: kindSlot.firstSequence)
                }
            case .perSubject:
                for (subject, held) in kind.pointee.heldSubjects {
                    if held.current != held.atSuspension {
                        deliver(subject, held.current, merged: held.count, sequence: held.firstSequence)
                    } else {
                        kind.pointee.counters.cancelled += held.count
                    }
                }
            }
        }
        clear(table)
        return ordered.sorted { $0.sequence < $1.sequence }.map { ($0.slot, $0.notification) }
    }

    /// Drops everything held (the app died), counting it as discarded.
    func discard(_ table: KindTable) {
        for slot in activeKinds {
            table[slot].pointee.counters.discarded += table[slot].pointee.held?.count ?? 0
        }
        clear(table)
    }

    private func clear(_ table: KindTable) {
        for slot in activeKinds {
            table[slot].pointee.held = nil
            table[slot].pointee.heldSubjects.removeAll(keepingCapacity: true)
        }
        activeKinds.removeAll(keepingCapacity: true)
    }
}

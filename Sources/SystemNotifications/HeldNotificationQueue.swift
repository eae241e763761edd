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
/// One slot per kind (and per subject for keyed kinds) keeps the value at
/// suspension, the current value, the sequence number of the first held
/// event and a count: the idempotent pending slot of sd-event's
/// `source_set_pending`, ordered by first arrival. Pure data, no loop.
struct HeldNotificationQueue {
    /// Per kind slot: the kind-level slot (lastValue, latestEvent; for
    /// keyDiff only its order and count).
    private var kindSlots: [HeldSlot?] = []
    /// Per kind slot: subject slots of keyed kinds.
    private var subjectSlots: [[String: HeldSlot]] = []
    /// Kind slots with something held, so flush touches only those.
    private var activeKinds: [Int] = []
    private var nextSequence: UInt64 = 0

    /// Makes room for one more kind.
    mutating func addKind() {
        kindSlots.append(nil)
        subjectSlots.append([:])
    }

    /// How many slots hold something (kinds plus subjects): the memory bound.
    var occupiedSlotCount: Int {
        activeKinds.reduce(0) { $0 + (kindSlots[$1] == nil ? 0 : 1) + subjectSlots[$1].count }
    }

    var isEmpty: Bool { activeKinds.isEmpty }

    /// Holds one change: `previous` is the value before it, `new` after it.
    mutating func hold(slot: Int, shape: CoalescingRule.Shape, subject: String?, previous: JSONValue, new: JSONValue) {
        let sequence = nextSequence
        nextSequence &+= 1
        if kindSlots[slot] == nil {
            kindSlots[slot] = HeldSlot(atSuspension: previous, current: new, firstSequence: sequence, count: 1)
            activeKinds.append(slot)
        } else {
            kindSlots[slot]!.current = new
            kindSlots[slot]!.count += 1
        }
        guard shape == .keyDiff || shape == .perSubject, let subject else { return }
        if subjectSlots[slot][subject] == nil {
            subjectSlots[slot][subject] = HeldSlot(atSuspension: previous, current: new, firstSequence: sequence, count: 1)
        } else {
            subjectSlots[slot][subject]!.current = new
            subjectSlots[slot][subject]!.count += 1
        }
    }

    /// Resolves everything held into notifications, in order of each kind's
    /// (or subject's) first held event, and updates the counters.
    mutating func flush(rules: [CoalescingRule], counters: inout [NotificationCounters]) -> [SystemNotification] {
        var ordered: [(sequence: UInt64, notification: SystemNotification)] = []
        for slot in activeKinds {
            let rule = rules[slot]
            guard let kindSlot = kindSlots[slot] else { continue }
            switch rule.shape {
            case .lastValue, .latestEvent:
                let changed = rule.shape == .latestEvent || kindSlot.current != kindSlot.atSuspension
                if changed {
                    ordered.append((kindSlot.firstSequence, SystemNotification(
                        kind: rule.kind, subject: nil, value: kindSlot.current, merged: kindSlot.count, rule: rule)))
                    counters[slot].deliveredMerged += 1
                    counters[slot].folded += kindSlot.count
                } else {
                    counters[slot].cancelled += kindSlot.count
                }
            case .keyDiff:
                var changes = JSONObject()
                for (key, held) in subjectSlots[slot].sorted(by: { $0.value.firstSequence < $1.value.firstSequence })
                where held.current != held.atSuspension {
                    changes[key] = held.current
                }
                if changes.isEmpty {
                    counters[slot].cancelled += kindSlot.count
                } else {
                    ordered.append((kindSlot.firstSequence, SystemNotification(
                        kind: rule.kind, subject: nil, value: .object(changes), merged: kindSlot.count, rule: rule)))
                    counters[slot].deliveredMerged += 1
                    counters[slot].folded += kindSlot.count
                }
            case .perSubject:
                for (subject, held) in subjectSlots[slot] {
                    if held.current != held.atSuspension {
                        ordered.append((held.firstSequence, SystemNotification(
                            kind: rule.kind, subject: subject, value: held.current, merged: held.count, rule: rule)))
                        counters[slot].deliveredMerged += 1
                        counters[slot].folded += held.count
                    } else {
                        counters[slot].cancelled += held.count
                    }
                }
            }
        }
        clear()
        return ordered.sorted { $0.sequence < $1.sequence }.map(\.notification)
    }

    /// Drops everything held (the app died), counting it as discarded.
    mutating func discard(counters: inout [NotificationCounters]) {
        for slot in activeKinds {
            counters[slot].discarded += kindSlots[slot]?.count ?? 0
        }
        clear()
    }

    private mutating func clear() {
        for slot in activeKinds {
            kindSlots[slot] = nil
            subjectSlots[slot].removeAll(keepingCapacity: true)
        }
        activeKinds.removeAll(keepingCapacity: true)
    }
}

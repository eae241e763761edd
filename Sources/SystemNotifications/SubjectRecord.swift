/// What is held for one kind, or one subject of a keyed kind, while the app
/// is suspended: the value at suspension (before the first held event), the
/// value after the latest held event, and how many events it folds.
@usableFromInline
struct HeldSlot {
    @usableFromInline var atSuspension: EventValue
    @usableFromInline var current: EventValue
    @usableFromInline var count: Int

    @usableFromInline
    init(atSuspension: EventValue, current: EventValue, count: Int) {
        self.atSuspension = atSuspension
        self.current = current
        self.count = count
    }
}

/// One subject of a keyed kind (an accessory, a screen, a defaults key).
/// All kinds' subjects live in one slab of the table, by index: an event
/// carries the index, so recording it is one array access, not a hash.
///
/// 32 bytes, half a cache line: holding over 10^6 subjects streams the
/// records through the cache, and their size is part of the cost (the
/// "held coalesce, keyed" rows of `compare` and their flat target from 10^3
/// to 10^6 subjects). For that:
/// - the values are kept as their parts (an `EventValue` is 9 bytes in a
///   16-byte stride), and "nothing held" is a held count of 0;
/// - the held value after the latest held event is not stored: every held
///   event also sets the current value, so it is ``value``;
/// - the held count is 32 bits; the table carries what passes 2^32 − 1
///   (`CoalescingTable.heldCountCarries`), so the count stays exact;
/// - a free record is one whose ``slot`` is −1;
/// - the subject's name and notification details live beside the slab
///   (``SubjectInfo``), read only to name a subject, never on the hot path.
struct SubjectRecord {
    /// The bits of ``value``.
    var valueBits: UInt64
    /// The bits of the value at suspension (while something is held).
    var heldAtSuspensionBits: UInt64 = 0
    /// The kind it belongs to; −1 while the record is free.
    var slot: Int32
    /// The entry after this subject's in the held list (see ``HeldList``).
    var nextHeld = HeldList.end
    /// How many held events it folds (plus the table's carry for it);
    /// 0 when nothing is held.
    var heldCount: UInt32 = 0
    /// The tag of ``value``.
    var valueTag: EventValue.Tag
    /// The tag of the value at suspension.
    var heldAtSuspensionTag = EventValue.Tag.null
    /// Kept even at the default: a user's prepared event refers to it.
    var isPinned = false

    init(slot: Int32, value: EventValue) {
        self.slot = slot
        self.valueBits = value.bits
        self.valueTag = value.tag
    }

    /// What a freed position holds until it is reused.
    static var free: SubjectRecord { SubjectRecord(slot: -1, value: .null) }

    /// In use (not on the free list).
    var isLive: Bool { slot >= 0 }

    /// Its current value (the kind's default until an event changes it).
    var value: EventValue {
        get { EventValue(tag: valueTag, bits: valueBits) }
        set {
            valueTag = newValue.tag
            valueBits = newValue.bits
        }
    }

    /// Whether something is held for it.
    var isHeld: Bool { heldCount != 0 }

    /// The value it had when the first held event came (while held).
    var valueAtSuspension: EventValue { EventValue(tag: heldAtSuspensionTag, bits: heldAtSuspensionBits) }

    /// Holds one more event, which already set ``value``: the first one
    /// also keeps the value at suspension and ends the record's link in the
    /// held list (the caller appends it there, or to its kind's held keys,
    /// where the link is unused).
    /// - Returns: the new held count: 1 for the first held event, 0 when
    ///   the count wrapped past `UInt32.max` (the caller carries it, see
    ///   `CoalescingTable.carryHeldCount`). One compare tells a fold
    ///   (above 1) from both.
    mutating func hold(atSuspension: EventValue) -> UInt32 {
        if heldCount == 0 {
            heldAtSuspensionTag = atSuspension.tag
            heldAtSuspensionBits = atSuspension.bits
            nextHeld = HeldList.end
        }
        heldCount &+= 1
        return heldCount
    }
}

/// What the table keeps for a subject beside its ``SubjectRecord``: read to
/// name the subject (a notification, a keyDiff map, the name index), never
/// to record an event.
struct SubjectInfo {
    /// The subject's id as given (empty while the position is free).
    var name: String
    /// Its notification details (its name, its kind's rule), made the
    /// first time a notification needs them.
    var details: NotificationDetails?

    /// A freed position's.
    static var free: SubjectInfo { SubjectInfo(name: "", details: nil) }
}

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
/// 64 bytes, one cache line: holding over 10^6 subjects streams the
/// records through the cache, so their size is the cost. For that the
/// values are kept as their parts (an `EventValue` is 9 bytes in a
/// 16-byte stride), "nothing held" is a held count of 0, and the
/// notification details live beside the slab (``CoalescingTable``'s
/// `subjectDetails`). ``value`` and ``held`` read and write them whole.
struct SubjectRecord {
    /// The subject's id as given (empty while the record is free).
    var name: String
    /// The bits of ``value``.
    var valueBits: UInt64
    /// The bits of ``held``'s value at suspension.
    var heldAtSuspensionBits: UInt64 = 0
    /// The bits of ``held``'s current value.
    var heldCurrentBits: UInt64 = 0
    /// How many held events ``held`` folds; 0 when nothing is held.
    var heldCount = 0
    /// The kind it belongs to.
    var slot: Int32
    /// The entry after this subject's in the held list (see ``HeldList``).
    var nextHeld = HeldList.end
    /// The tag of ``value``.
    var valueTag: EventValue.Tag
    /// The tags of ``held``'s two values.
    var heldAtSuspensionTag = EventValue.Tag.null
    var heldCurrentTag = EventValue.Tag.null
    /// Kept even at the default: a user's prepared event refers to it.
    var isPinned = false
    /// In use (not on the free list).
    var isLive = true

    init(name: String, slot: Int32, value: EventValue, isLive: Bool = true) {
        self.name = name
        self.slot = slot
        self.valueBits = value.bits
        self.valueTag = value.tag
        self.isLive = isLive
    }

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

    /// What is held for it while suspended.
    var held: HeldSlot? {
        get {
            guard heldCount != 0 else { return nil }
            return HeldSlot(atSuspension: EventValue(tag: heldAtSuspensionTag, bits: heldAtSuspensionBits),
                            current: EventValue(tag: heldCurrentTag, bits: heldCurrentBits), count: heldCount)
        }
        set {
            guard let newValue else {
                heldCount = 0
                return
            }
            heldAtSuspensionTag = newValue.atSuspension.tag
            heldAtSuspensionBits = newValue.atSuspension.bits
            heldCurrentTag = newValue.current.tag
            heldCurrentBits = newValue.current.bits
            heldCount = newValue.count
        }
    }

    /// Holds one more event that leaves it at `current`: the first one
    /// also keeps the value at suspension and ends the record's link in the
    /// held list (the caller appends it there, or to its kind's held keys,
    /// where the link is unused). Returns whether it was the first.
    mutating func hold(_ current: EventValue, atSuspension: EventValue) -> Bool {
        let first = heldCount == 0
        if first {
            heldAtSuspensionTag = atSuspension.tag
            heldAtSuspensionBits = atSuspension.bits
            nextHeld = HeldList.end
        }
        heldCurrentTag = current.tag
        heldCurrentBits = current.bits
        heldCount &+= 1
        return first
    }
}

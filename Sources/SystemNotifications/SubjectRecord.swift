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
struct SubjectRecord {
    /// The subject's id as given (empty while the record is free).
    var name: String
    /// The kind it belongs to.
    var slot: Int32
    /// The entry after this subject's in the held list (see ``HeldList``;
    /// in the padding after `slot`, so a record stays 96 bytes).
    var nextHeld = HeldList.end
    /// Its current value (the kind's default until an event changes it).
    var value: EventValue
    /// What is held for it while suspended.
    var held: HeldSlot?
    /// Kept even at the default: a user's prepared event refers to it.
    var isPinned = false
    /// In use (not on the free list).
    var isLive = true
    /// The subject's notification details (name, rule), made when first needed.
    var details: NotificationDetails?

    init(name: String, slot: Int32, value: EventValue, isLive: Bool = true) {
        self.name = name
        self.slot = slot
        self.value = value
        self.isLive = isLive
    }
}

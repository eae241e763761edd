/// What is held for one kind, or one subject of a keyed kind, while the app
/// is suspended: the value at suspension (before the first held event), the
/// value after the latest held event, and how many events it folds.
struct HeldSlot {
    var atSuspension: EventValue
    var current: EventValue
    var count: Int
}

/// One subject of a keyed kind (an accessory, a screen, a defaults key).
struct SubjectRecord {
    /// The subject's id as given (empty while the record is free).
    var name: String
    /// Its current value (the kind's default until an event changes it).
    var value: EventValue
    /// What is held for it while suspended.
    var held: HeldSlot?
    /// Kept even at the default: a user's prepared event refers to it.
    var isPinned = false
    /// In use (not on the free list).
    var isLive = true
}

/// Dense storage of a keyed kind's subjects, by index: an event carries the
/// index, so recording it is an array access, not a hash. A subject back at
/// its kind's default with nothing held is freed (SPEC §4: it is the same as
/// one never seen), so memory is bounded by the subjects that differ from
/// the default, never by how many were ever seen.
struct SubjectStore {
    private var slots = FreeListArray<SubjectRecord>()
    private var indexByName: [String: Int32] = [:]

    /// Every record, live or free (`isLive` tells).
    var records: [SubjectRecord] { slots.elements }

    /// How many subjects are stored.
    var count: Int { indexByName.count }

    /// The index of `name`, if stored.
    func index(of name: String) -> Int32? { indexByName[name] }

    /// Stores `name` at `value` and returns its index.
    mutating func insert(_ name: String, value: EventValue) -> Int32 {
        let index = Int32(slots.insert(SubjectRecord(name: name, value: value)))
        indexByName[name] = index
        return index
    }

    subscript(index: Int32) -> SubjectRecord {
        get { slots[Int(index)] }
        _modify { yield &slots[Int(index)] }
    }

    /// Whether `index` names a stored subject.
    func isLive(_ index: Int32) -> Bool { index >= 0 && Int(index) < slots.capacity && slots[Int(index)].isLive }

    /// Frees the subject if it is back at `defaultValue`, holds nothing and
    /// is not pinned.
    mutating func releaseIfIdle(_ index: Int32, defaultValue: EventValue) {
        let record = slots[Int(index)]
        guard record.isLive, !record.isPinned, record.held == nil, record.value == defaultValue else { return }
        indexByName[record.name] = nil
        slots.free(Int(index), placeholder: SubjectRecord(name: "", value: defaultValue, isLive: false))
    }

    /// The stored subjects other than at the default, by name.
    func nonDefault(_ defaultValue: EventValue) -> [(name: String, value: EventValue)] {
        slots.elements.filter { $0.isLive && $0.value != defaultValue }.map { ($0.name, $0.value) }
    }
}

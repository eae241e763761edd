/// Subjects (in one slab for every keyed kind) and symbols (collected by
/// mark and sweep).
extension CoalescingTable {
    /// Stores a new subject of the kind at `slot`, at the kind's default.
    mutating func insertSubject(_ name: String, slot: Int) -> Int32 {
        let index = Int32(subjectRecords.insert(SubjectRecord(name: name, slot: Int32(slot), value: kinds[slot].defaultValue)))
        subjects[slot].indexByName[name] = index
        return index
    }

    /// Frees the subject if it is back at its kind's default, holds nothing
    /// and is not pinned (SPEC §4: it is then the same as one never seen).
    mutating func releaseSubjectIfIdle(_ index: Int32) {
        let position = Int(index)
        guard subjectRecords[position].isLive, !subjectRecords[position].isPinned,
              subjectRecords[position].held == nil else { return }
        let slot = Int(subjectRecords[position].slot)
        guard subjectRecords[position].value == kinds[slot].defaultValue else { return }
        subjects[slot].indexByName[subjectRecords[position].name] = nil
        subjectRecords.free(position, placeholder: SubjectRecord(name: "", slot: -1, value: .null, isLive: false))
    }

    /// Frees every symbol nothing refers to any more.
    mutating func sweepSymbols() {
        var live = symbols.pinnedMarks()
        func mark(_ value: EventValue) { if let id = value.symbolID { live[Int(id)] = true } }
        func mark(_ held: HeldSlot?) {
            if let held {
                mark(held.atSuspension)
                mark(held.current)
            }
        }
        for slot in kinds.indices {
            mark(kinds[slot].value)
            mark(kinds[slot].held)
        }
        for index in 0..<subjectRecords.capacity where subjectRecords[index].isLive {
            mark(subjectRecords[index].value)
            mark(subjectRecords[index].held)
        }
        symbols.sweep(keeping: live)
    }
}
